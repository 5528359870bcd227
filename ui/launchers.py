"""Where a training run executes, one launcher per mode (RNNLAB_TRAIN_IN; ui.jobs picks one):

- process (the default): `python -m core.worker`, a lower-priority process of its own; its reports come back
  over a pipe at once.
- thread: a thread of the web server (the old way; for debugging).
- ray: a Ray task (RNNLAB_RAY_ADDRESS set), asking for a GPU when the run trains on CUDA, so a class's runs
  spread over a Ray cluster. Its reports reach the page through the run store, which every node must see at
  the same path (a shared volume).

Every launcher runs core.worker.run, which writes the run's state, progress and result into the run store, and
relays into the Job through `relay(kind, payload)`: "progress", "samples", "done", "error" or "ended" (a state
and message, for a run that ended with nothing saved). No launcher calls st.*.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

from core import run_store, worker

PROJECT = Path(__file__).resolve().parents[1]   # where `python -m core.worker` is found
Relay = Callable[[str, object], None]


def request_for(job, text: str) -> dict:
    return {"config": job.config.to_dict(), "text": text, "key": job.token, "root": str(run_store.store_root())}


def in_thread(job, text: str, relay: Relay) -> None:
    worker.run(request_for(job, text), relay, job.stop_event)


def in_process(job, text: str, relay: Relay) -> None:
    """Run `python -m core.worker` and relay its reports until it ends (it ends when the server goes away)."""
    proc = subprocess.Popen([sys.executable, "-m", "core.worker"], cwd=PROJECT, text=True, encoding="utf-8",
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    job.process = proc
    try:
        proc.stdin.write(json.dumps(request_for(job, text)) + "\n")
        proc.stdin.flush()
        if job.stop_event.is_set():
            stop_process(job)
        for line in proc.stdout:
            kind, payload = json.loads(line)
            relay(kind, payload)
            if kind in ("done", "error"):
                return
        code = proc.wait()
        message = f"the training process ended without a word (exit code {code}); the curve so far is kept"
        run_store.set_state(job.token, "error", message)
        relay("error", message)
    finally:
        try:
            proc.stdin.close()
            proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()


def stop_process(job) -> None:
    proc = job.process
    if proc is not None and proc.poll() is None:
        try:
            proc.stdin.write("stop\n")
            proc.stdin.flush()
        except (OSError, ValueError):
            pass  # the process has ended or is ending


def follow_store(job, relay: Relay, ended: Callable[[], str | None] = lambda: None, every: float = 0.5,
                 stale_s: float = 600.0) -> None:
    """Relay a run that something else trains (a Ray task, another web process) from its folder in the store
    until its state says it ended. `ended()` returns None while its trainer goes, else why it stopped; a run
    whose trainer stopped without a final state, or that has not moved for stale_s, is marked failed."""
    seen, last_change = None, time.time()
    while True:
        why = ended()   # asked first: a trainer that has ended has written its last state already
        live = run_store.read_live(job.token)
        if live is not None and live.progress is not None and live.progress != seen:
            seen, last_change = live.progress, time.time()
            relay("samples", live.samples)
            relay("progress", live.progress)
        if live is not None and not live.active:
            if live.status != "error" and (run_store.run_folder(job.token) / "run.json").exists():
                relay("done", None)
            else:   # failed, or cancelled before it started
                relay("ended", (live.status, live.message))
            return
        if live is not None and live.status == "queued":   # in another process's queue: no reports yet
            last_change = time.time()
        if why is not None or time.time() - last_change > stale_s:
            message = (why or f"nothing new for {stale_s:g} s: its trainer seems to be gone") + \
                "; the curve so far is kept"
            run_store.set_state(job.token, "error", message)
            relay("error", message)
            return
        time.sleep(every)


# ---- Ray --------------------------------------------------------------------------------------------------------

def ray_address() -> str | None:
    return os.environ.get("RNNLAB_RAY_ADDRESS") or None


def ray_module():
    """Ray, connected: to RNNLAB_RAY_ADDRESS, or to whatever ray.init() the process already made (tests)."""
    try:
        import ray
    except ImportError:
        raise ValueError("RNNLAB_RAY_ADDRESS is set but Ray is not installed: pip install -r requirements-ray.txt"
                         ) from None
    if not ray.is_initialized():
        ray.init(address=ray_address(), runtime_env={"py_modules": [str(PROJECT / "core")]},
                 log_to_driver=False, ignore_reinit_error=True)
    return ray


def ray_gpus() -> int:
    try:
        return int(ray_module().cluster_resources().get("GPU", 0))
    except Exception:   # a cluster that cannot be reached has no GPUs for us; the run itself will say why
        return 0


def in_ray(job, text: str, relay: Relay) -> None:
    """Submit the run as a Ray task (one CPU, and one GPU when it trains on CUDA) and follow it in the store."""
    ray = ray_module()
    task = ray.remote(worker.train_into_store).options(
        num_cpus=1, num_gpus=1 if job.device == "cuda" else 0, max_retries=0)
    ref = task.remote(request_for(job, text))
    job.ray_ref = ref

    def ended() -> str | None:
        ready, _ = ray.wait([ref], timeout=0)
        if not ready:
            return None
        try:
            ray.get(ref)
            return "the Ray task ended without saving the run"
        except Exception as exc:   # the task itself failed (a lost node, a killed worker)
            return f"the Ray task failed ({type(exc).__name__})"

    follow_store(job, relay, ended)


LAUNCHERS = {"process": in_process, "thread": in_thread, "ray": in_ray}
