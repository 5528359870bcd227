"""The chapter's stored passage run (assets/passage_run.json and two weight files): our own run of the passage
lesson (core.lesson.passage), its perplexity per epoch, greedy samples at a few epochs and the weights half-way and at
the end (for teacher forcing), read back without training, and rebuilt by `python -m core passage`."""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import torch

from core.assets import ASSETS
from core.lesson.passage import config, passage_length, samples_to_show
from core.runs.record import HistoryRow, RunFile

COMMAND = "python -m core passage"
BAKED = "passage_run.json"
HALF_WAY = 20                          # the epoch whose weights are kept beside the last one


@dataclass
class Baked:
    """A stored passage run: what the chapter shows before anyone retrains."""

    meta: RunFile   # passage_run.json: the run, with its samples and weight files in meta.extra
    models: dict    # epoch -> LanguageModel (HALF_WAY and the last)

    @property
    def history(self) -> list[HistoryRow]:
        return self.meta.history

    @property
    def vocab_size(self) -> int:
        return len(next(iter(self.models.values())).vocab)

    @property
    def samples(self) -> dict[int, str]:
        return {int(k): v for k, v in self.meta.extra["samples"].items()}

    @property
    def training_seconds(self) -> float:
        return float(self.meta.extra["training_seconds"])


def weights_file(epoch: int) -> str:
    return f"passage_epoch{epoch}.safetensors"


def load_baked(folder: str | Path = ASSETS) -> Baked:
    """The stored run (JSON + safetensors; never unpickles). ValueError saying how to rebuild it."""
    from core.runs.saved import model_of

    folder = Path(folder)
    how = f"Rebuild it with: {COMMAND} (needs the corpus; seconds on a CPU)."
    try:
        meta = RunFile.from_json((folder / BAKED).read_bytes())
        models = {int(e): model_of((folder / weights_file(int(e))).read_bytes(), meta)
                  for e in meta.extra["weights_epochs"]}
    except FileNotFoundError as exc:
        raise ValueError(f"The stored passage run is missing ({Path(exc.filename).name}). {how}") from None
    except (OSError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"The stored passage run in {folder} cannot be read ({exc!r}). {how}") from None
    return Baked(meta, models)


# Rebuilding it: python -m core passage ---------------------------------------------------------------------

def bake(raw_text: str, out: str | Path = ASSETS, seed: int = 0) -> RunFile:
    """Train the passage run (and, with the same seed, its first HALF_WAY epochs again: the same steps, so the
    same weights) and write the JSON and the two weight files into out. Returns the JSON written."""
    import time

    from core.runs.saved import check_writable, run_file, weights_bytes
    from core.runs.loop import train

    out = check_writable(out)
    cfg = config(seed)
    t0 = time.perf_counter()
    result = train(cfg, text=raw_text)
    seconds = time.perf_counter() - t0
    half = train(replace(cfg, epochs=HALF_WAY), text=raw_text)
    meta = run_file(result, {
        "name": "The chapter's passage run",
        "command": f"{COMMAND} --seed {seed}",
        "training_seconds": round(seconds, 2),
        "torch_version": torch.__version__,
        "passage_chars": passage_length(cfg),
        "samples": samples_to_show(result.history),
        "weights_epochs": [HALF_WAY, result.history[-1].epoch],
    })
    (out / weights_file(HALF_WAY)).write_bytes(weights_bytes(half.lm.net))
    (out / weights_file(result.history[-1].epoch)).write_bytes(weights_bytes(result.lm.net))
    (out / BAKED).write_text(meta.to_json(samples=False))
    return meta


def main(argv: list[str] | None = None) -> int:
    import argparse
    import sys

    from core.text.corpus import load_corpus

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
    h = meta.history
    print(f"perplexity {h[0].train_ppl:.2f} -> {h[-1].train_ppl:.3f} in {meta.extra['training_seconds']} s "
          f"(held out: {h[0].val_ppl:.1f} -> {h[-1].val_ppl:.1f}); wrote {BAKED} and the weights to {args.out}")
    return 0
