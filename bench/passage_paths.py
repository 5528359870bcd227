"""Act 4's passage run on three arithmetic code paths of this machine's CPU: which of its numbers repeat when the
last bits of each sum differ (as they do between CPUs), and which do not. Each path is a fresh process: torch's own
kernels at the CPU's best (auto) or plain (ATEN_CPU_CAPABILITY=default), and MKL's automatic or pinned branch
(MKL_CBWR). One thread each, seeds 0 and 1.

    python bench/passage_paths.py [--seeds 0 1]

Measured numbers are in docs/performance.md ("Act 4 on other CPUs"); core/lesson/readings.py quotes the spread.
"""

# tests/test_benches.py runs this bench at a tiny size (RNNLAB_BENCH_TINY=1) with each argument list here
TINY_RUNS = [["--seeds", "0"]]
NEEDS_CORPUS = True

import argparse
import json
import os
import subprocess
import sys

from common import ROOT, TINY

PATHS = {"auto": {}, "plain kernels, MKL compatible": {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"},
         "AVX2 kernels, MKL AVX2": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2"}}

CHILD = """
import json, sys, torch
from dataclasses import replace
from core.lesson import passage
from core.runs.loop import train
from core.text.corpus import load_corpus
torch.set_num_threads(1)
raw = load_corpus(download=False)
out = []
for seed in json.loads(sys.argv[1]):
    cfg = passage.config(seed) if not int(sys.argv[2]) else replace(passage.config(seed), epochs=int(sys.argv[2]))
    h = train(cfg, text=raw).history
    best = min(h, key=lambda r: r.val_ppl)
    out.append(dict(seed=seed, train=h[-1].train_ppl, best_epoch=best.epoch, best=best.val_ppl, last=h[-1].val_ppl))
print(json.dumps([torch.backends.cpu.get_cpu_capability(), out]))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    seeds = parser.parse_args().seeds
    paths = dict(list(PATHS.items())[:1]) if TINY else PATHS
    print(f"{'path':32} {'kernels':8} {'seed':>4} {'train ppl':>10} {'lowest held-out':>16} {'last held-out':>14}")
    for name, env in paths.items():
        done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(seeds), "2" if TINY else "0"], cwd=ROOT,
                              env={**os.environ, **env, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                              check=True)
        capability, rows = json.loads(done.stdout.strip().splitlines()[-1])
        for r in rows:
            print(f"{name:32} {capability:8} {r['seed']:>4} {r['train']:>10.3f} "
                  f"{r['best']:>9.2f} (ep {r['best_epoch']:>2}) {r['last']:>14.1f}")


if __name__ == "__main__":
    main()
