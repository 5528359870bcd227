"""Training runs, shared by the whole server process: each trains in its own process (core.runs.worker; the default,
RNNLAB_TRAIN_IN=process), in a thread of the server (RNNLAB_TRAIN_IN=thread) or as a Ray task (RNNLAB_RAY_ADDRESS
set; core.runs.launchers), and every run is a folder in the run store on disk (core.runs.store): the server keeps a
finished run's numbers, not its weights, and any web process can find a run there by its token.

A follower thread per run reads the run's folder (launchers.follow) and moves what it says into its Job; it never
calls st.*. A process-wide limit bounds the runs training at once (RNNLAB_MAX_CPU_RUNS, default 1; RNNLAB_MAX_GPU_RUNS,
default one per GPU); other runs wait in a queue (RNNLAB_MAX_QUEUE per device) and start by themselves, those of one
shape together, as one group in one slot (core.runs.group: a class pressing Train at once).

A run outlives its browser tab: reloading the page, or opening the run's address (?run=TOKEN) in a new tab,
adopts it into the new session, live or finished, also from another web process or after a restart (from the
store). A run nobody has watched for RNNLAB_ABANDON_AFTER_S seconds (default 900) is stopped, keeping everything
it learnt, and a finished run nobody has watched for that long leaves the server's memory (its folder stays,
until the store's cleanup by age and size).
"""
from __future__ import annotations

import itertools
import os
import secrets
import threading
import time
import traceback
from typing import Callable

import torch

from core.runs import group, launchers, store, tasks
from core.runs.config import TrainConfig
from core.runs.job import Job, queue_eta
from core.runs.launchers import Ended, Message, Reported, Saved
from core.runs.record import Progress, Status
from core.nn import said

MODES = tuple(launchers.LAUNCHERS)
REUSE_AFTER = (Status.FINISHED, Status.STOPPED, Status.DIVERGED, Status.TIME_LIMIT)
_ids = itertools.count(1)


class JobManager:
    def __init__(self, max_cpu: int | None = None, max_gpu: int | None = None,
                 session_alive: Callable[[str], bool] | None = None, abandon_after: float | None = None,
                 mode: str | None = None, clock: Callable[[], float] = time.time):
        self.clock = clock   # the wall clock; a test hands in one it moves itself
        self.mode = mode or launchers.mode_from_env()
        if self.mode not in MODES:
            raise ValueError(f"RNNLAB_TRAIN_IN must be one of {', '.join(MODES)}, got {self.mode!r}.")
        # the GPUs runs can train on: this machine's, or the Ray cluster's
        self.gpus = launchers.ray_gpus() if self.mode == "ray" else \
            (torch.cuda.device_count() if torch.cuda.is_available() else 0)
        self.max_cpu = max_cpu if max_cpu is not None else int(os.environ.get("RNNLAB_MAX_CPU_RUNS", "1"))
        self.max_gpu = max_gpu if max_gpu is not None else int(os.environ.get("RNNLAB_MAX_GPU_RUNS", str(self.gpus)))
        self.session_alive = session_alive or (lambda sid: True)
        self.abandon_after = float(os.environ.get("RNNLAB_ABANDON_AFTER_S", "900")) if abandon_after is None \
            else abandon_after
        self.max_queue = int(os.environ.get("RNNLAB_MAX_QUEUE", "20"))
        if self.mode == "process":   # the warm pool grows up to the runs trained at once, never beyond
            launchers.POOL.slots = max(1, self.max_cpu + self.max_gpu)
        self.jobs: dict[int, Job] = {}
        self.queue: list[Job] = []   # runs waiting for a free slot, first come first served
        self.lock = threading.Lock()
        self.cleaned_at = 0.0
        self.watched_at: dict[str, float] = {}   # token -> when this process last marked it watched in the store
        self.clean_store()

    def clean_store(self, every_s: float = 3600.0) -> None:
        """Old runs leave the store by age and total size (limits in the README): when the server starts, then
        at most once an hour, when a run is submitted."""
        if time.time() - self.cleaned_at < every_s:
            return
        self.cleaned_at = time.time()
        with self.lock:
            held = frozenset(j.token for j in self.jobs.values())
        try:
            store.cleanup_from_env(keep=held)
        except (OSError, ValueError):
            pass

    def device_kind(self, config: TrainConfig) -> str:
        """cpu or cuda: where this run will train (on this machine, or on the Ray cluster)."""
        if config.device == "cuda" and self.gpus == 0:
            raise ValueError("device 'cuda' was asked for, but this server has no GPU to train on: choose "
                             "'cpu' or 'auto'.")
        return "cuda" if config.device == "cuda" or (config.device == "auto" and self.gpus > 0) else "cpu"

    def running(self, kind: str) -> int:
        """Training slots this process has taken on the device: each run training alone, and each group of runs
        training together (a run followed from another process trains there, not here)."""
        return len({j.group_id or j.id for j in list(self.jobs.values())
                    if j.training and j.device == kind and not j.followed})

    def _limit(self, kind: str) -> int:
        return self.max_gpu if kind == "cuda" else self.max_cpu

    def submit(self, config, text: str, session_id: str, name: str | None = None,
               on_saved: Callable | None = None) -> Job:
        """Start a run, or queue it when its device's slots are all taken by other learners' runs (it then
        starts by itself, first come first served). ValueError when the learner's own run is still going on
        that device, or when the queue is full. config: a TrainConfig, or another kind of run's settings
        (core.runs.tasks: the memory task's comparison). on_saved(token, run): called once the run is saved, by the
        thread that follows it (never a page drawing): a learner's class keeps the curve then."""
        kind = self.device_kind(config)
        self.clean_store()
        tasks.of(config).check_space(config)
        with self.lock:
            if any(j.active and j.device == kind and j.session_id == session_id for j in self.jobs.values()):
                raise ValueError(f"Your own run on the {kind.upper()} is still going: stop it (or let it finish), "
                                 "then start this one.")
            limit = self._limit(kind)
            if limit < 1:
                raise ValueError(f"This server trains nothing on the {kind.upper()} (its limit is 0).")
            must_wait = self.running(kind) >= limit or any(j.device == kind for j in self.queue)   # no jumping
            waiting = sum(j.device == kind for j in self.queue)
            if must_wait and waiting >= self.max_queue:
                raise ValueError(f"The server is training {limit} model(s) on the {kind.upper()} and "
                                 f"{waiting} more are waiting, its most: try again in a few minutes.")
            job_id = next(_ids)
            job = Job(job_id, name or f"run {job_id}", session_id, config, kind, watchers={session_id},
                      on_saved=on_saved)
            store.create(job.token, config, job.name, kind)   # its folder: found again from any process
            if must_wait:
                job.status, job.text = Status.QUEUED, text
                self.jobs[job_id] = job
                self.queue.append(job)
                return job
            self.jobs[job_id] = job
        self._launch([job], text)
        return job

    def _launch(self, jobs: list[Job], text: str) -> None:
        thread = threading.Thread(target=self._work, args=(jobs, text), name=f"rnnlab-run-{jobs[0].id}", daemon=True)
        for job in jobs:
            job.thread = thread
        thread.start()

    def _work(self, jobs: list[Job], text: str) -> None:
        """Start the run, or the runs that train together (core.runs.group), with this manager's launcher (one
        trainer for all), and follow each run in its own folder of the store until it ends."""
        trainer = None
        try:
            request = launchers.request_for(jobs[0].token, jobs[0].config, text) if len(jobs) == 1 else \
                launchers.request_for_group([j.token for j in jobs], [j.config for j in jobs], text)
            trainer = launchers.LAUNCHERS[self.mode](request, jobs[0].device)
            for job in jobs:
                job.trainer = trainer
            launchers.follow_all(trainer, [(j.token, lambda message, job=j: self._on(job, message), j.kind)
                                           for j in jobs])
        except Exception as exc:  # a failed launch or a bug must not kill the server: report it on each page
            traceback.print_exc()
            for job in jobs:
                if job.active:
                    job.status, job.message = Status.ERROR, said.say("failed", why=exc)
                    try:   # and in the store, so no other process waits for it
                        store.set_state(job.token, job.status, job.message)
                    except (OSError, ValueError):
                        pass
        finally:
            for job in jobs:
                self.unwatched_for(job)
            reuse = trainer is not None and all(j.status in REUSE_AFTER for j in jobs)
            if reuse:                 # a worker whose every run ended in a state of its own trains the next one
                trainer.close(reuse=True)
            self._start_next(jobs[0].device)    # before a worker let go has exited (that may take a while)
            if trainer is not None and not reuse:
                trainer.close()

    def _on(self, job: Job, message: Message) -> None:
        match message:
            case Reported(progress):
                self._on_progress(job, progress)
            case Saved():
                self._finished(job, job.kind.read_result(store.run_folder(job.token)))
            case Ended(status, text):
                job.status, job.message = status, text

    def position(self, job: Job) -> int:
        """1 for the next run (or group of runs) to start on its device, 2 for the one after it, ...; 0 when not
        waiting."""
        with self.lock:
            return next((n for n, line in enumerate(self._lines(job.device), 1) if job in line), 0)

    def companions(self, job: Job) -> int:
        """How many other runs train (or will train, when it waits) in one computation with this one."""
        with self.lock:
            line = next((line for line in self._lines(job.device) if job in line), [job] * job.group_size)
        return len(line) - 1

    def _lines(self, kind: str) -> list[list[Job]]:
        """The queue on a device as it will start: each run with those it trains together with (core.runs.group)."""
        return group.lines([j for j in self.queue if j.device == kind])

    def _start_next(self, kind: str) -> None:
        """A slot on this device may be free: start the first waiting run whose learner is still around, with the
        waiting runs it trains together with (core.runs.group), all in that one slot."""
        while True:
            with self.lock:
                if self.running(kind) >= self._limit(kind):
                    return
                first = next(iter(self._lines(kind)), None)
                if first is None:
                    return
                line = [j for j in first if self._still_wanted(j)]
                for j in first:
                    self.queue.remove(j)
                if not line:
                    continue
                text = line[0].text
                for j in line:
                    j.text, j.status = None, Status.STARTING
                    j.group_id, j.group_size = (line[0].id, len(line)) if len(line) > 1 else (None, 1)
            self._launch(line, text)

    def _still_wanted(self, job: Job) -> bool:
        """A waiting run about to start: cancelled instead when someone stopped it or no one watches it."""
        if (asked := store.stop_requested(job.token)) or self.unwatched_for(job) > self.abandon_after:
            why = "someone stopped it" if asked else "no one was watching"
            job.status, job.message, job.text = Status.STOPPED, f"cancelled before it started: {why}", None
            store.set_state(job.token, job.status, job.message)
            return False
        return True

    def unwatched_for(self, job: Job) -> float:
        """Seconds since the last session watching the run was first seen gone (0 while one still watches)."""
        if any(self.session_alive(sid) for sid in list(job.watchers) or [job.session_id]):
            job.unwatched_since = None
            return 0.0
        if job.unwatched_since is None:
            job.unwatched_since = self.clock()
        return self.clock() - job.unwatched_since

    def _on_progress(self, job: Job, p: Progress) -> None:
        job.status = Status.RUNNING
        job.progress = p
        self._stop_if_abandoned(job)

    def _stop_if_abandoned(self, job: Job) -> None:
        if not job.stop_event.is_set() and self.unwatched_for(job) > self.abandon_after:
            self._request_stop(job)
            job.message = said.say("abandoned", seconds=f"{self.abandon_after:g}")

    def _finished(self, job: Job, result) -> None:
        """The saved run into its Job, then its on_saved, once (a failure there, a class database it cannot write,
        loses nothing of the run)."""
        job.result = result
        job.message = job.message or result.message
        job.status = Status.parse(result.status)
        callback, job.on_saved = job.on_saved, None
        try:
            callback and callback(job.token, result)
        except Exception:   # noqa: BLE001: the run is saved whatever its listener does
            traceback.print_exc()

    def _request_stop(self, job: Job) -> None:
        """Ask the run to stop, through the store: whatever trains it, wherever, looks there."""
        job.stop_event.set()
        try:
            store.request_stop(job.token)
        except (OSError, ValueError):
            pass

    def stop(self, job_id: int) -> None:
        """Stop a run (keeping what it learnt), or take a waiting one out of the queue."""
        job = self.jobs.get(job_id)
        if job is None:
            return
        with self.lock:
            if job in self.queue:
                self.queue.remove(job)
                job.status, job.message, job.text = Status.STOPPED, "cancelled before it started", None
                store.set_state(job.token, job.status, job.message)
                return
        self._request_stop(job)

    def stop_key(self, token: str) -> None:
        """Stop the run with this key wherever it trains or waits (a teacher's Stop): this server's own at once,
        another web process's through the store, where its trainer and its queue look."""
        job = self._by_key(token)
        if job is not None:
            self.stop(job.id)
        elif store.is_key(token):
            store.request_stop(token)

    def _by_key(self, token: str) -> Job | None:
        with self.lock:
            return next((j for j in self.jobs.values() if secrets.compare_digest(j.token, token)), None)

    def for_session(self, session_id: str, kind: str | None = None) -> list[Job]:
        """The session's runs, of one kind of run (core.runs.tasks) when given (pages call this on every rerun, so
        it also drops runs abandoned long enough, and marks the ones still open as watched in the store, where
        every web process's cleanup sees it)."""
        self.forget_abandoned()
        with self.lock:  # other sessions' threads add and drop jobs concurrently
            mine = [j for j in self.jobs.values() if session_id in j.watchers and kind in (None, j.kind.name)]
        for job in mine:
            if time.time() - self.watched_at.get(job.token, 0.0) > 60:
                self.watched_at[job.token] = time.time()
                try:
                    store.touch_watched(job.token)
                except (OSError, ValueError):
                    pass
        return mine

    def adopt(self, token: str, session_id: str) -> Job | None:
        """Let session_id (a reloaded or new tab) watch the run with this token, beside whoever watches it already,
        from this server's memory or else from the run store (a run of another web process, or from before a
        restart); None if there is none, ValueError naming a damaged file of it."""
        if not store.is_key(token):   # not a run's key at all (compare_digest also needs ASCII)
            return None
        if (job := self._by_key(token)) is not None:
            job.watchers.add(session_id)
            job.unwatched_since = None
            return job
        live = tasks.read_live(token)
        return None if live is None else self._from_store(live, session_id)

    def _from_store(self, live: tasks.LiveRun, session_id: str) -> Job:
        if live.status == Status.QUEUED and time.time() - live.updated > self.abandon_after:
            # queues live in a web process's memory: this one's server has stopped since
            live.status, live.message = Status.STOPPED, said.say("queue_gone")
            store.set_state(live.key, live.status, live.message)
        elif live.status == Status.RUNNING and time.time() - store.last_activity(live.key) > launchers.STALE_S:
            live.status = Status.ERROR   # nothing has written to it for long: its trainer is gone
            live.message = said.say("curve_kept", message=said.say("stale", seconds=f"{launchers.STALE_S:g}"))
            store.set_state(live.key, live.status, live.message)
        job = Job(next(_ids), live.name, session_id, live.config, live.device, status=live.status,
                  message=live.message, token=live.key, progress=live.progress, watchers={session_id},
                  followed=live.active)
        if live.active:   # trained elsewhere (another web process, a Ray task): follow it in the store
            job.thread = threading.Thread(target=self._follow, args=(job,), daemon=True)
        else:
            try:
                job.result = job.kind.read_result(store.run_folder(live.key))
            except ValueError:
                job.status = Status.ERROR
                job.message = live.message or said.say("nothing_saved")
        with self.lock:
            self.jobs[job.id] = job
        if job.thread is not None:
            job.thread.start()
        return job

    def _follow(self, job: Job) -> None:
        try:
            launchers.follow(job.token, launchers.Elsewhere(), lambda message: self._on(job, message),
                             task=job.kind)
        except Exception as exc:  # a bug must not kill the server: report it on the page
            job.status, job.message = Status.ERROR, said.say("follow_failed", why=exc)

    def eta(self, job: Job) -> float | None:
        """About how many seconds until a queued run starts (core.runs.job.queue_eta), from what trains now: one
        estimate per slot, a group's from any of its runs."""
        with self.lock:
            going = {j.group_id or j.id: j.progress for j in self.jobs.values()
                     if j.training and j.device == job.device and j.progress}
        return queue_eta(list(going.values()), self.position(job), self._limit(job.device))

    def forget_abandoned(self) -> None:
        """Drop from memory the finished runs nobody has watched for abandon_after seconds (their folders stay
        in the store: the run's address still opens them)."""
        with self.lock:
            done = [j for j in self.jobs.values() if not j.active]
        for job in done:
            if self.unwatched_for(job) > self.abandon_after:
                with self.lock:
                    self.jobs.pop(job.id, None)
                job.result = None

    def forget(self, job_id: int) -> None:
        """Forget a run for good: stopped if it goes, out of memory and out of the store."""
        with self.lock:
            job = self.jobs.pop(job_id, None)
            if job in self.queue:
                self.queue.remove(job)
        if job is not None:
            self._request_stop(job)
            job.result = None  # free the weights
            store.delete(job.token)

