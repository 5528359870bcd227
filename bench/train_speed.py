"""Training speed and quality on the book preset: the fused CPU path against the scratch loop (the book's
own way of writing the RNN: one matrix product per input, state and output per step, autograd for the
backward pass), measured in one run.

    python bench/train_speed.py             # 4 epochs of each path: tokens per second and their ratio
    python bench/train_speed.py --full      # also the whole book preset (100 epochs) with the fused path
    python bench/train_speed.py --book      # also a stand-in for the book's own code (bench/book_loop.py),
                                            # 3 epochs, projected to the preset's 100
    python bench/train_speed.py --seeds 4   # the whole preset with the fused path, the scratch loop and the
                                            # book-style loop for seeds 0..3: time and final validation
                                            # perplexity of each, their means and ratios
    python bench/train_speed.py --seeds 8 --seed-start 8 --paths rnn,book   # seeds 8..15, two of the paths
    python bench/train_speed.py --d2l PYTHON [--rounds 3]   # whole processes, interleaved: RNN Lab's
                                            # `python -m core train --preset book` against the d2l package's
                                            # own concise run (bench/d2l_concise.py in the interpreter PYTHON,
                                            # one that has d2l installed); medians and their ratio
    python bench/train_speed.py --d2l PYTHON --device cuda  # the same, both on the GPU
"""

# tests/test_benches.py runs this bench at a tiny size (RNNLAB_BENCH_TINY=1) with each argument list here
TINY_RUNS = [['--book', '--full'], ['--seeds', '1', '--paths', 'rnn,book']]
NEEDS_CORPUS = True

import argparse
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from dataclasses import replace

from book_loop import book_style_run
from common import compile_bytecode, size
from core.text.corpus import load_corpus
from core.runs.config import PRESETS
from core.runs.data import prepare_data
from core.runs.loop import train


def run(cell: str, data, **overrides):
    overrides.setdefault("epochs", size(PRESETS["book"].config.epochs, 2))
    cfg = replace(PRESETS["book"].config, cell=cell, device="cpu", num_train=len(data.train_x),
                  num_val=len(data.val_x), **overrides)
    t0 = time.perf_counter()
    result = train(cfg, data=data)
    return result, time.perf_counter() - t0


def timed_process(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, the validation perplexity it printed) of one whole process."""
    t0 = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])
    seconds = time.perf_counter() - t0
    found = re.findall(r"val(?:idation)? (?:ppl|perplexity) ([0-9.]+)", out.stdout)
    if not found:
        raise SystemExit(f"no perplexity in the output of {cmd}: {out.stdout[-500:]}")
    return seconds, float(found[-1])


def against_d2l(d2l_python: str, rounds: int, device: str = "cpu") -> None:
    """RNN Lab's book preset and d2l's concise run as whole processes, one after the other, `rounds` times, both
    on `device` (cpu, or cuda: d2l's Trainer on its first GPU)."""
    epochs = str(size(100, 2))
    ours = [sys.executable, "-m", "core", "train", "--preset", "book", "--device", device, "--set", f"epochs={epochs}"]
    theirs = [d2l_python, str(Path(__file__).with_name("d2l_concise.py")), "--epochs", epochs]
    theirs += ["--gpu"] if device == "cuda" else []
    compile_bytecode()    # both sides start from compiled bytecode (d2l's was compiled when pip installed it)
    timed_process(ours)   # warm-up: the disk cache, not either run's cost
    rows = {"RNN Lab": [], "d2l concise": []}
    for r in range(rounds):
        for name, cmd in (("RNN Lab", ours), ("d2l concise", theirs)):
            rows[name].append(timed_process(cmd))
            print(f"round {r + 1} {name:12s} {rows[name][-1][0]:6.2f} s  validation perplexity "
                  f"{rows[name][-1][1]:.3f}", flush=True)
    med = {name: statistics.median(s for s, _ in r) for name, r in rows.items()}
    print(f"median of {rounds}: RNN Lab {med['RNN Lab']:.2f} s, d2l concise {med['d2l concise']:.2f} s; "
          f"RNN Lab is {med['d2l concise'] / med['RNN Lab']:.2f}x faster (goal 4x)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--seeds", type=int, default=0)
    ap.add_argument("--book", action="store_true")
    ap.add_argument("--seed-start", type=int, default=0)
    ap.add_argument("--paths", default="rnn,scratch,book", help="with --seeds: which of rnn, scratch, book")
    ap.add_argument("--d2l", metavar="PYTHON", help="an interpreter with d2l installed: whole processes side by side")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"), help="with --d2l: where both train")
    args = ap.parse_args()
    if args.d2l:
        against_d2l(args.d2l, size(args.rounds, 1), args.device)
        raise SystemExit(0)
    book = PRESETS["book"].config   # a tiny run (the tests) only checks that the bench runs: a tenth of the windows
    data = prepare_data(replace(book, num_train=size(book.num_train, 1000), num_val=size(book.num_val, 500)),
                        load_corpus())
    run("rnn", data, epochs=1)  # warm-up: first-use imports and allocations are not the paths' cost
    fused, scratch = (run(c, data, epochs=size(4, 1), sample_length=1)[0].tokens_per_s for c in ("rnn", "scratch"))
    print(f"book preset, 4 epochs each: fused {fused:,.0f} tokens/s, scratch {scratch:,.0f} tokens/s, "
          f"ratio {fused / scratch:.2f}x")
    if args.book:
        per_epoch, book_rate, _ = book_style_run(data, len(data.vocab), epochs=size(3, 1))
        print(f"book-style loop: {book_rate:,.0f} tokens/s, {per_epoch:.2f} s per epoch (with validation) -> "
              f"about {100 * per_epoch:.0f} s for the preset's 100 epochs; fused / book-style tokens per second "
              f"{fused / book_rate:.2f}x")
    if args.full and not args.seeds:
        result, seconds = run("rnn", data)
        print(f"full book preset (fused, CPU): {seconds:.1f} s, validation perplexity "
              f"{result.final.val_ppl:.3f} (target <= 7.3 in under 12 s)")
    if args.seeds:
        rows = {p: [] for p in args.paths.split(",")}
        for seed in range(args.seed_start, args.seed_start + args.seeds):
            for cell in rows:
                if cell == "book":
                    per_epoch, _, ppl = book_style_run(data, len(data.vocab), epochs=size(100, 2), seed=seed)
                    seconds = 100 * per_epoch
                else:
                    result, seconds = run(cell, data, seed=seed)
                    ppl = result.final.val_ppl
                rows[cell].append((seconds, ppl))
                print(f"seed {seed} {cell:8s} {seconds:6.1f} s  final validation perplexity {ppl:.3f}", flush=True)
        mean = {c: (statistics.mean(s for s, _ in r), statistics.mean(p for _, p in r)) for c, r in rows.items()}
        for cell, (s, p) in mean.items():
            spread = statistics.stdev(q for _, q in rows[cell]) if args.seeds > 1 else 0.0
            print(f"mean over {args.seeds} seeds, {cell:8s}: {s:6.1f} s, validation perplexity {p:.3f} "
                  f"(standard deviation {spread:.3f})")
        for other in [p for p in ("scratch", "book") if p in mean and "rnn" in mean]:
            print(f"time ratio {other} / fused: {mean[other][0] / mean['rnn'][0]:.2f}x; perplexity difference "
                  f"fused - {other}: {mean['rnn'][1] - mean[other][1]:+.3f}")
