"""What a run is, as data: its status, one row of its history per epoch, a progress report and the record of a
finished run. No torch and no training loop here, so reading a stored run (core.runs.store) stays cheap.

Every type converts to and from plain JSON data (to_dict / from_dict), which is how the run store, the worker's
progress file and run.json hold them; from_dict names what is wrong with damaged data in a ValueError.
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum

from core.i18n import N_, _

# Each status as a learner reads it (the status itself stays data: it is its own text in JSON)
STATUS_WORDS = {"queued": N_("queued"), "starting": N_("starting"), "running": N_("running"),
                "finished": N_("finished"), "stopped": N_("stopped"), "diverged": N_("diverged"),
                "time limit": N_("time limit"), "error": N_("error")}


def status_word(status) -> str:
    """A run's status in the language in force (an unknown one as it is)."""
    return _(STATUS_WORDS.get(str(status), str(status)))


class Status(StrEnum):
    """Where a run stands. A StrEnum: it is its own text in JSON, and compares equal to it."""

    QUEUED = "queued"          # waiting for a training slot
    STARTING = "starting"      # handed to its trainer, no report yet
    RUNNING = "running"
    FINISHED = "finished"      # every epoch done
    STOPPED = "stopped"        # by the learner, by nobody watching, or cancelled while queued
    DIVERGED = "diverged"      # a NaN or exploding loss; the last good weights are kept
    TIME_LIMIT = "time limit"
    ERROR = "error"            # failed; whatever was reported so far is kept

    @property
    def active(self) -> bool:
        """Waiting or training: something a page shows can still change."""
        return self in (Status.QUEUED, Status.STARTING, Status.RUNNING)

    @property
    def training(self) -> bool:
        return self in (Status.STARTING, Status.RUNNING)

    @classmethod
    def parse(cls, value) -> "Status":
        try:
            return cls(value)
        except ValueError:
            raise ValueError(f"unknown run status {str(value)[:40]!r}") from None


def _number(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if value is None:   # JSON has no NaN: written as null by some writers
            return math.nan
        raise ValueError(f"{name} is not a number")
    return float(value)


def _from_fields(cls, data, what: str):
    """cls built from the known keys of a dict (unknown keys are ignored, missing ones take their defaults);
    ValueError naming what is wrong."""
    if not isinstance(data, dict):
        raise ValueError(f"{what} is not an object")
    known = {f.name: f for f in fields(cls)}
    values = {}
    for name, value in data.items():
        f = known.get(name)
        if f is None:
            continue
        if f.type in ("int", int):
            values[name] = int(_number(f"{what}'s {name}", value))
        elif f.type in ("float", float):
            values[name] = _number(f"{what}'s {name}", value)
        elif f.type in ("str", str):
            values[name] = str(value)
        else:
            values[name] = value
    try:
        return cls(**values)
    except TypeError as exc:
        raise ValueError(f"{what} lacks a field ({exc})") from None


@dataclass
class HistoryRow:
    """One epoch of a run (epoch 0 is before the first step)."""

    epoch: int
    step: int                  # optimisation steps so far
    train_ppl: float           # over the epoch's minibatches (NaN at epoch 0 outside the book split)
    val_ppl: float             # NaN when the validation pass was skipped or stopped
    val_bpb: float             # validation bits per byte
    val_ce: float              # validation cross-entropy, nats per token
    elapsed: float             # seconds since the run started
    tokens_per_s: float
    sample: str = ""           # a sample after the epoch ("" when skipped)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data) -> "HistoryRow":
        return _from_fields(cls, data, "a history row")


def rows_from(data, what: str = "the history") -> list[HistoryRow]:
    if not isinstance(data, list):
        raise ValueError(f"{what} is not a list")
    return [HistoryRow.from_dict(row) for row in data]


@dataclass(frozen=True)
class EpochSample:
    """A sample a run wrote after an epoch."""

    epoch: int
    text: str


@dataclass
class Progress:
    """What a running training reports: after every epoch and every few seconds within one."""

    epoch: int                 # epochs finished (0 before the first)
    epochs: int
    step: int                  # optimisation steps so far
    total_steps: int
    train_ppl: float
    val_ppl: float
    val_bpb: float             # validation bits per byte
    tokens_per_s: float
    elapsed: float
    eta: float                 # seconds left (NaN before the first step)
    device: str
    sample: str = ""
    history: list[HistoryRow] = field(default_factory=list)

    @property
    def samples(self) -> list[EpochSample]:
        """The run's samples so far, one per epoch that wrote one."""
        return [EpochSample(row.epoch, row.sample) for row in self.history if row.sample]

    def to_dict(self, with_history: bool = True) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "history"}
        if with_history:
            d["history"] = [row.to_dict() for row in self.history]
        return d

    @classmethod
    def from_dict(cls, data, history: list[HistoryRow] | None = None) -> "Progress":
        """From a dict; its "history" unless the rows are given."""
        if not isinstance(data, dict):
            raise ValueError("a progress report is not an object")
        p = _from_fields(cls, {k: v for k, v in data.items() if k != "history"}, "a progress report")
        p.history = list(history) if history is not None else rows_from(data.get("history", []))
        return p


@dataclass
class RunRecord:
    """What a finished run is, apart from its weights (a StoredRun in core.runs.store has just this)."""

    config: object             # core.runs.config.TrainConfig
    history: list[HistoryRow]
    status: Status             # finished | stopped | diverged | time limit
    message: str
    elapsed: float
    device: str
    tokens_per_s: float
    best_epoch: int

    @property
    def final(self) -> HistoryRow | None:
        return self.history[-1] if self.history else None


RUN_FORMAT = "rnnlab-run/1"


@dataclass
class RunFile:
    """run.json: a saved run apart from its weights, written and read here only (a saved run, the pretrained
    model's charrnn.json, the chapter's passage_run.json). Its settings and model are kept as the plain data that
    TrainConfig.to_dict and ModelSpec.to_dict make; what a writer adds beyond these fields (the pretrained model's
    held-out scores, the passage run's samples) is `extra`, written at the top level beside them."""

    config: dict               # core.runs.config.TrainConfig.to_dict()
    model: dict                # core.nn.models.ModelSpec.to_dict()
    vocab: dict                # the vocabulary's to_dict()
    status: Status
    message: str
    device: str
    elapsed_s: float
    tokens_per_s: float
    history: list[HistoryRow]
    cleaning: str = "letters"
    best_epoch: int | None = None   # written when the run kept track of it
    format: str = RUN_FORMAT
    rnnlab_version: str = ""
    extra: dict = field(default_factory=dict)

    _ORDER = ("format", "rnnlab_version", "config", "model", "vocab", "cleaning", "status", "message", "device",
              "elapsed_s", "tokens_per_s", "history", "best_epoch")

    def to_dict(self, samples: bool = True) -> dict:
        """As run.json holds it; samples=False leaves the history's samples out (the shipped files keep theirs
        elsewhere, or none)."""
        d = {name: getattr(self, name) for name in self._ORDER}
        d["status"] = str(self.status)
        d["elapsed_s"] = round(self.elapsed_s, 3)
        d["tokens_per_s"] = round(self.tokens_per_s, 1)
        d["history"] = [{k: v for k, v in row.to_dict().items() if samples or k != "sample"} for row in self.history]
        if self.best_epoch is None:
            del d["best_epoch"]
        return {**d, **self.extra}

    def to_json(self, samples: bool = True) -> str:
        return json.dumps(self.to_dict(samples), indent=1)

    @classmethod
    def from_dict(cls, data) -> "RunFile":
        """From run.json's data; ValueError naming what is missing or damaged."""
        if not isinstance(data, dict):
            raise ValueError("run.json does not hold an object")
        for name in ("config", "model", "vocab"):
            if not isinstance(data.get(name), dict):
                raise ValueError(f"run.json lacks its {name!r}: not an RNN Lab run")
        try:
            return cls(data["config"], data["model"], data["vocab"], Status.parse(data.get("status", "finished")),
                       str(data.get("message", "")), str(data.get("device", "")),
                       _number("run.json's elapsed_s", data.get("elapsed_s", 0.0)),
                       _number("run.json's tokens_per_s", data.get("tokens_per_s", 0.0)),
                       rows_from(data.get("history", []), "run.json's history"), str(data.get("cleaning", "letters")),
                       None if data.get("best_epoch") is None else int(_number("best_epoch", data["best_epoch"])),
                       str(data.get("format", RUN_FORMAT)), str(data.get("rnnlab_version", "")),
                       {k: v for k, v in data.items() if k not in cls._ORDER})
        except (TypeError, OverflowError) as exc:
            raise ValueError(f"run.json is damaged ({exc})") from None

    @classmethod
    def from_json(cls, text: str | bytes) -> "RunFile":
        try:
            return cls.from_dict(json.loads(text))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"run.json is not JSON ({type(exc).__name__})") from None
