"""A training run as the server keeps it (core.runs.jobs): its settings, where it stands, what it reported, its
store folder's token, and who watches it."""
from __future__ import annotations

import heapq
import math
import secrets
import threading
from dataclasses import dataclass, field
from typing import Callable

from core.runs import store, tasks
from core.runs.config import TrainConfig
from core.runs.launchers import Trainer
from core.runs.record import EpochSample, Progress, Status


@dataclass
class Job:
    id: int
    name: str
    session_id: str                         # who started it (one run per device at a time each)
    config: TrainConfig                     # its settings: a TrainConfig, or another kind's (core.runs.tasks)
    device: str
    status: Status = Status.STARTING
    message: str = ""
    progress: Progress | None = None
    result: store.StoredRun | None = None   # once saved: its numbers; weights are read from its folder on demand
    stop_event: threading.Event = field(default_factory=threading.Event)   # set once a stop was asked for
    token: str = field(default_factory=lambda: secrets.token_urlsafe(9))   # the run's address: ?run=TOKEN
    unwatched_since: float | None = None   # when the last session watching it was first seen gone (None: watched)
    watchers: set = field(default_factory=set)   # sessions that have it open: its starter, tabs opening its address
    followed: bool = False                  # trained by another web process (followed in the store): takes no slot
    thread: threading.Thread | None = None  # the follower
    trainer: Trainer | None = None          # what trains it (launchers): a process, a thread, a Ray task

    group_id: int | None = None             # the first run of the group it trains in (core.runs.group), if any
    group_size: int = 1                     # the runs training in one computation with it, itself included
    text: str | None = None                 # the training text, held only while the run waits in the queue
    on_saved: Callable[[str, store.StoredRun], None] | None = None   # (token, saved run): once, by its follower

    @property
    def kind(self) -> tasks.Task:
        """What kind of run it is (core.runs.tasks): a language model's, or the memory task's comparison."""
        return tasks.of(self.config)

    @property
    def active(self) -> bool:
        """Waiting or training: something the page shows can still change."""
        return self.status.active

    @property
    def training(self) -> bool:
        return self.status.training

    @property
    def stopping(self) -> bool:
        return self.active and self.stop_event.is_set()

    @property
    def samples(self) -> list[EpochSample]:
        """The samples written after each epoch so far."""
        return self.progress.samples if self.progress else []


def queue_eta(going: list, position: int, slots: int) -> float | None:
    """About how many seconds until the run at this place in the queue starts (1: next), from the progress of what
    trains now (one report per slot: their own estimates) and, for each run waiting before it, a run as long as
    those; None when there is nothing to go on."""
    left = [p.eta for p in going if math.isfinite(p.eta)]
    if not left or position == 0:
        return None
    each = sorted(p.elapsed + p.eta for p in going if math.isfinite(p.eta))[len(left) // 2]
    frees = sorted(left) + [0.0] * max(0, slots - len(left))
    heapq.heapify(frees)
    for _ in range(position - 1):
        heapq.heappush(frees, heapq.heappop(frees) + each)
    return heapq.heappop(frees)
