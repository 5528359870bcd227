"""Training RNN language models: one TrainConfig, one train() used by the UI, the CLI and the tests.

    python -m core train --preset book --device auto --out runs/book

Progress goes to a callback (no printing, no UI code here); a threading.Event stops a run between
steps. A diverging run stops with the last good weights; a stopped run keeps everything learned.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import math
import sys
import threading
import time
import zipfile
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Callable, Sequence

import torch
from safetensors.torch import load as st_load, save as st_save

from core import __version__
from core.alloc import keep_freed_memory, release_freed_memory
from core.checks import check_choice, check_int, check_real
from core.corpus import CLEANINGS, clean, load_corpus
from core.device import resolve_device
from core.models import ModelSpec, RNNLM, clip_gradients, detach_state, perplexity
from core.sampling import LanguageModel, sample
from core.tokens import CharVocab, bytes_per_token, train_bpe, vocab_from_dict

LN2 = math.log(2.0)


@dataclass(frozen=True)
class TrainConfig:
    """Every setting of a run. Construct it with keywords; invalid values raise ValueError."""

    tokenizer: str = "char"          # char | bpe
    bpe_vocab: int = 1024
    cleaning: str = "letters"        # letters | punctuation
    split: str = "book"              # book: first num_train windows / next num_val; whole: 90% / 10%
    num_train: int = 10_000
    num_val: int = 5_000
    cell: str = "rnn"                # scratch | rnn | gru | lstm
    hidden_size: int = 32
    embed_dim: int = 0               # 0: one-hot inputs
    num_layers: int = 1
    dropout: float = 0.0
    optimizer: str = "sgd"           # sgd | adam
    lr: float = 1.0
    lr_decay: str = "none"           # none | cosine
    weight_decay: float = 0.0
    clip: float = 1.0                # global gradient-norm threshold; 0 turns clipping off
    epochs: int = 100
    batch_size: int = 1024
    num_steps: int = 32
    truncation: str = "fresh"        # fresh: zero state per window; detach: carry the state, cut the graph
    seed: int = 0
    device: str = "auto"
    sample_prefix: str = "time traveller"
    sample_length: int = 80
    max_seconds: float = 0.0         # 0: no time limit
    init: str = "default"            # default: PyTorch's; book: the book's scratch RNN, weights N(0, 0.01^2), biases 0,
    #                                  and one hidden bias (the fused RNN's b_hh stays 0)

    def __post_init__(self):
        check_choice("tokenizer", self.tokenizer, ("char", "bpe"))
        check_int("bpe_vocab", self.bpe_vocab, 256, 4096)
        check_choice("cleaning", self.cleaning, CLEANINGS)
        check_choice("split", self.split, ("book", "whole"))
        check_int("num_train", self.num_train, 1, 10_000_000)
        check_int("num_val", self.num_val, 1, 10_000_000)
        self.spec(2)  # the model fields (cell, sizes, layers, dropout) are checked by ModelSpec
        check_choice("optimizer", self.optimizer, ("sgd", "adam"))
        check_real("lr", self.lr, 0.0, 1e6, lo_open=True)
        check_choice("lr_decay", self.lr_decay, ("none", "cosine"))
        check_real("weight_decay", self.weight_decay, 0.0, 1.0)
        check_real("clip", self.clip, 0.0, 1e6)
        check_int("epochs", self.epochs, 1, 100_000)
        check_int("batch_size", self.batch_size, 1, 65_536)
        check_int("num_steps", self.num_steps, 1, 2048)
        check_choice("truncation", self.truncation, ("fresh", "detach"))
        check_int("seed", self.seed, 0, 2**31 - 1)
        check_choice("device", self.device, ("auto", "cpu", "cuda"))
        check_int("sample_length", self.sample_length, 1, 2000)
        check_real("max_seconds", self.max_seconds, 0.0, 1e7)
        check_choice("init", self.init, ("default", "book"))
        if self.split == "book" and self.truncation == "detach":
            raise ValueError("With the book's split the training windows are shuffled, so each starts from a "
                             "zero state: use truncation 'fresh', or the whole-corpus split to carry the state.")

    def spec(self, vocab_size: int) -> ModelSpec:
        return ModelSpec(vocab_size, self.hidden_size, self.cell, self.embed_dim, self.num_layers, self.dropout)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        names = {f.name for f in fields(cls)}
        unknown = set(d) - names
        if unknown:
            raise ValueError(f"Unknown training settings: {', '.join(sorted(unknown))}.")
        return cls(**d)


PRESETS: dict[str, TrainConfig] = {
    # The book's rnn-scratch run: characters, 10k/5k windows of 32, batch 1024, 32 hidden units, SGD lr 1.
    "book": TrainConfig(init="book"),
    # The book's newer setup: byte-level BPE with 1024 tokens, embedding 64, 128 hidden units.
    "bpe": TrainConfig(tokenizer="bpe", bpe_vocab=1024, embed_dim=64, hidden_size=128, lr=4.0, epochs=10,
                       num_train=50_000, num_val=3_000),
    # The best plain RNN a learner gets in about a minute of CPU: whole corpus, state carried, Adam.
    "whole": TrainConfig(split="whole", truncation="detach", hidden_size=256, embed_dim=0, optimizer="adam",
                         lr=5e-3, lr_decay="cosine", clip=5.0, epochs=30, batch_size=32, num_steps=64),
    # A few seconds on any machine: for trying the controls.
    "tiny": TrainConfig(split="whole", truncation="detach", hidden_size=64, optimizer="adam", lr=1e-2,
                        epochs=3, batch_size=64, num_steps=32),
}


@dataclass
class Data:
    vocab: object
    cleaning: str
    train_x: torch.Tensor | None = None   # book split: windows (n, num_steps)
    train_y: torch.Tensor | None = None
    val_x: torch.Tensor | None = None
    val_y: torch.Tensor | None = None
    train_ids: torch.Tensor | None = None  # whole split: token streams
    val_ids: torch.Tensor | None = None
    bytes_per_token: float = 1.0

    @property
    def tokens_per_epoch(self) -> int:
        if self.train_x is not None:
            return int(self.train_x.numel())
        return int(self.train_ids.numel())


def build_vocab(config: TrainConfig, text: str):
    if config.tokenizer == "char":
        return CharVocab.build(text)
    return train_bpe(text, config.bpe_vocab)


def prepare_data(config: TrainConfig, raw_text: str) -> Data:
    """Clean, tokenize and cut the text as the config says."""
    if not isinstance(raw_text, str) or not raw_text.strip():
        raise ValueError("The training text is empty.")
    text = clean(raw_text, config.cleaning)
    vocab = build_vocab(config, text)
    ids = torch.as_tensor(vocab.encode(text), dtype=torch.long)
    n = len(ids)
    if config.split == "book":
        need = config.num_train + config.num_val + config.num_steps
        if n < need:
            raise ValueError(f"The text has {n:,} tokens; {config.num_train:,} training and {config.num_val:,} "
                             f"validation windows of {config.num_steps} need {need:,}. Lower num_train/num_val "
                             "or use the whole-corpus split.")
        windows = ids.unfold(0, config.num_steps + 1, 1)[: config.num_train + config.num_val]
        X, Y = windows[:, :-1].contiguous(), windows[:, 1:].contiguous()
        val_slice = slice(config.num_train, config.num_train + config.num_val)
        val_ids = ids[config.num_train: config.num_train + config.num_val + config.num_steps]
        data = Data(vocab, config.cleaning, X[: config.num_train], Y[: config.num_train], X[val_slice], Y[val_slice])
    else:
        cut = int(n * 0.9)
        if cut < config.batch_size * (config.num_steps + 1) or n - cut < config.num_steps + 1:
            raise ValueError(f"The text has {n:,} tokens: too few for batch size {config.batch_size} with windows of "
                             f"{config.num_steps}. Lower the batch size or num_steps.")
        data = Data(vocab, config.cleaning, train_ids=ids[:cut], val_ids=ids[cut:])
        val_ids = ids[cut:]
    val_text = vocab.decode(val_ids.numpy())
    data.bytes_per_token = bytes_per_token(vocab, val_text, val_ids.numpy()) if val_text else 1.0
    return data


@dataclass
class Progress:
    """What a running training reports: sent after every epoch and every few seconds within one."""

    epoch: int                 # epochs finished (0 before the first)
    epochs: int
    step: int                  # optimisation steps so far
    total_steps: int
    train_ppl: float
    val_ppl: float
    val_bpb: float             # validation bits per byte
    tokens_per_s: float
    elapsed: float
    eta: float
    device: str
    sample: str = ""
    grad_norm: float = 0.0
    final: bool = False
    history: list = field(default_factory=list)


@dataclass
class TrainResult:
    lm: LanguageModel
    config: TrainConfig
    history: list             # one dict per epoch (epoch 0 = before training)
    status: str               # finished | stopped | diverged | time limit
    message: str
    elapsed: float
    device: str
    tokens_per_s: float
    best_epoch: int

    @property
    def final(self) -> dict:
        return self.history[-1] if self.history else {}


def _batches_book(data: Data, config: TrainConfig, gen: torch.Generator):
    order = torch.randperm(len(data.train_x), generator=gen)
    for i in range(0, len(order), config.batch_size):
        idx = order[i: i + config.batch_size]
        yield data.train_x.index_select(0, idx), data.train_y.index_select(0, idx), True


def _batches_whole(data: Data, config: TrainConfig, gen: torch.Generator):
    """Sequential partitioning: batch_size parallel streams from a random offset, windows in order."""
    ids = data.train_ids
    offset = int(torch.randint(0, config.num_steps, (1,), generator=gen))
    length = (len(ids) - offset - 1) // config.batch_size
    length -= length % config.num_steps
    xs = ids[offset: offset + config.batch_size * length].view(config.batch_size, length)
    ys = ids[offset + 1: offset + 1 + config.batch_size * length].view(config.batch_size, length)
    for i in range(0, length, config.num_steps):
        yield xs[:, i: i + config.num_steps], ys[:, i: i + config.num_steps], i == 0 or config.truncation == "fresh"


def steps_per_epoch(data: Data, config: TrainConfig) -> int:
    if config.split == "book":
        return math.ceil(len(data.train_x) / config.batch_size)
    length = (len(data.train_ids) - config.num_steps) // config.batch_size
    return max(1, length // config.num_steps)


@torch.inference_mode()
def evaluate(net: RNNLM, data: Data, config: TrainConfig, device: torch.device, streams: int = 16) -> float:
    """Mean validation cross-entropy (nats per token). Book split: every window from a zero state.
    Whole split: the held-out text as `streams` parallel pieces, state carried across each."""
    net.eval()
    total, count = 0.0, 0
    if config.split == "book":
        n = len(data.val_x)
        chunk = math.ceil(n / math.ceil(n / 2048))  # equal chunks of at most 2048 windows: cache-friendly
        for i in range(0, n, chunk):
            x, y = data.val_x[i: i + chunk].to(device), data.val_y[i: i + chunk].to(device)
            total += float(net.loss(x, y, reduction="sum")[0])
            count += y.numel()
    else:
        total, count = stream_cross_entropy(net, data.val_ids, device, streams, chunk=256)
    net.train()
    return total / count


@torch.no_grad()
def stream_cross_entropy(net: RNNLM, ids: torch.Tensor, device, streams: int = 1, chunk: int = 256):
    """Summed cross-entropy and count of predicting ids[1:] from ids[:-1], the state carried throughout
    (the text is cut into `streams` equal pieces evaluated in parallel; streams=1 is exact carry)."""
    was_training = net.training
    net.eval()
    L = (len(ids) - 1) // streams
    xs = ids[: streams * L].view(streams, L).to(device)
    ys = ids[1: streams * L + 1].view(streams, L).to(device)
    state, total = None, 0.0
    for i in range(0, L, chunk):
        loss, state = net.loss(xs[:, i: i + chunk], ys[:, i: i + chunk], state, reduction="sum")
        total += float(loss)
    net.train(was_training)
    return total, streams * L


def _snapshot(net: RNNLM) -> dict:
    return {k: v.detach().clone() for k, v in net.state_dict().items()}


class _LastGood:
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


def train(config: TrainConfig, text: str | None = None, on_progress: Callable[[Progress], None] | None = None,
          stop_event: threading.Event | None = None, data: Data | None = None,
          report_every: float = 1.0, keep_best: bool = False) -> TrainResult:
    """Train a language model on text (default: The Time Machine) and return it with its history.

    keep_best: end with the weights of the epoch with the lowest validation loss (early stopping)."""
    if not isinstance(config, TrainConfig):
        raise ValueError("train needs a TrainConfig.")
    device = resolve_device(config.device)
    keep_freed_memory()
    if data is None:
        data = prepare_data(config, load_corpus() if text is None else text)
    torch.manual_seed(config.seed)
    gen = torch.Generator().manual_seed(config.seed)
    # Build and initialise on the CPU, then move: a run starts from the same weights on every device.
    net = RNNLM(config.spec(len(data.vocab)))
    if config.init == "book":
        with torch.no_grad():
            for name, p in net.named_parameters():
                if "bias" in name or name.endswith("b_h"):
                    p.zero_()
                else:
                    p.normal_(0.0, 0.01)
        if config.cell == "rnn":
            # The book's RNN has one hidden bias b_h. nn.RNN has two, b_ih and b_hh, which only ever enter as
            # their sum: SGD on both would move that sum at twice the learning rate (and count its gradient
            # twice in the clipping norm). Keeping b_hh at zero makes the fused model the book's exactly.
            for k in range(config.num_layers):
                getattr(net.rnn, f"bias_hh_l{k}").requires_grad_(False)
    net = net.to(device)
    params = [p for p in net.parameters() if p.requires_grad]
    if config.optimizer == "sgd":
        opt = torch.optim.SGD(params, lr=config.lr, weight_decay=config.weight_decay)
    else:
        opt = torch.optim.AdamW(params, lr=config.lr, weight_decay=config.weight_decay)
    per_epoch = steps_per_epoch(data, config)
    total_steps = per_epoch * config.epochs
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, total_steps) if config.lr_decay == "cosine" else None
    batches = _batches_book if config.split == "book" else _batches_whole
    dev_name = str(device) if device.type == "cpu" else f"cuda ({torch.cuda.get_device_name(device)})"

    # A loss far above a uniform guess (ln V) means the weights have blown up, even where the stable
    # log-softmax keeps it finite: treat it as divergence.
    blowup = max(20.0, 5.0 * math.log(len(data.vocab)))
    history: list[dict] = []
    lm = LanguageModel(net, data.vocab, config.cleaning, {"config": config.to_dict()})
    t_start = time.perf_counter()
    tokens_seen, step, status, message = 0, 0, "finished", ""
    good = _LastGood(net)
    best = (math.inf, 0, _snapshot(net))
    last_report = t_start
    grad_norm = 0.0

    def sample_text() -> str:
        net.eval()
        try:
            return sample(lm, config.sample_prefix, config.sample_length, temperature=0.8,
                          seed=config.seed).text
        except ValueError:
            return ""
        finally:
            net.train()

    def record(epoch: int, train_ce: float) -> dict:
        nonlocal best
        val_ce = evaluate(net, data, config, device)
        elapsed = time.perf_counter() - t_start
        row = {"epoch": epoch, "step": step, "train_ppl": perplexity(train_ce) if math.isfinite(train_ce) else math.nan,
               "val_ppl": perplexity(val_ce), "val_bpb": val_ce / LN2 / data.bytes_per_token,
               "val_ce": val_ce, "elapsed": elapsed,
               "tokens_per_s": tokens_seen / elapsed if elapsed > 0 and tokens_seen else 0.0,
               "sample": sample_text()}
        history.append(row)
        if math.isfinite(val_ce) and val_ce < best[0]:
            best = (val_ce, epoch, _snapshot(net))
        return row

    def report(epoch: int, train_ce: float, final: bool = False) -> None:
        if on_progress is None:
            return
        elapsed = time.perf_counter() - t_start
        last = history[-1] if history else {}
        rate = tokens_seen / elapsed if elapsed > 0 else 0.0
        remaining = (total_steps - step) * (elapsed / step) if step else math.nan
        on_progress(Progress(epoch=epoch, epochs=config.epochs, step=step, total_steps=total_steps,
                             train_ppl=perplexity(train_ce) if math.isfinite(train_ce) else math.nan,
                             val_ppl=last.get("val_ppl", math.nan), val_bpb=last.get("val_bpb", math.nan),
                             tokens_per_s=rate, elapsed=elapsed, eta=0.0 if final else remaining, device=dev_name,
                             sample=last.get("sample", ""), grad_norm=grad_norm, final=final,
                             history=list(history)))

    net.train()
    record(0, math.nan)
    report(0, math.nan)
    epoch = 0
    try:
        for epoch in range(1, config.epochs + 1):
            ce_sum, ce_count, state = 0.0, 0, None
            for x, y, fresh in batches(data, config, gen):
                if stop_event is not None and stop_event.is_set():
                    status, message = "stopped", f"stopped by the learner at step {step}"
                    raise StopIteration
                if config.max_seconds and time.perf_counter() - t_start > config.max_seconds:
                    status, message = "time limit", f"stopped at the time limit ({config.max_seconds:g} s)"
                    raise StopIteration
                x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
                state = None if fresh else detach_state(state)
                loss, state = net.loss(x, y, state)
                loss_value = float(loss.detach())
                if not math.isfinite(loss_value) or loss_value > blowup:
                    good.restore()
                    status = "diverged"
                    message = (f"diverged at step {step + 1} (loss {loss_value}): lower the learning rate. "
                               "The weights from the last good step are kept.")
                    raise StopIteration
                good.refresh()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                grad_norm = clip_gradients(params, config.clip) if config.clip > 0 else 0.0
                if not math.isfinite(grad_norm):
                    good.restore()
                    status = "diverged"
                    message = f"diverged at step {step + 1} (gradient norm {grad_norm}): lower the learning rate."
                    raise StopIteration
                opt.step()
                if sched is not None:
                    sched.step()
                step += 1
                tokens_seen += y.numel()
                ce_sum += loss_value * y.numel()
                ce_count += y.numel()
                now = time.perf_counter()
                if now - last_report >= report_every:
                    last_report = now
                    report(epoch - 1, ce_sum / ce_count)
            record(epoch, ce_sum / max(1, ce_count))
            report(epoch, ce_sum / max(1, ce_count))
    except StopIteration:
        if ce_count:
            record(epoch, ce_sum / ce_count)
    if not message:
        message = f"finished {config.epochs} epochs"
    if keep_best and best[0] < math.inf:
        net.load_state_dict(best[2])
        message += f"; kept the best epoch ({best[1]}) by validation loss"
    last_train = history[-1]["train_ppl"] if history else math.nan
    report(history[-1]["epoch"] if history else 0, math.log(last_train) if last_train > 0 else math.nan, final=True)
    elapsed = time.perf_counter() - t_start
    net.eval()  # the finished model is for sampling and evaluation: dropout off
    lm.meta.update({"status": status, "message": message, "best_epoch": best[1]})
    release_freed_memory()
    return TrainResult(lm, config, history, status, message, elapsed, dev_name,
                       tokens_seen / elapsed if elapsed > 0 else 0.0, best[1])


# ------------------------------------------------------------------------------------------ artefacts

def run_metadata(result: TrainResult, extra: dict | None = None) -> dict:
    return {
        "format": "rnnlab-run/1",
        "rnnlab_version": __version__,
        "config": result.config.to_dict(),
        "model": result.lm.net.spec.to_dict(),
        "vocab": result.lm.vocab.to_dict(),
        "cleaning": result.lm.cleaning,
        "status": result.status,
        "message": result.message,
        "device": result.device,
        "elapsed_s": round(result.elapsed, 3),
        "tokens_per_s": round(result.tokens_per_s, 1),
        "history": result.history,
        **(extra or {}),
    }


def weights_bytes(net: RNNLM) -> bytes:
    tensors = {k: v.detach().to("cpu").contiguous() for k, v in net.state_dict().items()}
    return st_save(tensors)


def save_run(result: TrainResult, out_dir: str | Path, extra: dict | None = None) -> Path:
    """Write weights.safetensors + run.json (+ metrics.csv) into out_dir."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "weights.safetensors").write_bytes(weights_bytes(result.lm.net))
    (out / "run.json").write_text(json.dumps(run_metadata(result, extra), indent=1))
    (out / "metrics.csv").write_text(metrics_csv(result.history))
    return out


def metrics_csv(history: list[dict]) -> str:
    buf = io.StringIO()
    cols = ["epoch", "step", "train_ppl", "val_ppl", "val_bpb", "elapsed", "tokens_per_s"]
    w = csv.writer(buf)
    w.writerow(cols)
    for row in history:
        w.writerow([row.get(c, "") for c in cols])
    return buf.getvalue()


def run_zip(result: TrainResult) -> bytes:
    """The run as one .zip (weights, JSON, CSV) for downloading."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("weights.safetensors", weights_bytes(result.lm.net))
        z.writestr("run.json", json.dumps(run_metadata(result), indent=1))
        z.writestr("metrics.csv", metrics_csv(result.history))
    return buf.getvalue()


def load_model(weights: bytes, meta: dict, device: str = "cpu") -> LanguageModel:
    """Rebuild a LanguageModel from safetensors bytes and its JSON metadata (never unpickles)."""
    if not isinstance(meta, dict) or "model" not in meta or "vocab" not in meta:
        raise ValueError("The run's JSON lacks 'model' or 'vocab': not an RNN Lab run.")
    spec = ModelSpec.from_dict(meta["model"])
    vocab = vocab_from_dict(meta["vocab"])
    if len(vocab) != spec.vocab_size:
        raise ValueError(f"The vocabulary has {len(vocab)} tokens but the model expects {spec.vocab_size}.")
    try:
        tensors = st_load(weights)
    except Exception as exc:
        raise ValueError(f"The weights file is not valid safetensors ({exc}).") from None
    net = RNNLM(spec)
    try:
        net.load_state_dict(tensors, strict=True)
    except RuntimeError as exc:
        raise ValueError(f"The weights do not fit the model described in the JSON: {str(exc).splitlines()[0]}") from None
    net.to(resolve_device(device) if device in ("auto", "cuda") else torch.device("cpu"))
    return LanguageModel(net, vocab, meta.get("cleaning", "letters"), meta)


def load_run(run_dir: str | Path, device: str = "cpu") -> LanguageModel:
    run_dir = Path(run_dir)
    try:
        meta = json.loads((run_dir / "run.json").read_text())
        weights = (run_dir / "weights.safetensors").read_bytes()
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"Cannot read the run in {run_dir}: {exc}") from None
    return load_model(weights, meta, device)


# ------------------------------------------------------------------------------------------------ CLI

def _bar(p: Progress, width: int = 30) -> str:
    frac = p.step / p.total_steps if p.total_steps else 1.0
    done = int(frac * width)
    eta = f"{p.eta:5.0f}s" if math.isfinite(p.eta) else "    ?"
    return (f"\r[{'#' * done}{'.' * (width - done)}] {100 * frac:5.1f}% epoch {p.epoch}/{p.epochs} "
            f"train ppl {p.train_ppl:7.2f} val ppl {p.val_ppl:7.2f} bpb {p.val_bpb:5.3f} "
            f"{p.tokens_per_s / 1000:7.1f}k tok/s eta {eta}")


def with_overrides(base: TrainConfig, items: list[str], **fixed) -> TrainConfig:
    """base with NAME=VALUE strings applied (each converted to the setting's type)."""
    overrides = dict(fixed)
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or name not in base.__dataclass_fields__:
            raise ValueError(f"unknown setting {name!r} (use NAME=VALUE with a TrainConfig field name)")
        kind = type(getattr(base, name))
        try:
            overrides[name] = kind(value)
        except ValueError:
            what = {int: "a whole number", float: "a number"}.get(kind, kind.__name__)
            raise ValueError(f"{name} takes {what}, got {value!r}") from None
    return replace(base, **overrides)


def _text(value) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def config_overrides(base: TrainConfig, config: TrainConfig, names: Sequence[str]) -> dict[str, str]:
    """The settings among names where config differs from base, as NAME -> text (what a URL carries)."""
    return {n: _text(getattr(config, n)) for n in names if getattr(config, n) != getattr(base, n)}


def parse_overrides(base: TrainConfig, raw: dict[str, str], ranges: dict[str, tuple[float, float]] | None = None,
                    choices: dict[str, Sequence] | None = None) -> tuple[TrainConfig, list[str]]:
    """base with the valid NAME -> text settings of raw applied, and a message for each one left out.

    ranges and choices narrow a setting further than TrainConfig does (to what a form's widget offers)."""
    ranges, choices = ranges or {}, choices or {}
    good: list[str] = []
    problems: list[str] = []
    for name, value in raw.items():
        try:
            v = getattr(with_overrides(base, [f"{name}={value}"]), name)
            if name in ranges and not ranges[name][0] <= v <= ranges[name][1]:
                raise ValueError(f"{name} must be between {ranges[name][0]:g} and {ranges[name][1]:g}, got {value!r}")
            if name in choices and v not in choices[name]:
                raise ValueError(f"{name} must be one of {', '.join(map(str, choices[name]))}, got {value!r}")
        except ValueError as exc:
            problems.append(str(exc))
            continue
        good.append(f"{name}={value}")
    try:
        return with_overrides(base, good), problems
    except ValueError as exc:  # each setting fine alone, not together (e.g. book windows with a carried state)
        return base, problems + [f"{exc} (kept the preset's settings)"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core train", description="Train an RNN language model.")
    parser.add_argument("--preset", choices=sorted(PRESETS), default="book")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument("--out", default=None, help="folder for weights.safetensors, run.json, metrics.csv")
    parser.add_argument("--corpus", default=None, help="a text file to train on (default: The Time Machine)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="override a setting, e.g. --set epochs=5 --set cell=gru")
    args = parser.parse_args(argv)
    try:
        config = with_overrides(PRESETS[args.preset], args.set, device=args.device)
        text = load_corpus(args.corpus)
        result = train(config, text, on_progress=lambda p: print(_bar(p), end="", flush=True, file=sys.stderr))
    except ValueError as exc:
        print(f"\nerror: {exc}", file=sys.stderr)
        return 2
    print(file=sys.stderr)
    last = result.final
    print(f"{result.status}: {result.message}; val ppl {last['val_ppl']:.3f}, {last['val_bpb']:.3f} bits/byte, "
          f"{result.elapsed:.1f} s on {result.device}, {result.tokens_per_s:,.0f} tokens/s")
    if args.out:
        print(f"saved to {save_run(result, args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
