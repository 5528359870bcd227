"""Runs of one shape trained together (issue 65): a class pressing Train at once, or a teacher's sweep handed to
a class, trains as one stacked computation instead of one run after another.

The runs of a group share everything but what a learner varies (VARIES: seed, learning rate, clipping, weight decay,
optimizer, schedule, initialisation, the sample's settings; shape_key): the data is prepared once, and each training step computes every run's forward
and backward pass at once, with a leading run dimension over the weights (batched matrix products). Everything
else stays each run's own, exactly as when it trains alone (core.runs.loop.Run): its initial weights, its
minibatch order, its optimizer and schedule, its clipping, its validation, samples, history, progress, Stop and
result. Each run's weights are views into the stacked ones, so its optimizer updates them where the next stacked
step reads them.

A run's numbers do not depend on who trained with it: a run that stops or diverges keeps its place in the stack,
frozen and left out of the loss, so the others compute exactly what they would have computed; and against
training alone (core.nn.fused's hand-differentiated step) they agree to float32 rounding (tests/test_group.py
states the largest difference measured). Groups take the plain tanh RNN over one-hot tokens read in sequence, on
the CPU (groupable: the Tiny and Whole presets' shape); any other run trains alone.
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

import torch
from torch.nn import functional as F

from core.runs.config import TrainConfig
from core.runs.data import Data, batches, prepare_data
from core.runs.loop import SLOW_VALIDATION_S, Run, Stop, TrainResult, diverged, should_stop
from core.runs.record import Status
from core.runs.tasks import LM
from core.nn.device import cpu_threads
from core.nn.models import clip_gradients, detach_state
from core.text.corpus import load_corpus
from core.nn import said

VARIES = ("seed", "lr", "clip", "weight_decay", "optimizer", "lr_decay", "init", "sample_prefix", "sample_length",
          "sample_temperature")
MAX_GROUP = 32


def groupable(config: TrainConfig) -> bool:
    """Whether a run can train in a group: one tanh layer over one-hot tokens, no dropout, on the CPU, in one
    block, without a time limit, reading the text in sequence (split "whole": Tiny, Whole). The chapter's passage
    run and the book's split train alone: the passage run's 60 epochs of SGD at learning rate 2 amplify float32's
    last digits until its held-out perplexity differs by a third, where a run alone repeats the stored one."""
    return (config.cell in ("rnn", "scratch") and config.embed_dim == 0 and config.num_layers == 1
            and config.dropout == 0 and config.device in ("cpu", "auto") and config.blocks == 1
            and not config.max_seconds and config.split == "whole")


def shape_key(config: TrainConfig) -> tuple:
    """What runs of one group share: every setting but those in VARIES."""
    return tuple(sorted((k, v) for k, v in asdict(config).items() if k not in VARIES))


PARAMS = ("weight_ih_l0", "bias_ih_l0", "bias_hh_l0", "weight_hh_l0")


@dataclass
class Stack:
    """The group's weights with a leading run dimension, and each run's parameters made views into them."""
    w_ih: torch.Tensor
    b_ih: torch.Tensor
    b_hh: torch.Tensor
    w_hh: torch.Tensor
    head_w: torch.Tensor
    head_b: torch.Tensor
    params: list = field(default_factory=list)     # per run: its parameters in the order above

    @classmethod
    def of(cls, nets: list) -> "Stack":
        per_run = [[*(getattr(n.rnn, name) for name in PARAMS), n.head.weight, n.head.bias] for n in nets]
        stacked = [torch.stack([p[i].detach() for p in per_run]).requires_grad_() for i in range(6)]
        for r, params in enumerate(per_run):
            for p, s in zip(params, stacked):
                p.data = s.data[r]          # the run's parameter is now its slice of the stack
        return cls(*stacked, params=per_run)

    def tensors(self) -> list[torch.Tensor]:
        return [self.w_ih, self.b_ih, self.b_hh, self.w_hh, self.head_w, self.head_b]

    def losses(self, x: torch.Tensor, y: torch.Tensor, h0: torch.Tensor):
        """Each run's mean cross-entropy (R,) and final state (R, B, H) for its tokens x and targets y (R, B, T)
        from its starting state h0 (R, B, H)."""
        R, B, T = x.shape
        one_hot = F.one_hot(x.transpose(1, 2).reshape(R, T * B), self.w_ih.shape[2]).to(self.w_ih.dtype)
        inputs = torch.baddbmm((self.b_ih + self.b_hh)[:, None, :], one_hot, self.w_ih.transpose(1, 2))
        w_hh_t = self.w_hh.transpose(1, 2)
        h, states = h0, []
        for step in inputs.view(R, T, B, -1).unbind(1):   # unbind: its backward stacks, where slicing would zero
            h = torch.tanh(torch.baddbmm(step, h, w_hh_t))   # a whole buffer for every step
            states.append(h)
        hs = torch.stack(states, 2).reshape(R, B * T, -1)                # (R, B, T, H): targets' order
        logits = torch.baddbmm(self.head_b[:, None, :], hs, self.head_w.transpose(1, 2))
        ce = F.cross_entropy(logits.reshape(R * B * T, -1), y.reshape(-1), reduction="none").view(R, B * T)
        return ce.mean(1), h.detach()


def train_group(configs: list[TrainConfig], text: str | None = None, data: Data | None = None,
                on_progress: list[Callable | None] | None = None, stop_events: list | None = None,
                on_done: list[Callable[[TrainResult], None] | None] | None = None,
                report_every: float = 1.0) -> list[TrainResult]:
    """Train the runs together; each run's on_progress gets its own reports, and on_done its result as soon as
    it ends (a stopped or diverged run before the others). Returns the results in the configs' order."""
    if not configs or len(configs) > MAX_GROUP:
        raise ValueError(f"A group trains 1 to {MAX_GROUP} runs.")
    if not all(isinstance(c, TrainConfig) and groupable(c) for c in configs) or \
            len({shape_key(c) for c in configs}) != 1:
        raise ValueError("The runs of a group must all be plain tanh RNNs over characters of one shape.")
    R = len(configs)
    on_progress, stop_events, on_done = (list(v) if v is not None else [None] * R
                                         for v in (on_progress, stop_events, on_done))
    with cpu_threads(configs[0].threads):
        data = data or prepare_data(configs[0], load_corpus() if text is None else text)
        nets = [c.model(len(data.vocab)) for c in configs]
        stack = Stack.of(nets)
        runs = [Run(c, data, n, torch.device("cpu"), p, report_every, s)
                for c, n, p, s in zip(configs, nets, on_progress, stop_events)]
        return _Group(configs, data, stack, runs, on_done).train()


class _Group:
    def __init__(self, configs, data, stack: Stack, runs: list[Run], on_done):
        self.configs, self.data, self.stack, self.runs, self.on_done = configs, data, stack, runs, on_done
        self.results: list[TrainResult | None] = [None] * len(runs)
        self.stops: list[Stop | None] = [None] * len(runs)

    def train(self) -> list[TrainResult]:
        for run in self.runs:
            start = run.cross_entropy("train")
            run.record(0, start)
            run.report(0, start)
        orders = [torch.Generator().manual_seed(c.seed) for c in self.configs]
        for epoch in range(1, self.configs[0].epochs + 1):
            self.epoch(epoch, orders)
            if all(r is not None for r in self.results):
                break
        for i in self.active():
            self.end(i, None)
        return self.results

    def active(self) -> list[int]:
        return [i for i, r in enumerate(self.results) if r is None and self.stops[i] is None]

    def epoch(self, epoch: int, orders: list) -> None:
        """One pass over the data for every run still going; a run that stops or diverges ends at once."""
        live = self.active()
        sums, counts = [0.0] * len(self.runs), [0] * len(self.runs)
        states: list = [None] * len(self.runs)
        streams = {i: batches(self.data, self.configs[i], orders[i]) for i in live}
        while live:
            got = {i: next(streams[i], None) for i in live}
            if any(b is None for b in got.values()):
                break
            for i in live:
                run = self.runs[i]
                self.stops[i] = should_stop(run.config, run.stop_event, run.started, run.step)
            stepping = [i for i in live if self.stops[i] is None]
            if stepping:
                self.step(stepping, got, states, sums, counts, epoch)
            for i in live:
                if self.stops[i] is not None:
                    self.halt(i, epoch, sums[i], counts[i])
            live = self.active()
        for i in self.active():
            if counts[i]:
                self.runs[i].record(epoch, sums[i] / counts[i])
            self.runs[i].report(epoch, sums[i] / max(1, counts[i]))

    def halt(self, i: int, epoch: int, ce_sum: float, count: int) -> None:
        """End run i now, as a run alone ends when it stops or diverges: this epoch's row (validated unless a Stop
        would wait for a slow validation), then its result."""
        run, stop = self.runs[i], self.stops[i]
        if count:
            quick = stop.status != Status.DIVERGED and run.val_seconds > SLOW_VALIDATION_S
            run.record(epoch, ce_sum / count, validate=not quick)
        self.end(i, stop)

    def step(self, stepping: list[int], got: dict, states: list, sums: list, counts: list, epoch: int) -> None:
        """One training step of every stepping run at once; the others' slices take no part (their tokens are a
        copy of a stepping run's, their losses left out)."""
        R, first = len(self.runs), got[stepping[0]]
        x = torch.stack([got[i][0] if i in stepping else first[0] for i in range(R)])
        y = torch.stack([got[i][1] if i in stepping else first[1] for i in range(R)])
        zeros = torch.zeros(x.shape[1], self.stack.w_hh.shape[1])
        h0 = torch.stack([states[i][0] if i in stepping and states[i] is not None and not got[i][2] else zeros
                          for i in range(R)])
        for t in self.stack.tensors():
            t.grad = None
        losses, final = self.stack.losses(x, y, h0)
        values, mask = losses.detach(), torch.zeros(R)
        for i in stepping:
            run = self.runs[i]
            self.stops[i] = diverged(float(values[i]), run.blowup, run.step)
            if self.stops[i] is None:
                run.good.refresh()
                mask[i] = 1.0
            else:
                run.good.restore()
        if mask.any():
            (losses * mask).sum().backward()
        for i in stepping:
            if self.stops[i] is None:
                self.update(i, got[i][1].numel(), float(values[i]), final, states, sums, counts, epoch)

    def update(self, i: int, n: int, value: float, final, states, sums, counts, epoch: int) -> None:
        """Run i's own clipping and optimizer step on its slice of the stacked gradients, and its bookkeeping."""
        run = self.runs[i]
        for p, s in zip(self.stack.params[i], self.stack.tensors()):
            if p.requires_grad:            # the book's initialisation keeps b_hh at zero: it takes no gradient
                p.grad = s.grad[i]
        norm = clip_gradients(run.params, run.config.clip) if run.config.clip > 0 else 0.0
        if not math.isfinite(norm):
            self.stops[i] = Stop(Status.DIVERGED, said.say("diverged_norm", step=run.step + 1, norm=norm))
            run.good.restore()
            return
        run.opt.step()
        if run.sched is not None:
            run.sched.step()
        run.step += 1
        run.tokens_seen += n
        sums[i] += value * n
        counts[i] += n
        states[i] = detach_state(final[i][None])
        if run.step == 1 or time.perf_counter() - run.last_report >= run.report_every:
            run.report(epoch - 1, sums[i] / counts[i])

    def end(self, i: int, stop: Stop | None) -> None:
        result = self.runs[i].finish(stop, False)
        self.results[i] = result
        if self.on_done[i] is not None:
            self.on_done[i](result)


def together(a, b) -> bool:
    """Whether two waiting runs (core.runs.job.Job) train as one group: language models of one shape on the same
    text, on the CPU (a server with a GPU trains each of its runs there alone)."""
    return (a.kind.name == b.kind.name == LM and a.device == b.device == "cpu" and groupable(a.config)
            and groupable(b.config) and shape_key(a.config) == shape_key(b.config) and a.text == b.text)


def lines(waiting: list) -> list[list]:
    """Waiting runs as they will start, first come first served: each run with the later ones it trains with."""
    waiting, out = list(waiting), []
    while waiting:
        head = waiting.pop(0)
        line = [head] + [j for j in waiting if together(head, j)][:MAX_GROUP - 1]
        waiting = [j for j in waiting if j not in line]
        out.append(line)
    return out


__all__ = ["MAX_GROUP", "groupable", "lines", "shape_key", "together", "train_group"]
