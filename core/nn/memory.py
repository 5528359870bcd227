"""A memory task for recurrent cells, with one knob, the delay D: read one symbol out of SYMBOLS, then D
distracting tokens, then a cue; answer the first symbol. Chance is 1 in SYMBOLS. A plain RNN has to carry the
symbol through D multiplications by W_hh and tanh's slopes (Gradient flow's rho^k); an LSTM's memory cell and a
GRU's kept state carry it through gates that can stay near 1 (v1.0's 10.1 and 10.2).

The networks are the project's own cells (core.nn.gated) between an embedding and a readout, at one hidden size,
trained by Adam with clipping; everything is seeded, so a run repeats itself exactly on one machine and thread
count. What the lab measures of a trained (or untrained) network: its accuracy on held-out sequences, each step's
gradient of the loss with respect to its input, and each gate's mean over the sequence.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch
from torch import nn

from core.checks import check_choice, check_int, check_real
from core.nn.device import cpu_threads
from core.nn.gated import KINDS, GatedCell

SYMBOLS = 4                    # what is to be remembered: chance is 1 in 4
DISTRACTORS = 4                # the tokens that fill the delay
CUE = SYMBOLS + DISTRACTORS    # the token that asks for the answer
VOCAB = CUE + 1
EMBED = 8
MAX_DELAY = 200
CHANCE = 1.0 / SYMBOLS
HELD_OUT_SEED = 99             # the held-out sequences every accuracy is measured on


def sequences(delay: int, size: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """size sequences (size, delay + 2): a symbol, delay distractors, the cue; and the symbols to answer."""
    delay = check_int("delay", delay, 0, MAX_DELAY)
    size = check_int("sequences", size, 1)
    symbol = torch.randint(SYMBOLS, (size,), generator=generator)
    filler = torch.randint(SYMBOLS, CUE, (size, delay), generator=generator)
    cue = torch.full((size, 1), CUE, dtype=torch.long)
    return torch.cat([symbol[:, None], filler, cue], dim=1), symbol


class MemoryNet(nn.Module):
    """Embedding, one recurrent cell, a readout of the last step's state into the SYMBOLS answers."""

    def __init__(self, kind: str, hidden: int):
        super().__init__()
        self.kind = check_choice("cell", kind, KINDS)
        self.embedding = nn.Embedding(VOCAB, EMBED)
        self.cell = GatedCell(kind, EMBED, check_int("hidden size", hidden, 1, 512))
        self.readout = nn.Linear(hidden, SYMBOLS)

    def parameter_count(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def forward(self, tokens: torch.Tensor, gates: bool = False):
        x = self.embedding(tokens)
        if gates:
            out, _, kept = self.cell(x, gates=True)
            return self.readout(out[:, -1]), kept
        out, _ = self.cell(x)
        return self.readout(out[:, -1])


@dataclass(frozen=True)
class Plan:
    """One training run of the task: the cell, the delay, the sizes and the schedule, and the gate biases it
    starts from (LSTM: the forget gate's; GRU: the update gate's; a larger one starts by keeping more)."""
    kind: str = "lstm"
    delay: int = 40
    hidden: int = 32
    steps: int = 300
    batch: int = 64
    lr: float = 1e-2
    gate_bias: float = 3.0
    seed: int = 0
    every: int = 50            # training steps between two accuracy measurements (each costs about 5 steps)

    def __post_init__(self):
        check_choice("cell", self.kind, KINDS)
        check_int("delay", self.delay, 0, MAX_DELAY)
        check_int("hidden size", self.hidden, 1, 512)
        check_int("training steps", self.steps, 1, 100_000)
        check_int("batch size", self.batch, 1, 4096)
        check_real("learning rate", self.lr, 1e-6, 10.0)
        check_real("gate bias", self.gate_bias, -20.0, 20.0)
        check_int("steps between measurements", self.every, 1)


@dataclass
class Trained:
    plan: Plan
    net: MemoryNet
    steps: list[int] = field(default_factory=list)         # when accuracy was measured (0: untrained)
    accuracy: list[float] = field(default_factory=list)    # held-out accuracy then
    seconds: float = 0.0
    stopped: bool = False

    @property
    def final(self) -> float:
        return self.accuracy[-1]


def build(plan: Plan) -> MemoryNet:
    """The plan's network, initialised from its seed, its gate bias set (the plain RNN has no gate)."""
    torch.manual_seed(plan.seed)
    net = MemoryNet(plan.kind, plan.hidden)
    gate = {"lstm": "f", "gru": "z"}.get(plan.kind)
    if gate is not None:
        with torch.no_grad():
            net.cell.gate_bias(gate).fill_(plan.gate_bias)    # bias_hh's part stays as drawn: they add
    return net


def accuracy(net: MemoryNet, delay: int, size: int = 1000) -> float:
    """The share of held-out sequences (always the same ones for a delay) whose symbol the network answers."""
    tokens, symbols = sequences(delay, size, torch.Generator().manual_seed(HELD_OUT_SEED))
    with torch.no_grad():
        return float((net(tokens).argmax(dim=1) == symbols).float().mean())


def train(plan: Plan, on_progress: Callable[[Trained], None] | None = None,
          stop: threading.Event | None = None) -> Trained:
    """Train the plan's network; measure held-out accuracy every plan.every steps (and untrained); a set stop
    ends the run before its next step, keeping (and measuring) what it learnt. On one CPU thread: the matrices
    are small (a second thread only costs here), and the run repeats itself to the last digit on any machine's
    core count."""
    with cpu_threads(1):
        return _train(plan, on_progress, stop)


def _train(plan: Plan, on_progress, stop) -> Trained:
    net = build(plan)
    order = torch.Generator().manual_seed(plan.seed)
    opt = torch.optim.Adam(net.parameters(), lr=plan.lr)
    run = Trained(plan, net, [0], [accuracy(net, plan.delay)])
    started, done = time.perf_counter(), 0
    while done < plan.steps and not (stop is not None and stop.is_set()):
        tokens, symbols = sequences(plan.delay, plan.batch, order)
        loss = nn.functional.cross_entropy(net(tokens), symbols)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
        done += 1
        if done % plan.every == 0 or done == plan.steps:
            _measure(run, done, started, on_progress)
    run.stopped = done < plan.steps
    if run.steps[-1] != done:          # stopped between two measurements: what it learnt is measured too
        _measure(run, done, started, on_progress)
    return run


def _measure(run: Trained, step: int, started: float, on_progress) -> None:
    run.steps.append(step)
    run.accuracy.append(accuracy(run.net, run.plan.delay))
    run.seconds = time.perf_counter() - started
    if on_progress is not None:
        on_progress(run)


def input_gradients(net: MemoryNet, delay: int, size: int = 256) -> np.ndarray:
    """Each step's ||dL/dx_t||, the gradient of the loss with respect to that step's embedded input, averaged over
    held-out sequences, by autograd: how much the answer still depends on what came in t steps before the cue."""
    tokens, symbols = sequences(delay, size, torch.Generator().manual_seed(HELD_OUT_SEED + 1))
    x = net.embedding(tokens).detach().requires_grad_()
    out, _ = net.cell(x)
    nn.functional.cross_entropy(net.readout(out[:, -1]), symbols).backward()
    return x.grad.norm(dim=2).mean(dim=0).numpy()


def gate_means(net: MemoryNet, delay: int, size: int = 256) -> dict[str, float]:
    """Each gate's mean value over held-out sequences and their steps (none for the plain RNN)."""
    tokens, _ = sequences(delay, size, torch.Generator().manual_seed(HELD_OUT_SEED + 2))
    with torch.no_grad():
        _, kept = net(tokens, gates=True)
    return {name: kept.mean(name) for name in kept.values}


__all__ = ["CHANCE", "CUE", "DISTRACTORS", "EMBED", "MAX_DELAY", "MemoryNet", "Plan", "SYMBOLS",
           "Trained", "VOCAB", "accuracy", "build", "gate_means", "input_gradients", "sequences", "train"]
