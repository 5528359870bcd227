"""Where a training run's time goes, and how far it is from the floor.

    python bench/train_profile.py [--preset book] [--repeats 3] [--threads N] [--device cuda]

Prints the run's wall time split into its phases: Python start and imports (a fresh process), preparing the data,
the training steps' forward pass with the output layer and loss, their backward pass, clipping, the optimizer
step, the validation passes, the samples, and saving the run. The phases inside train() are timed by wrapping
the functions the loop calls (the numbers it computes do not change). Beside them stands the floor: the
run's floating-point work, counted from its shapes, divided by this CPU's measured matrix-multiply speed at the
run's own sizes, plus the import time no run can avoid. Medians over --repeats runs.
On a GPU (--device cuda) each phase's clock is read after torch.cuda.synchronize(), so a phase holds the GPU
work it queued; those waits make the profiled run a little slower than a plain one. CUDA's start-up (context,
kernels) is timed apart, before the runs.
"""

# tests/test_benches.py runs this bench at a tiny size (RNNLAB_BENCH_TINY=1) with each argument list here
TINY_RUNS = [['--repeats', '1'], ['--preset', 'tiny', '--threads', '1', '--repeats', '1']]
NEEDS_CORPUS = True

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace

import torch

from common import ROOT, compile_bytecode, size
from core.text.corpus import load_corpus
from core.runs.data import prepare_data
from core.runs import loop
from core.runs.config import PRESETS
from core.runs.saved import save_run

PHASES = ("forward, output layer and loss", "backward", "clipping", "optimizer step", "validation", "samples")


def clock(device: str) -> float:
    """The wall clock, once the GPU has finished what was queued on it (on the CPU: the wall clock)."""
    if device == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter()


class Timer:
    """Adds up the wall time spent inside wrapped functions, by phase."""

    def __init__(self, device: str = "cpu"):
        self.seconds = {p: 0.0 for p in PHASES}
        self.blocks = False   # whether the steps went through core.nn.blocks
        self.device = device

    def wrap(self, phase, fn):
        def timed(*args, **kwargs):
            t0 = clock(self.device)
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[phase] += clock(self.device) - t0
        return timed


def profiled_run(config, data):
    """One run with its phases timed; returns (seconds in train(), seconds by phase, the result, whether its steps
    ran in batch blocks)."""
    timer = Timer(config.device)

    def split(training_loss, blocks: bool):  # the forward phase; the backward() it returns is the backward phase
        step_loss = timer.wrap(PHASES[0], training_loss)

        def timed(*args, **kwargs):
            timer.blocks = timer.blocks or blocks
            loss, state, backward = step_loss(*args, **kwargs)
            return loss, state, timer.wrap(PHASES[1], backward)
        return timed

    # a run in batch blocks (core.nn.blocks) computes each block's forward and backward in one go: both are in the
    # forward phase, and its backward phase only hands the summed gradients over
    patched = [(loop.RNNLM, "training_loss", False), (loop.Blocks, "training_loss", True),
               (loop, "clip_gradients", PHASES[2]), (loop.PlainSGD, "step", PHASES[3]),
               (loop.PlainAdamW, "step", PHASES[3]), (loop, "evaluate", PHASES[4]), (loop, "sample", PHASES[5])]
    originals = [getattr(owner, name) for owner, name, _ in patched]
    for (owner, name, phase), fn in zip(patched, originals):
        setattr(owner, name, split(fn, phase) if isinstance(phase, bool) else timer.wrap(phase, fn))
    try:
        t0 = clock(config.device)
        result = loop.train(config, data=data)
        total = clock(config.device) - t0
    finally:
        for (owner, name, _), fn in zip(patched, originals):
            setattr(owner, name, fn)
    return total, timer.seconds, result, timer.blocks


def import_seconds() -> float:
    """A fresh Python that imports what a training process imports, and ends as `python -m core` does (without
    Python's teardown, core.__main__.finish)."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import os, core.runs.loop, core.runs.data; os._exit(0)"], cwd=ROOT, check=True)
    return time.perf_counter() - t0


def matmul_gflops(rows: int, inner: int, cols: int, seconds: float = size(0.5, 0.05)) -> float:
    """This CPU's speed for (rows x inner) @ (inner x cols) float32 products, as the run does them."""
    a, b = torch.randn(rows, inner), torch.randn(inner, cols)
    out = torch.empty(rows, cols)
    for _ in range(20):
        torch.mm(a, b, out=out)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        torch.mm(a, b, out=out)
        n += 1
    return 2 * rows * inner * cols * n / (time.perf_counter() - t0) / 1e9


def floor_seconds(config, data) -> tuple[float, float, float]:
    """(floating-point operations, GFLOP/s at the run's sizes, seconds) for the run's matrix products:
    per trained token 2h^2 (the recurrence) + 2hV (the output layer) forward and twice that backward; per
    validation token the forward alone. The one-hot input is a lookup, not a product."""
    h, V = config.hidden_size, len(data.vocab)
    per_token = 2 * h * h + 2 * h * V
    if config.split == "book":
        train_tokens, val_tokens = data.train_x.numel(), data.val_x.numel()
    else:   # the streams of the whole split
        train_tokens, val_tokens = len(data.train_ids) - 1, len(data.val_ids) - 1
    train_tokens, val_tokens = train_tokens * config.epochs, val_tokens * (config.epochs + 1)
    flops = 3 * per_token * train_tokens + per_token * val_tokens
    batch = min(config.batch_size, len(data.train_x)) if config.split == "book" else config.batch_size
    rate = (2 * h * h * matmul_gflops(batch, h, h) + 2 * h * V * matmul_gflops(batch, h, V)) / per_token
    return flops, rate, flops / (rate * 1e9)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="book")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0,
                    help="CPU threads (default: the preset's, as the passage's one; else torch's choice)")
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    args = ap.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: PyTorch sees no CUDA GPU here")
    preset = PRESETS[args.preset].config
    threads = args.threads or preset.threads or torch.get_num_threads()
    torch.set_num_threads(threads)     # the run's, and the floor's products measured at the same count
    config = replace(preset, device=args.device, epochs=size(preset.epochs, 2), threads=threads)
    compile_bytecode()   # as a second run or the Docker image starts (see common.compile_bytecode)
    imports = statistics.median(import_seconds() for _ in range(size(args.repeats, 1)))
    text = load_corpus()
    t0 = time.perf_counter()
    data = prepare_data(config, text)
    prep = time.perf_counter() - t0
    t0 = time.perf_counter()
    if args.device == "cuda":   # the CUDA context and the run's kernels, once per process
        loop.train(replace(config, epochs=1), data=data)
    cuda_start = time.perf_counter() - t0
    runs = [profiled_run(config, data) for _ in range(size(args.repeats, 1))]
    total = statistics.median(r[0] for r in runs)
    phases = {p: statistics.median(r[1][p] for r in runs) for p in PHASES}
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        save_run(runs[0][2], tmp)
        save = time.perf_counter() - t0
    rest = total - sum(phases.values())
    wall = imports + prep + total + save
    where = (f"the GPU ({torch.cuda.get_device_name()})" if args.device == "cuda"
             else f"the CPU ({threads} thread{'s' if threads > 1 else ''})")
    print(f"{args.preset} preset, {config.epochs} epochs on {where}, "
          f"median of {len(runs)} runs; validation perplexity {runs[0][2].final.val_ppl:.3f}")
    if runs[0][3]:   # the run went through core.nn.blocks
        phases = {(f"forward and backward, {config.blocks} blocks" if p == PHASES[0] else
                   "backward: the blocks' gradients handed over" if p == PHASES[1] else p): v
                  for p, v in phases.items()}
    rows = [("Python start and imports (a fresh process)", imports), ("preparing the data", prep),
            *phases.items(), ("the rest of the loop (batches, bookkeeping)", rest), ("saving the run", save)]
    for name, seconds in rows:
        print(f"  {name:<46} {seconds:7.2f} s  {100 * seconds / wall:5.1f}%")
    print(f"  {'the whole run':<46} {wall:7.2f} s")
    if args.device == "cuda":   # products this small are bound by kernel launches, not by arithmetic
        print(f"  before the runs, not counted above: CUDA start-up and a one-epoch warm-up, {cuda_start:.2f} s")
        print("floor: none on a GPU; at these sizes its time goes to launching kernels, not to arithmetic")
        return
    flops, rate, floor = floor_seconds(config, data)
    print(f"floor: {flops / 1e9:.0f} GFLOP of matrix products at {rate:.1f} GFLOP/s "
          f"(this CPU, the run's sizes) = {floor:.2f} s, plus {imports:.2f} s of imports = {floor + imports:.2f} s; "
          f"the run takes "
          f"{wall / (floor + imports):.1f}x the floor")


if __name__ == "__main__":
    main()
