"""GPU against CPU on the book and bpe presets (tokens per second, measured in one run).

    python bench/gpu.py      # needs a CUDA GPU; prints a note and exits 0 otherwise
"""
from dataclasses import replace

import torch

import common  # noqa: F401
from core.corpus import load_corpus
from core.train import PRESETS, prepare_data, train

if __name__ == "__main__":
    if not torch.cuda.is_available():
        print("no CUDA GPU visible: nothing to measure")
        raise SystemExit(0)
    text = load_corpus()
    for name, epochs in (("book", 100), ("bpe", 10)):
        data = prepare_data(PRESETS[name], text)
        rates = {}
        for dev in ("cuda", "cpu"):
            cfg = replace(PRESETS[name], device=dev, epochs=epochs if dev == "cuda" else 2)
            r = train(cfg, data=data)
            rates[dev] = r.tokens_per_s
            print(f"{name} on {r.device}: {r.tokens_per_s:,.0f} tokens/s, {r.elapsed:.1f} s, "
                  f"val ppl {r.final['val_ppl']:.3f}, {r.final['val_bpb']:.3f} bits/byte")
        print(f"{name}: GPU/CPU tokens per second = {rates['cuda'] / rates['cpu']:.1f}x")
