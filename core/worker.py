"""A training run in its own process: outside the web server's interpreter (so page reruns and training do not
share one Python lock) and at a lower CPU priority (so the server stays responsive).

Protocol (python -m core.worker, started by ui.jobs): the first line on stdin is a JSON request
{"config": {...}, "text": "...", "key": "...", "root": "..." or null}; a later line "stop" asks the run to stop
(so does stdin closing: a server that went away never leaves a run going), and so does the run's stop file in the
store (any web process may ask). On its stdout the worker writes one JSON line per message: ["progress",
{...Progress...}], then ["done", null] once the run is in the store (core.run_store), or ["error", "message"].
Everything else the process prints goes to stderr.

Whatever runs it (this process, or a Ray task: train_into_store), the run also writes its state and progress into
its folder in the run store, so any web process can follow it and a restarted server finds it.
"""
from __future__ import annotations

import json
import os
import sys
import threading
from dataclasses import asdict


def lower_priority(niceness: int = 10) -> None:
    """Let the web server go first when both want the CPU: Linux's idle scheduling class where there is one (the
    run gets only CPU time nothing else wants), and a higher nice value in any case (no-op where the OS does not
    allow it)."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        pass
    try:
        os.nice(niceness)
    except (AttributeError, OSError):
        pass


def leave_a_core(threads: int | None = None) -> int:
    """Train on all cores but one (RNNLAB_WORKER_THREADS overrides), so the web server always has a core for
    learners' reruns. On a 2-core machine one thread trains these small models as fast as two."""
    import torch
    n = threads or int(os.environ.get("RNNLAB_WORKER_THREADS", "0") or 0) or max(1, (os.cpu_count() or 2) - 1)
    torch.set_num_threads(n)
    return n


def _watch_for_stop(stream, stop: threading.Event) -> None:
    for line in stream:
        if line.strip() == "stop":
            break
    stop.set()   # "stop", or the server closed the pipe


def _watch_stop_file(key: str, root, stop: threading.Event, done: threading.Event, every: float = 0.5) -> None:
    from core import run_store
    while not done.wait(every):
        if run_store.stop_requested(key, root):
            stop.set()
            return


def run(request: dict, send, stop: threading.Event) -> dict:
    """Train the requested run into the store, sending progress; errors are sent and stored, never raised.
    Returns the run's final state {"status", "message"}."""
    from pathlib import Path

    from core import run_store
    from core.config import TrainConfig
    from core.dataset import prepare_data
    from core.train import train

    key, root = request["key"], Path(request["root"]) if request.get("root") else None
    done = threading.Event()
    threading.Thread(target=_watch_stop_file, args=(key, root, stop, done), daemon=True).start()
    try:
        run_store.set_state(key, "running", "", root)
        writer = run_store.ProgressWriter(key, root)

        def report(p) -> None:
            writer.write(p)
            send("progress", asdict(p))

        cfg = TrainConfig.from_dict(request["config"])
        result = train(cfg, data=prepare_data(cfg, request["text"]), stop_event=stop, on_progress=report)
        run_store.save(result, key, root)
        state = {"status": result.status, "message": result.message}
        run_store.set_state(key, **state, root=root)
        send("done", None)
    except Exception as exc:  # reported on the page; the server itself is untouched
        message = str(exc) if isinstance(exc, ValueError) else f"training failed: {exc!r}"
        state = {"status": "error", "message": message}
        try:
            run_store.set_state(key, **state, root=root)
        except (OSError, ValueError):
            pass
        send("error", message)
    finally:
        done.set()
    return state


def train_into_store(request: dict) -> dict:
    """A whole run with no pipe to a server (a Ray task): progress and the result go to the run store only, and
    a stop is asked for through the run's stop file. Returns the final state."""
    lower_priority()
    return run(request, lambda kind, payload: None, threading.Event())


def main() -> int:
    lower_priority()
    leave_a_core()
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    sys.stdout = sys.stderr   # stray prints must not break the protocol
    lock = threading.Lock()

    def send(kind: str, payload) -> None:
        with lock:
            protocol.write(json.dumps([kind, payload]) + "\n")
            protocol.flush()

    try:
        request = json.loads(sys.stdin.readline())
    except json.JSONDecodeError:
        send("error", "the training process got no request")
        return 2
    stop = threading.Event()
    threading.Thread(target=_watch_for_stop, args=(sys.stdin, stop), daemon=True).start()
    run(request, send, stop)
    return 0


if __name__ == "__main__":
    sys.exit(main())
