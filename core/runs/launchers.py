"""Where a training run executes, one launcher per mode (RNNLAB_TRAIN_IN; core.runs.jobs picks one):

- process (the default): `python -m core.runs.worker`, a lower-priority process of its own;
- thread: a thread of the web server (for debugging);
- ray: a Ray task (RNNLAB_RAY_ADDRESS set), asking for a GPU when the run trains on CUDA, so a class's runs
  spread over a Ray cluster whose nodes all see the run store at the same path (a shared volume).

A launcher only starts the trainer (core.runs.worker.run) and returns a Trainer, which says when it has ended.
Everything else goes through the run's folder in the store, the one channel for every mode: the trainer writes
its state, progress and result there, and a stop is asked for there (core.runs.store.request_stop). follow()
turns what the store says into messages (Reported, Saved, Ended) for core.runs.jobs. Nothing here calls st.*.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Protocol

from core.runs import store, tasks, worker
from core.runs.record import Progress, Status
from core.nn import said

PROJECT = Path(__file__).resolve().parents[2]   # where `python -m core.runs.worker` is found
FOLLOW_EVERY_S = 0.25                             # how often a followed run's folder is read
FIRST_FOLLOW_S = 0.05                             # ... until its first trained step has been reported
STALE_S = 600.0                                   # a run nothing has written to for this long has lost its trainer


# ---- messages from a followed run --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Reported:
    """A new progress report (with the whole history so far)."""
    progress: Progress


@dataclass(frozen=True)
class Saved:
    """The run ended and is in the store: read it with store.StoredRun.read."""
    status: Status
    message: str


@dataclass(frozen=True)
class Ended:
    """The run ended with nothing saved: failed, or cancelled before it started."""
    status: Status
    message: str


Message = Reported | Saved | Ended


class Trainer(Protocol):
    def ended(self) -> str | None:
        """None while the trainer goes; else why it ended (it may have written its final state just before)."""

    def close(self, reuse: bool = False) -> None:
        """Let the trainer go once its run has ended: reuse, when every run it trained ended in a state of its own
        writing, hands a process back to the pool for the next run; otherwise its pipe is closed (others hold
        nothing)."""


# ---- launchers ---------------------------------------------------------------------------------------------------

def request_for(token: str, config, text: str) -> dict:
    """What the trainer is handed: the kind of run (core.runs.tasks), its settings, its text, its key and store."""
    return {"task": tasks.name_of(config), "config": config.to_dict(), "text": text, "key": token,
            "root": str(store.store_root())}


def request_for_group(tokens: list[str], configs: list, text: str) -> dict:
    """What the trainer of a group is handed (core.runs.group): each member's key and settings, the one text."""
    return {"task": tasks.LM, "group": [{"key": t, "config": c.to_dict()} for t, c in zip(tokens, configs)],
            "text": text, "root": str(store.store_root())}


@dataclass
class ThreadTrainer:
    thread: threading.Thread

    def ended(self) -> str | None:
        return None if self.thread.is_alive() else "the training thread ended without saving the run"

    def close(self, reuse: bool = False) -> None:
        pass


def in_thread(request: dict, device: str) -> ThreadTrainer:
    name = request["key"] if "key" in request else f"group-{request['group'][0]['key']}"
    thread = threading.Thread(target=worker.run, args=(request,), name=f"rnnlab-train-{name}", daemon=True)
    thread.start()
    return ThreadTrainer(thread)


@dataclass
class ProcessTrainer:
    process: subprocess.Popen

    def ended(self) -> str | None:
        code = self.process.poll()
        return None if code is None else f"the training process ended without a word (exit code {code})"

    def close(self, reuse: bool = False) -> None:
        """Hand the process back to the pool for the next run (reuse), or let it go: a closed stdin ends it, and
        stops a run it may still be training."""
        if reuse:
            POOL.give_back(self.process)
        else:
            POOL.discard(self.process)


def _spawn() -> subprocess.Popen:
    """A worker process: it imports torch and the training code at once, then waits for its request on stdin."""
    return subprocess.Popen([sys.executable, "-m", "core.runs.worker"], cwd=PROJECT, text=True, encoding="utf-8",
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)


class WarmPool:
    """Worker processes started ahead of time: a Train press hands its request to one that has already paid
    Python's start and torch's import (1-3 s on a small CPU, far more when busy). A worker whose runs ended comes
    back (give_back) and takes the next request; a replacement starts only for a slot still free, or when a worker
    is let go (discard). The server starts RNNLAB_WARM_WORKERS of them (default 1) with itself (ui.serve), before
    any page opens. The pool grows with demand: it keeps as many spares as runs were taken in the last
    GROW_WINDOW_S seconds, up to the runs the server trains at once (`slots`, set by the job manager; a queued run
    waits for a slot anyway) and at most 4 (an idle worker holds a few hundred MB). An idle worker costs memory
    only; it ends when the server does (its stdin closes, or its parent goes)."""

    GROW_WINDOW_S = 60.0

    def __init__(self, spawn: Callable[[], subprocess.Popen] | None = None, clock: Callable[[], float] = time.monotonic):
        self.lock = threading.Lock()
        self.spare: list[subprocess.Popen] = []
        self.out: dict[subprocess.Popen, int] = {}    # workers training now -> the runs each has been handed
        self.used: dict[subprocess.Popen, int] = {}   # spares handed back -> the runs each has trained
        self.taken_at: list[float] = []   # when runs were taken, for the last GROW_WINDOW_S
        self.slots = 1
        self.spawn, self.clock = spawn or _spawn, clock

    def size(self) -> int:
        """RNNLAB_WARM_WORKERS: the spares kept when nobody trains (0 to 4)."""
        try:
            return max(0, min(4, int(os.environ.get("RNNLAB_WARM_WORKERS", "1"))))
        except ValueError:
            return 1

    def target(self) -> int:
        """Spares to keep now: the base size, or the recent demand when it is higher (within the slots, at most 4)."""
        now = self.clock()
        self.taken_at = [t for t in self.taken_at if now - t < self.GROW_WINDOW_S]
        base = self.size()
        return base if base == 0 else max(base, min(len(self.taken_at), self.slots, 4))

    def _top_up(self) -> None:
        self.spare = [p for p in self.spare if _alive(p)]
        free_slots = max(0, self.slots - sum(1 for p in self.out if _alive(p)))   # the others wait for a worker back
        self.spare += [self.spawn() for _ in range(min(self.target(), free_slots) - len(self.spare))]

    MAX_USES = 50   # runs a worker trains before it is let go (and a fresh one started)

    def take(self) -> subprocess.Popen:
        """A started worker (a spare, else a new one), and the spares topped up behind it for the slots still free
        (a run that finds every slot busy waits for a worker to come back: give_back)."""
        with self.lock:
            self.taken_at.append(self.clock())
            while self.spare:
                proc = self.spare.pop(0)
                if _alive(proc):
                    break
            else:
                proc = self.spawn()
            self.out[proc] = self.used.pop(proc, 0) + 1
            self._top_up()
        return proc

    def give_back(self, proc: subprocess.Popen) -> None:
        """A worker whose runs ended: a spare again, unless it has ended, trained MAX_USES runs, or the pool is
        full."""
        with self.lock:
            uses = self.out.pop(proc, self.MAX_USES)
            if _alive(proc) and uses < self.MAX_USES and len(self.spare) < 4:
                self.spare.insert(0, proc)
                self.used[proc] = uses
                return
        self.discard(proc)

    def discard(self, proc: subprocess.Popen) -> None:
        """Let a worker go (its stdin closed: it ends, a run in progress stopping and keeping what it learnt),
        and top the spares up."""
        with self.lock:
            self.out.pop(proc, None)
            self.used.pop(proc, None)
        try:
            proc.stdin.close()
            proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
        with self.lock:
            self._top_up()

    def fill(self) -> None:
        """Start the spare workers now (the server's start and its job manager call this)."""
        with self.lock:
            self._top_up()


def _alive(proc: subprocess.Popen) -> bool:
    """A worker that can take a request: running, its stdin open."""
    stdin = getattr(proc, "stdin", None)
    return proc.poll() is None and not (stdin is not None and stdin.closed)


POOL = WarmPool()


def mode_from_env() -> str:
    """Where runs train, from the environment: RNNLAB_TRAIN_IN, else ray when RNNLAB_RAY_ADDRESS is set, else
    process."""
    return os.environ.get("RNNLAB_TRAIN_IN") or ("ray" if ray_address() else "process")


def warm_start() -> None:
    """What a web server does when it starts, before any page opens: the spare training workers, when runs train
    in processes of their own."""
    if mode_from_env() == "process":
        POOL.fill()


def in_process(request: dict, device: str) -> ProcessTrainer:
    """Hand the request to a warm `python -m core.runs.worker` (POOL); its stdin stays open as long as the server
    lives."""
    for _ in range(2):   # a worker that ended meanwhile is let go, and a fresh one takes the request
        proc = POOL.take()
        try:
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
            return ProcessTrainer(proc)
        except (OSError, ValueError):
            POOL.discard(proc)
    raise ValueError("no training process could take the run: try again")


@dataclass
class RayTrainer:
    ray: object
    ref: object

    def ended(self) -> str | None:
        ready, _ = self.ray.wait([self.ref], timeout=0)
        if not ready:
            return None
        try:
            self.ray.get(self.ref)
            return "the Ray task ended without saving the run"
        except Exception as exc:   # the task itself failed (a lost node, a killed worker)
            return f"the Ray task failed ({type(exc).__name__})"

    def close(self, reuse: bool = False) -> None:
        pass


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


def in_ray(request: dict, device: str) -> RayTrainer:
    """Submit the run as a Ray task: one CPU, and one GPU when it trains on CUDA."""
    ray = ray_module()
    task = ray.remote(worker.train_into_store).options(num_cpus=1, num_gpus=1 if device == "cuda" else 0,
                                                       max_retries=0)
    return RayTrainer(ray, task.remote(request))


LAUNCHERS: dict[str, Callable[[dict, str], Trainer]] = {"process": in_process, "thread": in_thread, "ray": in_ray}


class Elsewhere:
    """A run trained by something this process cannot see (another web process): it never 'ends' from here."""

    def ended(self) -> str | None:
        return None

    def close(self, reuse: bool = False) -> None:
        pass


# ---- following a run through the store ----------------------------------------------------------------------------

def follow(token: str, trainer: Trainer, on: Callable[[Message], None], every: float = FOLLOW_EVERY_S,
           stale_s: float = STALE_S, task: tasks.Task = tasks.TASKS[tasks.LM]) -> None:
    """Send on() what the run's folder says until the run ends: a Reported for each new report, then one Saved or
    Ended. A run whose trainer ended without a final state, or that has not moved for stale_s, is marked failed.
    task: the kind of run (core.runs.tasks), which says how its reports and its saved result are read."""
    reader, last_change = task.reader(store.run_folder(token)), time.time()
    stepped = False   # read often until the first trained step is in: the learner is waiting for it
    while True:
        why = trainer.ended()   # asked first: a trainer that has ended has written its last state already
        new = reader.read()
        if new is not None:
            last_change, stepped = time.time(), stepped or new.step > 0
            on(Reported(new))
        status, message = store.read_state(token) or (None, "")
        if status is not None and not status.active:
            saved = status != Status.ERROR and task.saved(store.run_folder(token))
            on((Saved if saved else Ended)(status, message))
            return
        if status == Status.QUEUED:   # in another process's queue: no reports yet
            last_change = time.time()
        if why is not None or time.time() - last_change > stale_s:
            message = said.say("curve_kept", message=why or said.say("stale", seconds=f"{stale_s:g}"))
            store.set_state(token, Status.ERROR, message)
            on(Ended(Status.ERROR, message))
            return
        time.sleep(every if stepped or status == Status.QUEUED else min(every, FIRST_FOLLOW_S))


def follow_all(trainer: Trainer, members: list[tuple[str, Callable[[Message], None], tasks.Task]]) -> None:
    """Follow every run a trainer trains together (a group, core.runs.group), each in its own folder, until all
    have ended: (key, on, task) for each."""
    if len(members) == 1:          # a run alone: followed in the thread that started it
        key, on, task = members[0]
        follow(key, trainer, on, task=task)
        return
    threads = [threading.Thread(target=follow, args=(key, trainer, on), kwargs={"task": task}, daemon=True,
                                name=f"rnnlab-follow-{key}") for key, on, task in members]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
