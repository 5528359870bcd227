"""A training run in its own process: outside the web server's interpreter (so page reruns and training do not
share one Python lock) and at a lower CPU priority (so the server stays responsive).

Protocol (python -m core.worker, started by ui.jobs): the first line on stdin is a JSON request
{"config": {...}, "text": "...", "key": "...", "root": "..." or null}; a later line "stop" asks the run to stop
(so does stdin closing: a server that went away never leaves a run going). On its stdout the worker writes one
JSON line per message: ["progress", {...Progress...}], then ["done", null] once the run is in the store
(core.run_store), or ["error", "message"]. Everything else the process prints goes to stderr.
"""
from __future__ import annotations

import json
import os
import sys
import threading
from dataclasses import asdict


def lower_priority(niceness: int = 10) -> None:
    """Let the web server go first when both want the CPU (no-op where the OS does not allow it)."""
    try:
        os.nice(niceness)
    except (AttributeError, OSError):
        pass


def _watch_for_stop(stream, stop: threading.Event) -> None:
    for line in stream:
        if line.strip() == "stop":
            break
    stop.set()   # "stop", or the server closed the pipe


def run(request: dict, send, stop: threading.Event) -> None:
    """Train the requested run into the store, sending progress; errors are sent, never raised."""
    from pathlib import Path

    from core import run_store
    from core.config import TrainConfig
    from core.dataset import prepare_data
    from core.train import train

    try:
        cfg = TrainConfig.from_dict(request["config"])
        result = train(cfg, data=prepare_data(cfg, request["text"]), stop_event=stop,
                       on_progress=lambda p: send("progress", asdict(p)))
        run_store.save(result, request["key"], Path(request["root"]) if request.get("root") else None)
        send("done", None)
    except ValueError as exc:
        send("error", str(exc))
    except Exception as exc:  # reported on the page; the server itself is untouched
        send("error", f"training failed: {exc!r}")


def main() -> int:
    lower_priority()
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
