"""Rebuild the pretrained character RNN shipped in assets/: python -m core pretrain [--device auto]

A plain tanh RNN (three layers, no gates) over the characters of The Time Machine, cleaned as in the book (letters and
spaces, lower case); first 90% for training, last 10% held out. The weights of the epoch with the lowest
validation loss are kept, and the held-out perplexity is then measured with the state carried across
the whole held-out text (one stream).
"""
from __future__ import annotations

import argparse
import math
import sys
import time

import torch

from core.assets import ASSETS, HELD_OUT_BPC, HELD_OUT_PPL, META, WEIGHTS
from core.text.corpus import CORPUS_SHA1, load_corpus, sha1_of
from core.runs.config import TrainConfig, with_overrides
from core.runs.data import prepare_data
from core.runs.saved import check_writable, run_file, weights_bytes
from core.nn.models import stream_cross_entropy
from core.runs.loop import LN2, train
from core.runs.cli import progress_bar

COMMAND = "python -m core pretrain"

CONFIG = TrainConfig(split="whole", truncation="detach", cell="rnn", hidden_size=384, embed_dim=0, num_layers=3,
                     dropout=0.25, optimizer="adam", lr=1.5e-3, lr_decay="cosine", weight_decay=0.01, clip=5.0,
                     epochs=40, batch_size=32, num_steps=64, seed=0, sample_prefix="the time traveller",
                     sample_length=120)


def held_out_metrics(lm, data) -> tuple[float, float]:
    """Perplexity and bits per character on the held-out 10%, state carried across it (one stream)."""
    total, count = stream_cross_entropy(lm.net, data.val_ids, lm.device, streams=1, chunk=512)
    ce = total / count
    return math.exp(ce), ce / LN2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument("--epochs", type=int, default=CONFIG.epochs)
    parser.add_argument("--corpus", default=None, help="path to The Time Machine (default: RNNLAB_CORPUS, cache or download)")
    parser.add_argument("--out", default=str(ASSETS), help="folder for charrnn.safetensors and charrnn.json")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="override a setting")
    args = parser.parse_args(argv)
    try:
        config = with_overrides(CONFIG, args.set, device=args.device, epochs=args.epochs)
        text = load_corpus(args.corpus)
        out = check_writable(args.out)   # before six minutes of training, not after
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    data = prepare_data(config, text)
    t0 = time.perf_counter()
    result = train(config, data=data, keep_best=True,
                   on_progress=lambda p: print(progress_bar(p), end="", flush=True, file=sys.stderr))
    print(file=sys.stderr)
    ppl, bpc = held_out_metrics(result.lm, data)
    corpus_sha1 = sha1_of(text.encode("utf-8"))
    meta = run_file(result, {
        "name": "Time Machine character RNN",
        "corpus_sha1": corpus_sha1,
        "corpus_is_time_machine": corpus_sha1 == CORPUS_SHA1,
        "split": "first 90% of the cleaned characters for training, last 10% held out",
        HELD_OUT_PPL: round(ppl, 4),
        HELD_OUT_BPC: round(bpc, 4),
        "val_measure": "state carried across the whole held-out text, one stream",
        "best_epoch": result.best_epoch,
        "training_seconds": round(time.perf_counter() - t0, 1),
        "command": " ".join([COMMAND, "--device", args.device, "--epochs", str(args.epochs),
                             *[f"--set {s}" for s in args.set]]),
        "torch_version": torch.__version__,
    })
    (out / WEIGHTS).write_bytes(weights_bytes(result.lm.net))
    (out / META).write_text(meta.to_json(samples=False))
    print(f"held-out perplexity {ppl:.3f} ({bpc:.3f} bits/char), best epoch {result.best_epoch}, "
          f"{meta.extra['training_seconds']} s on {result.device}; wrote {out / WEIGHTS} and {out / META}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
