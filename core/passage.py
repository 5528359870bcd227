"""The chapter's Act 4: a character RNN memorising one short passage, and teacher forcing shown on it.

The passage is cut from the corpus at run time (the first characters of the cleaned text; never stored).
What is stored in assets/ is our own run of it: the perplexity per epoch, greedy samples at a few epochs and
the weights at two epochs (half-way and the end), rebuilt by `python -m core passage`.

Teacher forcing: in training, the network reads the true previous character at every step. Generating, it
reads its own previous guess. teacher_forcing() scores both on the same text.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

from core.assets import ASSETS
from core.checks import check_int
from core.runs.config import PRESETS, TrainConfig
from core.runs.record import HistoryRow, rows_from
from core.corpus import clean
from core.sampling import LanguageModel, sample

COMMAND = "python -m core passage"
BAKED = "passage_run.json"
SHOWN_EPOCHS = (0, 5, 10, 20, 40)      # samples kept for the figure (and the last epoch)
HALF_WAY = 20                          # the epoch whose weights are kept beside the last one
MAX_TF_CHARS = 2000


def config(seed: int = 0) -> TrainConfig:
    """The passage preset with the learner's seed."""
    return replace(PRESETS["passage"].config, seed=check_int("seed", seed, 0, 2**31 - 1))


def passage_length(cfg: TrainConfig) -> int:
    """Characters the training windows cover: num_train windows of num_steps, stride one, plus the last target."""
    return cfg.num_train + cfg.num_steps


def passage(raw_text: str, cfg: TrainConfig | None = None) -> str:
    """The passage the run learns: the start of the cleaned corpus."""
    cfg = cfg or config()
    text = clean(raw_text, cfg.cleaning)
    n = passage_length(cfg)
    if len(text) < n + cfg.num_val:
        raise ValueError(f"The text has {len(text)} characters after cleaning; the passage run needs at least "
                         f"{n + cfg.num_val}.")
    return text[:n]


def continuation(raw_text: str, length: int = 200, cfg: TrainConfig | None = None) -> str:
    """The cleaned text right after the passage: text the run never trains on."""
    cfg = cfg or config()
    length = check_int("length", length, 1, MAX_TF_CHARS)
    text = clean(raw_text, cfg.cleaning)
    n = passage_length(cfg)
    return text[n: n + length]


def samples_to_show(history: list[HistoryRow]) -> dict[int, str]:
    """Epoch -> greedy sample, for the epochs the figure shows."""
    last = history[-1].epoch
    return {row.epoch: row.sample for row in history if row.epoch in SHOWN_EPOCHS or row.epoch == last}


@dataclass
class TeacherForcing:
    """The same text read two ways by one model. forced[i]: the model's guess for text[prefix + i] after reading
    the true text[:prefix + i]. free[i]: its guess after reading the prefix and then its own guesses."""

    text: str
    prefix: int
    forced: str
    free: str

    def hits(self, guesses: str) -> np.ndarray:
        return np.array([g == t for g, t in zip(guesses, self.text[self.prefix:])], dtype=bool)

    @property
    def forced_accuracy(self) -> float:
        return float(self.hits(self.forced).mean())

    @property
    def free_accuracy(self) -> float:
        return float(self.hits(self.free).mean())

    @property
    def first_free_miss(self) -> int | None:
        """Characters the free-running model gets right before its first mistake (None: no mistake)."""
        misses = np.flatnonzero(~self.hits(self.free))
        return int(misses[0]) if misses.size else None


@torch.no_grad()
def teacher_forcing(lm: LanguageModel, text: str, prefix: int = 18) -> TeacherForcing:
    """Greedy guesses for text[prefix:], with the true history (teacher forcing) and with the model's own."""
    if not isinstance(text, str) or not text:
        raise ValueError("teacher_forcing needs some text.")
    if len(text) > MAX_TF_CHARS:
        raise ValueError(f"Keep the text under {MAX_TF_CHARS} characters (it has {len(text)}).")
    prefix = check_int("prefix", prefix, 1, len(text) - 1, what="the text's length minus one")
    unknown = lm.vocab.unknown(text)
    if unknown:
        raise ValueError(f"The model does not know the characters {''.join(unknown)!r}; clean the text as it was.")
    ids = torch.as_tensor(lm.vocab.encode(text), dtype=torch.long, device=lm.device)
    logits, _ = lm.net(ids[None, :-1])
    guesses = logits[0, prefix - 1:].argmax(-1).cpu().numpy()
    forced = "".join(lm.vocab.token_text(int(i)) for i in guesses)
    free = sample(lm, text[:prefix], len(text) - prefix, temperature=0.0).text
    return TeacherForcing(text, prefix, forced, free)


# The baked run -------------------------------------------------------------------------------------------

@dataclass
class Baked:
    """A stored passage run: what the chapter shows before anyone retrains."""

    meta: dict
    models: dict    # epoch -> LanguageModel (HALF_WAY and the last)

    @property
    def history(self) -> list[HistoryRow]:
        return rows_from(self.meta["history"])

    @property
    def vocab_size(self) -> int:
        return len(next(iter(self.models.values())).vocab)

    @property
    def samples(self) -> dict[int, str]:
        return {int(k): v for k, v in self.meta["samples"].items()}


def weights_file(epoch: int) -> str:
    return f"passage_epoch{epoch}.safetensors"


def load_baked(folder: str | Path = ASSETS) -> Baked:
    """The stored run (JSON + safetensors; never unpickles). ValueError saying how to rebuild it."""
    from core.runs.saved import load_model

    folder = Path(folder)
    how = f"Rebuild it with: {COMMAND} (needs the corpus; seconds on a CPU)."
    try:
        meta = json.loads((folder / BAKED).read_text(encoding="utf-8"))
        models = {int(e): load_model((folder / weights_file(int(e))).read_bytes(), meta)
                  for e in meta["weights_epochs"]}
    except FileNotFoundError as exc:
        raise ValueError(f"The stored passage run is missing ({Path(exc.filename).name}). {how}") from None
    except (OSError, KeyError, TypeError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"The stored passage run in {folder} cannot be read ({exc!r}). {how}") from None
    return Baked(meta, models)


# Rebuilding it: python -m core passage ---------------------------------------------------------------------

def bake(raw_text: str, out: str | Path = ASSETS, seed: int = 0) -> dict:
    """Train the passage run (and, with the same seed, its first HALF_WAY epochs again: the same steps, so the
    same weights) and write the JSON and the two weight files into out. Returns the JSON written."""
    import time

    from core.runs.saved import check_writable, run_metadata, weights_bytes
    from core.runs.loop import train

    out = check_writable(out)
    cfg = config(seed)
    t0 = time.perf_counter()
    result = train(cfg, text=raw_text)
    seconds = time.perf_counter() - t0
    half = train(replace(cfg, epochs=HALF_WAY), text=raw_text)
    meta = run_metadata(result, {
        "name": "The chapter's passage run",
        "command": f"{COMMAND} --seed {seed}",
        "training_seconds": round(seconds, 2),
        "torch_version": torch.__version__,
        "passage_chars": passage_length(cfg),
        "samples": samples_to_show(result.history),
        "weights_epochs": [HALF_WAY, result.history[-1].epoch],
    })
    meta["history"] = [{k: v for k, v in row.items() if k != "sample"} for row in meta["history"]]
    (out / weights_file(HALF_WAY)).write_bytes(weights_bytes(half.lm.net))
    (out / weights_file(result.history[-1].epoch)).write_bytes(weights_bytes(result.lm.net))
    (out / BAKED).write_text(json.dumps(meta, indent=1))
    return meta


def main(argv: list[str] | None = None) -> int:
    import argparse
    import sys

    from core.corpus import load_corpus

    parser = argparse.ArgumentParser(prog=COMMAND, description="Rebuild the chapter's stored passage run in assets/.")
    parser.add_argument("--corpus", default=None, help="path to The Time Machine (default: RNNLAB_CORPUS, cache or download)")
    parser.add_argument("--out", default=str(ASSETS), help=f"folder for {BAKED} and the weights")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        meta = bake(load_corpus(args.corpus), args.out, args.seed)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    h = meta["history"]
    print(f"perplexity {h[0]['train_ppl']:.2f} -> {h[-1]['train_ppl']:.3f} in {meta['training_seconds']} s "
          f"(held out: {h[0]['val_ppl']:.1f} -> {h[-1]['val_ppl']:.1f}); wrote {BAKED} and the weights to {args.out}")
    return 0


@dataclass(frozen=True)
class CellTiming:
    cell: str
    label: str
    seconds_per_epoch: float   # median over the epochs: training steps, a validation pass and a sample
    perplexity: float          # training perplexity after the last epoch


def time_cells(raw_text: str, cells: tuple[str, ...] = ("scratch", "torch"), epochs: int = 4,
               seed: int = 0) -> list[CellTiming]:
    """The passage run for a few epochs with each cell: the same recurrence written two ways, timed here."""
    from core.cells import get_cell
    from core.runs.loop import train

    epochs = check_int("epochs", epochs, 2, 100)
    out = []
    for name in cells:
        result = train(replace(config(seed), cell=get_cell(name).name, epochs=epochs), text=raw_text)
        times = np.diff([row.elapsed for row in result.history])
        out.append(CellTiming(name, get_cell(name).label, float(np.median(times)), result.history[-1].train_ppl))
    return out
