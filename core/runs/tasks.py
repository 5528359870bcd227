"""What a run trains, and how each kind of run is read back. Two kinds share the job manager's slots and queue, the
launchers, the worker processes, Stop and the run store (core.runs.jobs):

- "lm": a language model (a TrainConfig: the Training lab, the chapter's passage run);
- "memory": the memory task's comparison of the RNN, the GRU and the LSTM (core.nn.memory_store.Comparison: the
  Memory and gates lab).

A run's kind is its settings' TASK (a TrainConfig has none: "lm"); its request, its folder's request.json and the
worker name it, and each Task below says how its settings, its progress and its saved result are read.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from core.nn import memory_store
from core.runs import store
from core.runs.config import TrainConfig
from core.runs.record import Status

LM, MEMORY = "lm", "memory"


@dataclass(frozen=True)
class Task:
    name: str
    settings: Callable[[dict], object]          # its settings from their dict (request.json)
    reader: Callable[[Path], object]            # a reader of its progress file: .read() -> a new report or None
    result_file: str                            # the file a saved run has in its folder
    read_result: Callable[[Path], object]       # the saved run, read back (.status, .message)
    check_space: Callable[[object], None]       # ValueError when the store cannot hold it

    def saved(self, folder: Path) -> bool:
        return (Path(folder) / self.result_file).exists()

    def latest(self, folder: Path):
        """The run's latest progress report (None before any)."""
        reader = self.reader(Path(folder))
        reader.read()
        return reader.latest


def _memory_result(folder: Path):
    saved = memory_store.load(folder)
    saved.status = Status.parse(saved.status)
    return saved


TASKS = {
    LM: Task(LM, TrainConfig.from_dict, store.ProgressReader, "run.json", store.StoredRun.read, store.check_space),
    MEMORY: Task(MEMORY, memory_store.Comparison.from_dict, memory_store.ProgressReader, memory_store.BAKED,
                 _memory_result, lambda settings: None),   # a few hundred kB of weights
}


def name_of(settings) -> str:
    """A run's kind from its settings: their TASK, or "lm" for a TrainConfig."""
    return getattr(settings, "TASK", LM)


def of(settings) -> Task:
    return named(name_of(settings))


def named(name: str) -> Task:
    if name not in TASKS:
        raise ValueError(f"There is no kind of run {name!r}; there are {', '.join(TASKS)}.")
    return TASKS[name]


@dataclass
class LiveRun:
    """What the store says of a run of any kind, finished or not (read by any web process)."""

    key: str
    config: object                         # its settings: a TrainConfig, or another kind's
    name: str
    device: str
    created: float
    status: Status
    message: str
    updated: float
    progress: object = None                # the latest report (a language model's with its whole history so far)

    @property
    def active(self) -> bool:
        return self.status.active


def read_live(key: str, root: Path | None = None) -> LiveRun | None:
    """The run with this key as the store has it, or None when there is no such run. ValueError naming the file
    when the run is there but one of its files is damaged."""
    folder = store.run_folder(key, root)
    if not (folder / "request.json").is_file():
        return None
    values, kind = {}, {}
    for name, read in (("request.json", lambda d: (named(kind.setdefault("task", d.get("task", LM)))
                                                    .settings(d["config"]), str(d["name"]),
                                                    str(d["device"]), float(d["created"]))),
                       ("state.json", lambda d: (Status.parse(d["status"]), str(d["message"]), float(d["updated"])))):
        try:
            values[name] = read(store.read_json(folder / name))
        except (OSError, KeyError, TypeError, ValueError, UnicodeDecodeError) as exc:
            raise ValueError(f"The run's {name} in the run store is damaged or missing ({str(exc)[:120]}).") from None
    return LiveRun(key, *values["request.json"], *values["state.json"], named(kind["task"]).latest(folder))
