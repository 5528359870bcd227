"""A training run outside the web server: in a process of its own (python -m core.runs.worker, started by
core.runs.launchers) at a lower CPU priority, in a thread of the server, or as a Ray task.

However it runs, a run talks only through its folder in the run store (core.runs.store): it writes its state,
its progress and its result there, and it is asked to stop there (the stop file, which any web process may
write). So every web process follows every run the same way, and a restarted server finds it.

As a process, it reads JSON requests from stdin, one a line, {"config": {...}, "text": "...", "key": "...",
"root": "..." or null} (or a group's, {"group": [{"key", "config"}, ...], ...}: core.runs.group), and trains them one
after another; stdin stays open as a sign of life: when it closes (the server went away), a run in progress stops
and saves what it has learnt as "stopped". Nothing goes to stdout; what the process prints goes to stderr.
"""
from __future__ import annotations

import json
import os
import queue
import sys
import threading
from pathlib import Path

from core.runs.record import Status
from core.nn import said

STOP_POLL_S = 0.2   # how often a run looks for its stop file


def lower_priority(niceness: int = 10) -> None:
    """Let the web server go first when both want the CPU: a higher nice value (no-op where the OS does not allow
    it). At nice 10 a worker gets about a tenth of a core the server also wants, so a class's reruns keep their
    pace, and it is never starved: Linux's idle scheduling class, used before, gave a spare worker no CPU at all
    while a class opened its pages, and the first Train press then waited seconds for its imports (issue 43)."""
    try:
        os.nice(niceness)
    except (AttributeError, OSError):
        pass


def worker_threads(threads: int | None = None) -> int:
    """How many threads a training process uses: all cores but one (RNNLAB_WORKER_THREADS overrides), so the web
    server always has a core for learners' reruns. On a 2-core machine one thread trains these small models about
    as fast as two."""
    return threads or int(os.environ.get("RNNLAB_WORKER_THREADS", "0") or 0) or max(1, (os.cpu_count() or 2) - 1)


def leave_a_core(threads: int | None = None) -> int:
    """Set this process's torch threads to worker_threads(threads); returns the number."""
    import torch
    n = worker_threads(threads)
    torch.set_num_threads(n)
    return n


def _watch_stop_file(key: str, root, stop: threading.Event, done: threading.Event, also=()) -> None:
    """Set stop when the run's stop file appears, or any event in also is set (the server gone), until done."""
    from core.runs import store
    while not done.wait(STOP_POLL_S):
        if store.stop_requested(key, root) or any(e is not None and e.is_set() for e in also):
            stop.set()
            return


def run(request: dict, stop: threading.Event | None = None, server_gone: threading.Event | None = None,
        helpers: bool = True) -> dict:
    """Train the requested run into the store; errors are stored, never raised. A stop comes from the run's stop
    file, or from `stop` (set with `server_gone` when the server that started the process is gone). A stop that
    comes before the first step ends the run at once, with nothing to save. helpers: False keeps the run's batch
    blocks in this process (core.runs.loop.train). Returns the run's final state {"status", "message"}."""
    from core.runs.data import prepare_data
    from core.runs import store
    from core.runs.config import TrainConfig
    from core.runs.loop import train

    if "group" in request:
        return run_group(request, stop, server_gone)
    key, root = request["key"], Path(request["root"]) if request.get("root") else None
    stop = stop or threading.Event()
    done = threading.Event()
    threading.Thread(target=_watch_stop_file, args=(key, root, stop, done, (server_gone,)), daemon=True).start()
    try:
        store.set_state(key, Status.RUNNING, "", root)
        if request.get("task", "lm") != "lm":
            state = _run_other(request, store.run_folder(key, root), stop)
            store.set_state(key, **state, root=root)
            return state
        writer = store.ProgressWriter(key, root)
        cfg = TrainConfig.from_dict(request["config"])
        data = prepare_data(cfg, request["text"])
        if stop.is_set():
            state = {"status": Status.STOPPED, "message": said.say("not_started")}
        else:
            result = train(cfg, data=data, stop_event=stop, on_progress=writer.write, helpers=helpers)
            _say_if_server_went(result, server_gone)
            store.save(result, key, root)
            state = {"status": result.status, "message": result.message}
        store.set_state(key, **state, root=root)
    except Exception as exc:  # reported on the page; the server itself is untouched
        message = str(exc) if isinstance(exc, ValueError) else said.say("failed", why=repr(exc))
        state = {"status": Status.ERROR, "message": message}
        try:
            store.set_state(key, **state, root=root)
        except (OSError, ValueError):
            pass
    finally:
        done.set()
    return state


def _say_if_server_went(result, server_gone: threading.Event | None) -> None:
    """A run stopped because the server that started it went away says so (its result keeps what it learnt)."""
    if server_gone is not None and server_gone.is_set() and result.status == Status.STOPPED:
        result.message = said.say("server_gone", steps=result.final.step)


def run_group(request: dict, stop: threading.Event | None = None, server_gone: threading.Event | None = None) -> dict:
    """Train a group of language-model runs of one shape together (core.runs.group), each into its own folder of
    the store, as run() trains one: its state, its progress, its Stop (its own stop file, or the server going
    away), its saved result the moment it ends. Errors are stored in every member that has not ended."""
    from core.runs import store
    from core.runs.config import TrainConfig
    from core.runs.data import prepare_data
    from core.runs.group import train_group

    root = Path(request["root"]) if request.get("root") else None
    members = request["group"]
    keys = [m["key"] for m in members]
    stop = stop or threading.Event()
    stops, done, ended = [threading.Event() for _ in keys], threading.Event(), set()
    for key, own in zip(keys, stops):
        threading.Thread(target=_watch_stop_file, args=(key, root, own, done, (stop, server_gone)),
                         daemon=True).start()

    def saved(i: int):
        def on(result) -> None:
            _say_if_server_went(result, server_gone)
            store.save(result, keys[i], root)
            store.set_state(keys[i], result.status, result.message, root)
            ended.add(i)
        return on
    try:
        for key in keys:
            store.set_state(key, Status.RUNNING, "", root)
        configs = [TrainConfig.from_dict(m["config"]) for m in members]
        data = prepare_data(configs[0], request["text"])
        train_group(configs, data=data, on_progress=[store.ProgressWriter(k, root).write for k in keys],
                    stop_events=stops, on_done=[saved(i) for i in range(len(keys))])
        state = {"status": Status.FINISHED, "message": said.say("together", n=len(keys))}
    except Exception as exc:  # reported on each page; the server itself is untouched
        message = str(exc) if isinstance(exc, ValueError) else said.say("failed", why=repr(exc))
        state = {"status": Status.ERROR, "message": message}
        for i, key in enumerate(keys):
            if i not in ended:
                try:
                    store.set_state(key, Status.ERROR, message, root)
                except (OSError, ValueError):
                    pass
    finally:
        done.set()
    return state


def _run_other(request: dict, folder: Path, stop: threading.Event) -> dict:
    """A run of another kind than a language model (core.runs.tasks): the memory task's comparison, trained into
    its folder in the same format as the shipped one. Returns its final state."""
    from core.nn import memory_store
    from core.runs import tasks
    tasks.named(request["task"])   # a kind this worker knows, else ValueError
    comparison = memory_store.Comparison.from_dict(request["config"])
    saved = memory_store.train_comparison(comparison, folder, stop, memory_store.ProgressWriter(folder).write)
    if saved is None:
        return {"status": Status.STOPPED, "message": said.say("not_started")}
    return {"status": Status.parse(saved.status), "message": saved.message}


def train_into_store(request: dict) -> dict:
    """A whole run as a Ray task: at a lower priority, everything through the store. Returns the final state.
    A Ray worker process runs Ray's own threads: the run computes its batch blocks there without forking helpers."""
    lower_priority()
    return run(request, helpers=False)


def _end_if_orphaned(server: int, asked: threading.Event, every_s: float = 0.2) -> None:
    """A spare worker whose server has gone ends at once, even in the middle of its slow imports (it read no
    request, so nothing is lost); once a request came, a closed stdin stops the run instead, keeping what it
    learnt (_read_requests)."""
    while not asked.wait(every_s):
        if os.getppid() != server:
            os._exit(0)


def main() -> int:
    """A worker process: its imports first, then the requests the server writes on stdin, one line each, trained one
    after another (the server hands a worker whose run ended back to its pool: the next run skips Python's start
    and torch's import). stdin closing means the server has gone: a run in progress stops and keeps what it
    learnt, and the process ends."""
    asked = threading.Event()
    threading.Thread(target=_end_if_orphaned, args=(os.getppid(), asked), daemon=True).start()
    lower_priority()
    leave_a_core()
    sys.stdout = sys.stderr   # nothing of this process belongs on stdout
    import core.runs.data       # noqa: F401  the slow imports first: a warm worker has them done before its request
    import core.runs.loop     # noqa: F401
    line = sys.stdin.readline()
    asked.set()
    gone, later = threading.Event(), queue.Queue()
    threading.Thread(target=_read_requests, args=(sys.stdin, later, gone), daemon=True).start()
    while line:               # none: a spare worker whose server has gone, or the server closed the pipe
        try:
            request = json.loads(line)
            request["group"] if "group" in request else request["key"]
        except (json.JSONDecodeError, KeyError, TypeError):
            print("the training process got no request", file=sys.stderr)
            return 2
        run(request, threading.Event(), gone)
        line = None if gone.is_set() else later.get()
    return 0


def _read_requests(stream, later: queue.Queue, gone: threading.Event) -> None:
    """The next requests, as the server writes them; at the end of the stream the server has gone."""
    for line in stream:
        later.put(line)
    gone.set()
    later.put(None)


if __name__ == "__main__":
    sys.exit(main())
