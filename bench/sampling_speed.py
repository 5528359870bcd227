"""Sampling speed and memory with the pretrained model on one CPU core.

    python bench/sampling_speed.py
"""
import statistics
import time
import tracemalloc

import torch

import common  # noqa: F401  (puts the repo on sys.path)
from core.assets import load_pretrained
from core.sampling import sample, stream

if __name__ == "__main__":
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    lm = load_pretrained()
    print(f"load the pretrained model: {1000 * (time.perf_counter() - t0):.0f} ms (target < 1000 ms)")
    sample(lm, "the time traveller", 50, 0.8, seed=0)
    times = []
    for i in range(10):
        t0 = time.perf_counter()
        sample(lm, "the time traveller", 500, 0.8, seed=i)
        times.append(1000 * (time.perf_counter() - t0))
    print(f"500 characters: median {statistics.median(times):.1f} ms (target well under 150 ms)")
    peaks = {}
    for n in (1_000, 100_000):
        gen = stream(lm, "the", 0.8, seed=0)
        tracemalloc.start()
        t0 = time.perf_counter()
        for _, (token, _p) in zip(range(n), gen):
            pass
        took = time.perf_counter() - t0
        peaks[n] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"{n:>7,} characters streamed: {took:.2f} s ({n / took:,.0f} chars/s under tracemalloc), "
              f"peak traced memory {peaks[n] / 1e3:.1f} kB")
    print(f"peak memory ratio 100,000 / 1,000 characters: {peaks[100_000] / peaks[1_000]:.2f} "
          "(only the recurrent state is carried)")
