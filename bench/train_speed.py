"""Training speed on the book preset: fused vs scratch RNN, tokens per second measured in one run.

    python bench/train_speed.py           # 40 steps of each path, then the ratio
    python bench/train_speed.py --full    # also the whole book preset (100 epochs) with the fused path
"""
import argparse
import time
from dataclasses import replace

import common  # noqa: F401
from core.corpus import load_corpus
from core.train import PRESETS, prepare_data, train


def rate(cell: str, data, epochs: int) -> float:
    cfg = replace(PRESETS["book"], cell=cell, epochs=epochs, device="cpu", sample_length=1)
    result = train(cfg, data=data)
    return result.tokens_per_s


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true")
    args = ap.parse_args()
    data = prepare_data(PRESETS["book"], load_corpus())
    fused, scratch = rate("rnn", data, 4), rate("scratch", data, 4)
    print(f"book preset, 4 epochs each: fused {fused:,.0f} tokens/s, scratch {scratch:,.0f} tokens/s, "
          f"ratio {fused / scratch:.2f}x")
    if args.full:
        t0 = time.perf_counter()
        result = train(replace(PRESETS["book"], device="cpu"), data=data)
        print(f"full book preset (fused, CPU): {time.perf_counter() - t0:.1f} s, validation perplexity "
              f"{result.final['val_ppl']:.3f} (target <= 7.3 in under 12 s)")
