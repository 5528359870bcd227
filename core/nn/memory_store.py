"""The memory task's comparisons on disk: the plain RNN, the GRU and the LSTM trained one after another at one delay,
hidden size, schedule and seed (a Comparison), written as a JSON file and a weights file per cell, read back without
training (safetensors: never unpickled).

Two writers use this one format. `python -m core gates` ships the defaults' comparison in assets/ (gates_run.json
and gates_{rnn,gru,lstm}.safetensors), with the delay sweep the lab's second chart draws; and the Memory and gates
lab's live runs write the same files into their folder in the run store (core.runs.tasks), reporting each
measurement as a Progress line on the way, so the page follows a live comparison like a language model's run.
"""
from __future__ import annotations

import json
import math
import threading
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Callable, ClassVar

import torch
from safetensors.torch import load as load_tensors, save as save_tensors

from core.assets import ASSETS
from core.tail import JsonLines
from core.nn.memory import MemoryNet, Plan, Trained, train
from core.nn import said

COMMAND = "python -m core gates"
BAKED = "gates_run.json"
CELL_KINDS = ("rnn", "gru", "lstm")
FORMAT = "rnnlab-gates/2"
SWEEP_DELAYS = (5, 10, 15, 20, 30, 40, 60, 100)   # the stored sweep: each cell trained at each delay ...
SWEEP_SEEDS = (0, 1, 2)                            # ... with each seed, the defaults otherwise
PROGRESS = "progress.jsonl"


def weights_file(kind: str) -> str:
    return f"gates_{kind}.safetensors"


@dataclass(frozen=True)
class Comparison:
    """One comparison: the three cells trained in CELL_KINDS' order on one delay, at one hidden size, number of
    training steps and seed, each gated cell starting from its own gate bias (the LSTM's forget gate, the GRU's
    update gate; a larger one starts by keeping more). A run the job manager trains like a language model's."""
    delay: int = Plan.delay             # the defaults are a Plan's
    hidden: int = Plan.hidden
    steps: int = Plan.steps
    lstm_bias: float = Plan.gate_bias
    gru_bias: float = Plan.gate_bias
    seed: int = Plan.seed
    TASK: ClassVar[str] = "memory"      # its kind of run (core.runs.tasks)
    device: ClassVar[str] = "cpu"       # these small cells train on one CPU thread

    def __post_init__(self):
        self.plans()                    # every value checked by the plans' own checks

    def plans(self) -> dict[str, Plan]:
        bias = {"lstm": self.lstm_bias, "gru": self.gru_bias}
        return {kind: Plan(kind=kind, delay=self.delay, hidden=self.hidden, steps=self.steps,
                           gate_bias=bias.get(kind, Plan.gate_bias), seed=self.seed) for kind in CELL_KINDS}

    @property
    def total_steps(self) -> int:
        return self.steps * len(CELL_KINDS)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data) -> "Comparison":
        names = {f.name for f in fields(cls)}
        if not isinstance(data, dict) or not set(data) <= names:
            raise ValueError(f"A memory comparison's settings are {', '.join(sorted(names))}.")
        return cls(**data)


@dataclass
class Progress:
    """What a live comparison reports after each accuracy measurement."""
    step: int                           # training steps done, the cells together
    total_steps: int
    elapsed: float
    eta: float                          # seconds left (NaN before the first measurement after a step)
    cell: str                           # the cell training now
    curves: dict = field(default_factory=dict)   # cell -> [[step, held-out accuracy], ...] so far

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data) -> "Progress":
        if not isinstance(data, dict):
            raise ValueError("a progress report is not an object")
        p = cls(**{f.name: data[f.name] for f in fields(cls)})
        p.curves = {str(k): [[int(s), float(a)] for s, a in v] for k, v in p.curves.items()}
        return p


class ProgressWriter:
    """Appends a comparison's reports to its folder's progress file, one JSON line each."""

    def __init__(self, folder: Path):
        self.path = Path(folder) / PROGRESS

    def write(self, progress: Progress) -> None:
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"m": progress.to_dict()}) + "\n")


class ProgressReader:
    """Reads the progress file as it grows: read() returns the latest new report, or None when none came."""

    def __init__(self, folder: Path):
        self.lines, self.latest = JsonLines(Path(folder) / PROGRESS), None

    def read(self) -> Progress | None:
        new = None
        for entry in self.lines.new():
            try:
                new = Progress.from_dict(entry["m"])
            except (KeyError, TypeError, ValueError):
                continue           # a damaged line, or a language model's
        if new is not None:
            self.latest = new
        return new


@dataclass
class Stored:
    """One cell's stored run: its plan, accuracy curve, seconds, parameter count and trained network."""
    plan: Plan
    steps: list[int]
    accuracy: list[float]
    seconds: float
    parameters: int
    net: MemoryNet

    @property
    def final(self) -> float:
        return self.accuracy[-1]


@dataclass
class Saved:
    """A comparison read back: its settings, the cells it trained (all three unless it was stopped), how it ended,
    and the stored delay sweep (cell -> {delay: [final accuracy by seed]}; the shipped run only)."""
    comparison: Comparison
    cells: dict[str, Stored]
    status: str = "finished"            # finished | stopped
    message: str = ""
    delays: dict = field(default_factory=dict)


def train_comparison(comparison: Comparison, out: str | Path, stop: threading.Event | None = None,
                     on_progress: Callable[[Progress], None] | None = None) -> Saved | None:
    """Train the comparison's cells one after another into out (the JSON and the weights), reporting each
    measurement. A set stop ends the cell training then, keeps what it learnt, and trains no further cell. None
    when stopped before the first step (nothing learnt, nothing written)."""
    started, runs = time.perf_counter(), {}

    def report(kind: str):
        def on(run: Trained) -> None:
            done = sum(r.steps[-1] for r in runs.values()) + run.steps[-1]
            elapsed = time.perf_counter() - started
            left = comparison.total_steps - done
            curves = {k: list(map(list, zip(r.steps, r.accuracy))) for k, r in {**runs, kind: run}.items()}
            on_progress(Progress(done, comparison.total_steps, elapsed,
                                 elapsed / done * left if done else math.nan, kind, curves))
        return on

    for kind, plan in comparison.plans().items():
        if stop is not None and stop.is_set():
            break
        run = train(plan, report(kind) if on_progress else None, stop)
        if run.steps[-1] == 0:            # stopped before its first step
            break
        runs[kind] = run
    if not runs:
        return None
    stopped = len(runs) < len(CELL_KINDS) or any(r.stopped for r in runs.values())
    message = said.say("memory_stopped", steps=sum(r.steps[-1] for r in runs.values()),
                       total=comparison.total_steps) if stopped else ""
    write(out, comparison, runs, "stopped" if stopped else "finished", message)
    return load(out)


def write(out: str | Path, comparison: Comparison, runs: dict[str, Trained], status: str = "finished",
          message: str = "", delays: dict | None = None) -> dict:
    """The comparison's JSON and each cell's weights into out; returns the JSON written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    meta = {"format": FORMAT, "command": COMMAND, "torch_version": torch.__version__,
            "made": time.strftime("%Y-%m-%d", time.gmtime()), "comparison": comparison.to_dict(),
            "status": status, "message": message, "delays": delays or {},
            "cells": {kind: {"plan": asdict(r.plan), "steps": r.steps, "accuracy": r.accuracy,
                             "seconds": round(r.seconds, 2), "parameters": r.net.parameter_count()}
                      for kind, r in runs.items()}}
    for kind, r in runs.items():
        (out / weights_file(kind)).write_bytes(save_tensors({k: v.contiguous() for k, v in r.net.state_dict().items()}))
    (out / BAKED).write_text(json.dumps(meta, indent=1))
    return meta


def sweep(base: Comparison = Comparison(), delays=SWEEP_DELAYS, seeds=SWEEP_SEEDS, known: dict | None = None) -> dict:
    """Each cell's final held-out accuracy trained at each delay with each seed, the base comparison's settings
    otherwise (cell -> {delay: [accuracy by seed]}); known: the runs at the base's own delay and seed, trained."""
    out: dict[str, dict[int, list[float]]] = {kind: {} for kind in CELL_KINDS}
    for delay in delays:
        for seed in seeds:
            for kind, plan in Comparison(**{**base.to_dict(), "delay": delay, "seed": seed}).plans().items():
                done = (known or {}).get(kind) if (delay, seed) == (base.delay, base.seed) else None
                out[kind].setdefault(delay, []).append((done or train(plan)).final)
    return out


def bake(out: str | Path = ASSETS, comparison: Comparison = Comparison(), delays=SWEEP_DELAYS) -> dict:
    """The shipped run: the comparison trained, and the delay sweep around it, written into out."""
    runs = {kind: train(plan) for kind, plan in comparison.plans().items()}
    return write(out, comparison, runs, delays=sweep(comparison, delays, known=runs) if delays else {})


def load(folder: str | Path = ASSETS) -> Saved:
    """A comparison written by write(), read back. ValueError saying how to rebuild the shipped one."""
    folder = Path(folder)
    how = f"Rebuild it with: {COMMAND} (a few minutes on a CPU, no corpus needed)."
    try:
        meta = json.loads((folder / BAKED).read_text())
        if meta.get("format") != FORMAT:
            raise ValueError(f"format {meta.get('format')!r}")
        cells = {}
        for kind, c in meta["cells"].items():
            plan = Plan(**c["plan"])
            net = MemoryNet(plan.kind, plan.hidden)
            net.load_state_dict(load_tensors((folder / weights_file(kind)).read_bytes()))
            cells[kind] = Stored(plan, [int(s) for s in c["steps"]], [float(a) for a in c["accuracy"]],
                                 float(c["seconds"]), int(c["parameters"]), net.eval())
        delays = {kind: {int(d): [float(a) for a in by_seed] for d, by_seed in v.items()}
                  for kind, v in meta["delays"].items()}
        return Saved(Comparison.from_dict(meta["comparison"]), cells, str(meta["status"]), str(meta["message"]),
                     delays)
    except FileNotFoundError as exc:
        raise ValueError(f"The memory comparison is missing ({Path(exc.filename).name}). {how}") from None
    except (OSError, KeyError, TypeError, ValueError, RuntimeError) as exc:
        raise ValueError(f"The memory comparison in {folder.name} cannot be read ({str(exc)[:120]}). {how}") from None


def main(argv: list[str] | None = None) -> int:
    import argparse
    parser = argparse.ArgumentParser(prog=COMMAND, description="Rebuild the memory task's stored comparison in "
                                     "assets/ (the RNN, the GRU and the LSTM at the defaults, and the delay sweep).")
    parser.add_argument("--out", default=str(ASSETS), help=f"folder for {BAKED} and the weights")
    args = parser.parse_args(argv)
    meta = bake(args.out)
    for kind, c in meta["cells"].items():
        print(f"{kind}: {100 * c['accuracy'][-1]:.1f}% right after {c['steps'][-1]} steps, {c['seconds']} s, "
              f"{c['parameters']:,} parameters; by delay: " +
              ", ".join(f"{d}: {'/'.join(f'{100 * a:.0f}' for a in by_seed)}%"
                        for d, by_seed in meta["delays"][kind].items()))
    print(f"wrote {BAKED} and the weights to {args.out}")
    return 0
