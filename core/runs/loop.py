"""The training loop: one train() used by the Training lab, the command line and the tests.

train() reads as the steps of a run: prepare the data, build the model, then epoch after epoch of
minibatch steps (forward, loss, backward, clip, update), a validation pass and a sample after each epoch.
Progress goes to a callback (no printing, no UI code here); a threading.Event stops a run between steps.
A diverging run ends with the last good weights; a stopped run keeps everything learned.
Settings: core.runs.config. Data: core.runs.data. Saved runs: core.runs.saved. Command line: core.runs.cli.
"""
from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from typing import Callable

import torch

from core.runs.budget import batch_blocks, check_fits, chunk_windows, keep_freed_memory, plan_run, release_freed_memory
from core.runs.config import TrainConfig
from core.runs.record import HistoryRow, Progress, RunRecord, Status
from core.text.corpus import load_corpus
from core.runs.data import Data, batches, book_windows, prepare_data, steps_per_epoch
from core.nn.device import cpu_threads, run_device
from core.nn.interrupt import Interrupted, interruptible
from core.nn.optim import CosineSchedule, PlainAdamW, PlainSGD
from core.nn.models import RNNLM, clip_gradients, detach_state, perplexity, stream_cross_entropy
from core.nn.blocks import Blocks, eligible, run_blocks
from core.nn.sampling import LanguageModel, sample
from core.nn import said

LN2 = math.log(2.0)
SLOW_VALIDATION_S = 2.0   # a Stop skips the last validation pass when the one before took longer than this


@dataclass
class TrainResult(RunRecord):
    lm: LanguageModel

    def zip_bytes(self) -> bytes:
        from core.runs.saved import run_zip
        return run_zip(self)


@dataclass(frozen=True)
class Stop:
    """Why a run ends before its last epoch."""
    status: Status
    message: str


@dataclass
class Best:
    """The epoch with the lowest validation loss so far, and a copy of its weights."""
    val_ce: float
    epoch: int
    weights: dict


def train(config: TrainConfig, text: str | None = None, on_progress: Callable[[Progress], None] | None = None,
          stop_event: threading.Event | None = None, data: Data | None = None,
          report_every: float = 1.0, keep_best: bool = False, helpers: bool = True) -> TrainResult:
    """Train a language model on text (default: The Time Machine) and return it with its history.

    keep_best: end with the weights of the epoch with the lowest validation loss (early stopping).
    helpers: False computes every batch block in this process (a process with threads of its own to protect, such as
    a Ray worker; the same numbers, see core.nn.blocks.run_blocks)."""
    if not isinstance(config, TrainConfig):
        raise ValueError("train needs a TrainConfig.")
    try:
        with run_device(config.device, config.threads) as device:
            if data is None:
                data = prepare_data(config, load_corpus() if text is None else text)
            plan = plan_run(config, len(data.vocab))   # the sizes every step below uses, worked out once
            check_fits(plan, device)
            keep_freed_memory(plan.largest)
            net = config.model(plan.vocab_size, device)
            with (run_blocks(net, device, plan.blocks, plan.block_ids, helpers) as blocks,
                  cpu_threads(1 if blocks else 0)):
                run = Run(config, data, net, device, on_progress, report_every, stop_event, blocks, plan.chunk)
                start_ce = run.cross_entropy("train")
                run.record(0, start_ce)
                run.report(0, start_ce)
                order = torch.Generator().manual_seed(config.seed)   # the order of the minibatches
                stop = None
                for epoch in range(1, config.epochs + 1):
                    stop = run.epoch(epoch, order)
                    if stop is not None:
                        break
                return run.finish(stop, keep_best)
    finally:
        release_freed_memory()


def make_optimizer(params: list, config: TrainConfig, total_steps: int):
    """The optimizer and, with lr_decay 'cosine', its learning-rate schedule (else None)."""
    kind = PlainSGD if config.optimizer == "sgd" else PlainAdamW
    opt = kind(params, config.lr, config.weight_decay)
    return opt, CosineSchedule(opt, max(1, total_steps)) if config.lr_decay == "cosine" else None


def should_stop(config: TrainConfig, stop_event: threading.Event | None, started: float, step: int) -> Stop | None:
    """Stop asked by the learner, or the run's time limit reached."""
    if stop_event is not None and stop_event.is_set():
        return Stop(Status.STOPPED, said.say("stopped_at", step=step))
    if config.max_seconds and time.perf_counter() - started > config.max_seconds:
        return Stop(Status.TIME_LIMIT, said.say("time_limit", seconds=f"{config.max_seconds:g}"))
    return None


def diverged(loss_value: float, blowup: float, step: int) -> Stop | None:
    """A NaN or infinite loss, or one far above a uniform guess (ln V): the weights have blown up, even where
    the stable log-softmax keeps the loss finite."""
    if math.isfinite(loss_value) and loss_value <= blowup:
        return None
    return Stop(Status.DIVERGED, said.say("diverged_loss", step=step + 1, loss=loss_value))


def scoring_path(config: TrainConfig, net: RNNLM, device: torch.device) -> Blocks | RNNLM:
    """What scores windows outside a run with the run's numbers: its batch blocks, in this process alone (the same
    numbers as with their helpers), where the run has them; else the model."""
    blocks = batch_blocks(config)
    return Blocks(net, blocks) if blocks > 1 and eligible(net, device) else net


@torch.inference_mode()
def evaluate(net: RNNLM, data: Data, config: TrainConfig, device: torch.device, streams: int = 16,
             part: str = "val", path: Blocks | RNNLM | None = None, chunk: int = 0) -> float:
    """Mean validation cross-entropy (nats per token). Book split: every window from a zero state, by `path`: the
    run's (its batch blocks with their helpers, or the model; scoring_path outside a run).
    Whole split: the held-out text as `streams` parallel pieces, state carried across each.
    part="train" scores (up to 2,048 of) the book split's training windows instead (the start of a run).
    chunk: the windows a chunk holds (the run's plan; worked out here when 0)."""
    if config.split == "book" and path is None:
        raise ValueError("Scoring the book split's windows needs the run's path (core.runs.loop.scoring_path).")
    net.eval()
    total, count = 0.0, 0
    if config.split == "book":
        n = min(2048, len(data.train_x)) if part == "train" else len(data.val_x)
        chunk = math.ceil(n / math.ceil(n / (chunk or chunk_windows(config, len(data.vocab)))))
        for i in range(0, n, chunk):
            x, y = (t.to(device) for t in book_windows(data, part, slice(i, min(n, i + chunk))))
            total += path.loss_sum(x, y)
            count += y.numel()
    else:
        total, count = stream_cross_entropy(net, data.val_ids, device, streams, chunk=256)
    net.train()
    return total / count


class LastGood:
    """A copy of the weights from the last step whose loss was finite, refreshed in place every step (no new
    tensors: state_dict's tensors share storage with the parameters the optimizer updates)."""

    def __init__(self, net: RNNLM):
        self.net = net
        live = net.state_dict()
        self.names, self.live = list(live), list(live.values())
        self.copies = [v.detach().clone() for v in self.live]

    def refresh(self) -> None:
        torch._foreach_copy_(self.copies, self.live)

    def restore(self) -> None:
        self.net.load_state_dict(dict(zip(self.names, self.copies)))


def snapshot(net: RNNLM) -> dict:
    return {k: v.detach().clone() for k, v in net.state_dict().items()}


class Run:
    """One run in progress: the model and its optimizer, the history so far, the best and last good weights."""

    def __init__(self, config: TrainConfig, data: Data, net: RNNLM, device: torch.device,
                 on_progress: Callable[[Progress], None] | None, report_every: float,
                 stop_event: threading.Event | None = None, blocks: Blocks | None = None, chunk: int = 0):
        self.config, self.data, self.net, self.device = config, data, net, device
        self.path = net if blocks is None else blocks   # what computes a batch's loss: its blocks, or the model
        self.chunk = chunk                              # windows per validation chunk (its plan; 0: evaluate's)
        self.params = [p for p in net.parameters() if p.requires_grad]
        self.total_steps = steps_per_epoch(data, config) * config.epochs
        self.opt, self.sched = make_optimizer(self.params, config, self.total_steps)
        self.lm = LanguageModel(net, data.vocab, config.cleaning, {"config": config.to_dict()})
        self.blowup = max(20.0, 5.0 * math.log(len(data.vocab)))
        self.device_name = str(device) if device.type == "cpu" else f"cuda ({torch.cuda.get_device_name(device)})"
        self.on_progress, self.report_every = on_progress, report_every
        self.history: list[HistoryRow] = []
        self.good = LastGood(net)
        self.best = Best(math.inf, 0, snapshot(net))
        self.step = self.tokens_seen = 0
        self.val_seconds = 0.0
        self.stop_event = stop_event   # checked between steps, and polled inside long ones (core.nn.interrupt)
        self.started = self.last_report = time.perf_counter()
        net.train()

    def epoch(self, epoch: int, order: torch.Generator) -> Stop | None:
        """One pass over the training data; a Stop when the run must end early."""
        ce_sum, ce_count, state, stop = 0.0, 0, None, None
        for x, y, fresh in batches(self.data, self.config, order):
            stop = should_stop(self.config, self.stop_event, self.started, self.step)
            if stop is not None:
                break
            x, y = x.to(self.device, non_blocking=True), y.to(self.device, non_blocking=True)
            loss_value, state, stop = self.train_step(x, y, None if fresh else detach_state(state))
            if stop is not None:
                break
            ce_sum += loss_value * y.numel()
            ce_count += y.numel()
            # the first step is reported at once (the page shows a number within a step of Train), then every
            # report_every seconds
            if self.step == 1 or time.perf_counter() - self.last_report >= self.report_every:
                self.report(epoch - 1, ce_sum / ce_count)
        if ce_count:
            # Stopped by the learner: skip a validation pass that would keep them waiting (slow last time).
            quick = stop is not None and stop.status != Status.DIVERGED and self.val_seconds > SLOW_VALIDATION_S
            self.record(epoch, ce_sum / ce_count, validate=not quick)
        if stop is None:
            self.report(epoch, ce_sum / max(1, ce_count))
        return stop

    def train_step(self, x: torch.Tensor, y: torch.Tensor, state):
        """Forward, loss, backward, clip, update. Returns the loss, the final state and a Stop if it diverged
        (then the weights of the last good step are back in place) or was stopped part-way (then it is
        abandoned before the update: the weights are those of the last finished step)."""
        try:
            with interruptible(self.stop_event):
                loss, state, backward = self.path.training_loss(x, y, state)
                loss_value = float(loss.detach())
                stop = diverged(loss_value, self.blowup, self.step)
                if stop is None:
                    self.good.refresh()
                    self.opt.zero_grad(set_to_none=True)
                    backward()
        except Interrupted:
            self.opt.zero_grad(set_to_none=True)
            return math.nan, None, Stop(Status.STOPPED, said.say("stopped_during", step=self.step + 1))
        if stop is None:
            grad_norm = clip_gradients(self.params, self.config.clip) if self.config.clip > 0 else 0.0
            if not math.isfinite(grad_norm):
                stop = Stop(Status.DIVERGED, said.say("diverged_norm", step=self.step + 1, norm=grad_norm))
        if stop is not None:
            self.good.restore()
            return loss_value, state, stop
        self.opt.step()
        if self.sched is not None:
            self.sched.step()
        self.step += 1
        self.tokens_seen += y.numel()
        return loss_value, state, None

    def sample_text(self) -> str:
        self.net.eval()
        try:
            return sample(self.lm, self.config.sample_prefix, self.config.sample_length,
                          temperature=self.config.sample_temperature, seed=self.config.seed).text
        except ValueError:
            return ""
        finally:
            self.net.train()

    def cross_entropy(self, part: str = "val") -> float:
        """The held-out loss (part "val"), or the training loss before any step (part "train": the book split only,
        NaN otherwise). A Stop arriving during the pass ends it (NaN), except a validation after a Stop: the epoch
        loop has already judged that pass quick enough to run, so it runs to the end."""
        if part == "train" and self.config.split != "book":
            return math.nan
        stopped = part == "val" and self.stop_event is not None and self.stop_event.is_set()
        try:
            with interruptible(None if stopped else self.stop_event):
                return evaluate(self.net, self.data, self.config, self.device, part=part, path=self.path,
                                chunk=self.chunk)
        except Interrupted:  # a Stop during the pass: the row is kept without it
            self.net.train()
            return math.nan

    def record(self, epoch: int, train_ce: float, validate: bool = True) -> None:
        """Validate, sample and add a row to the history (and keep the best weights so far)."""
        t0 = time.perf_counter()
        val_ce = self.cross_entropy() if validate else math.nan
        self.val_seconds = time.perf_counter() - t0 if validate else self.val_seconds
        elapsed = time.perf_counter() - self.started
        self.history.append(HistoryRow(
            epoch=epoch, step=self.step, train_ppl=perplexity(train_ce) if math.isfinite(train_ce) else math.nan,
            val_ppl=perplexity(val_ce), val_bpb=val_ce / LN2 / self.data.bytes_per_token, val_ce=val_ce,
            elapsed=elapsed, tokens_per_s=self.tokens_seen / elapsed if elapsed > 0 and self.tokens_seen else 0.0,
            sample=self.sample_text() if validate else ""))
        if math.isfinite(val_ce) and val_ce < self.best.val_ce:
            self.best = Best(val_ce, epoch, snapshot(self.net))

    def report(self, epoch: int, train_ce: float, final: bool = False, elapsed: float | None = None) -> None:
        self.last_report = time.perf_counter()
        if self.on_progress is None:
            return
        elapsed = self.last_report - self.started if elapsed is None else elapsed
        last = self.history[-1] if self.history else None
        remaining = (self.total_steps - self.step) * (elapsed / self.step) if self.step else math.nan
        self.on_progress(Progress(
            epoch=epoch, epochs=self.config.epochs, step=self.step, total_steps=self.total_steps,
            train_ppl=perplexity(train_ce) if math.isfinite(train_ce) else math.nan,
            val_ppl=last.val_ppl if last else math.nan, val_bpb=last.val_bpb if last else math.nan,
            tokens_per_s=self.tokens_seen / elapsed if elapsed > 0 else 0.0, elapsed=elapsed,
            eta=0.0 if final else remaining, device=self.device_name, sample=last.sample if last else "",
            history=list(self.history)))

    def finish(self, stop: Stop | None, keep_best: bool) -> TrainResult:
        status, message = (stop.status, stop.message) if stop else (Status.FINISHED,
                                                                      said.say("finished", epochs=self.config.epochs))
        if keep_best and self.best.val_ce < math.inf:
            self.net.load_state_dict(self.best.weights)
            message = said.say("kept_best", message=message, epoch=self.best.epoch)
        last = self.history[-1]
        # one clock reading for the last report and the result, so that the page's figures and the run's record
        # agree (the report's own writing, in a worker process, took up to a tenth of a second)
        elapsed = time.perf_counter() - self.started
        self.report(last.epoch, math.log(last.train_ppl) if last.train_ppl > 0 else math.nan, final=True,
                    elapsed=elapsed)
        self.net.eval()  # the finished model is for sampling and evaluation: dropout off
        self.lm.meta.update({"status": str(status), "message": message, "best_epoch": self.best.epoch})
        return TrainResult(self.config, self.history, status, message, elapsed, self.device_name,
                           self.tokens_seen / elapsed if elapsed > 0 else 0.0, self.best.epoch, lm=self.lm)
