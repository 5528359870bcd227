"""Sampling speed and memory with the pretrained model on one CPU core.

    python bench/sampling_speed.py
"""

# tests/test_benches.py runs this bench at a tiny size (RNNLAB_BENCH_TINY=1) with each argument list here
TINY_RUNS = [[]]
NEEDS_CORPUS = False

import statistics
import time
import tracemalloc

import torch

from common import size  # (and the repo on sys.path)
from core.runs.saved import load_pretrained
from core.nn.sampling import sample, stream

if __name__ == "__main__":
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    lm = load_pretrained()
    print(f"load the pretrained model: {1000 * (time.perf_counter() - t0):.0f} ms (target < 1000 ms)")
    sample(lm, "the time traveller", 50, 0.8, seed=0)
    times = []
    for i in range(size(10, 2)):
        t0 = time.perf_counter()
        sample(lm, "the time traveller", 500, 0.8, seed=i)
        times.append(1000 * (time.perf_counter() - t0))
    print(f"500 characters: median {statistics.median(times):.1f} ms (target well under 150 ms)")
    peaks = {}
    small, large = size(1_000, 100), size(100_000, 1_000)
    for n in (small, large):
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
    print(f"peak memory ratio {large:,} / {small:,} characters: {peaks[large] / peaks[small]:.2f} "
          "(only the recurrent state is carried)")
