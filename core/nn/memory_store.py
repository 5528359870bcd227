"""The memory task's stored comparison (assets/gates_run.json and a weights file per cell): the plain RNN, the GRU
and the LSTM trained at the default Plan, so a page can open at once with their curves and look inside the trained
cells; read back without training (safetensors: never unpickled), rebuilt by `python -m core gates`."""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from safetensors.torch import load as load_tensors, save as save_tensors

from core.assets import ASSETS
from core.nn.memory import MemoryNet, Plan, Trained, train

COMMAND = "python -m core gates"
BAKED = "gates_run.json"
CELL_KINDS = ("rnn", "gru", "lstm")
FORMAT = "rnnlab-gates/1"


def weights_file(kind: str) -> str:
    return f"gates_{kind}.safetensors"


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


def bake(out: str | Path = ASSETS, plans: dict[str, Plan] | None = None) -> dict:
    """Train each cell at its plan (default: the default Plan of that cell) and write the JSON and the weights
    into out; returns the JSON written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    plans = plans or {kind: Plan(kind=kind) for kind in CELL_KINDS}
    runs: dict[str, Trained] = {kind: train(plan) for kind, plan in plans.items()}
    meta = {"format": FORMAT, "command": COMMAND, "torch_version": torch.__version__,
            "made": time.strftime("%Y-%m-%d", time.gmtime()),
            "cells": {kind: {"plan": asdict(r.plan), "steps": r.steps, "accuracy": r.accuracy,
                             "seconds": round(r.seconds, 2), "parameters": r.net.parameter_count()}
                      for kind, r in runs.items()}}
    for kind, r in runs.items():
        (out / weights_file(kind)).write_bytes(save_tensors({k: v.contiguous() for k, v in r.net.state_dict().items()}))
    (out / BAKED).write_text(json.dumps(meta, indent=1))
    return meta


def load_baked(folder: str | Path = ASSETS) -> dict[str, Stored]:
    """The stored comparison, cell -> Stored. ValueError saying how to rebuild it."""
    folder = Path(folder)
    how = f"Rebuild it with: {COMMAND} (seconds on a CPU, no corpus needed)."
    try:
        meta = json.loads((folder / BAKED).read_text())
        if meta.get("format") != FORMAT:
            raise ValueError(f"format {meta.get('format')!r}")
        out = {}
        for kind, c in meta["cells"].items():
            plan = Plan(**c["plan"])
            net = MemoryNet(plan.kind, plan.hidden)
            net.load_state_dict(load_tensors((folder / weights_file(kind)).read_bytes()))
            out[kind] = Stored(plan, [int(s) for s in c["steps"]], [float(a) for a in c["accuracy"]],
                               float(c["seconds"]), int(c["parameters"]), net.eval())
    except FileNotFoundError as exc:
        raise ValueError(f"The stored memory comparison is missing ({Path(exc.filename).name}). {how}") from None
    except (OSError, KeyError, TypeError, ValueError, RuntimeError) as exc:
        raise ValueError(f"The stored memory comparison in {folder} cannot be read ({exc!r}). {how}") from None
    return out


def main(argv: list[str] | None = None) -> int:
    import argparse
    parser = argparse.ArgumentParser(prog=COMMAND, description="Rebuild the memory task's stored comparison in "
                                                               "assets/ (the RNN, the GRU and the LSTM at the defaults).")
    parser.add_argument("--out", default=str(ASSETS), help=f"folder for {BAKED} and the weights")
    args = parser.parse_args(argv)
    meta = bake(args.out)
    for kind, c in meta["cells"].items():
        print(f"{kind}: {100 * c['accuracy'][-1]:.1f}% right after {c['steps'][-1]} steps, {c['seconds']} s, "
              f"{c['parameters']:,} parameters")
    print(f"wrote {BAKED} and the weights to {args.out}")
    return 0
