"""GPU against CPU on the presets (tokens per second, measured in one run), and the book preset over seeds.

    python bench/gpu.py              # needs a CUDA GPU; prints a note and exits 0 otherwise
    python bench/gpu.py --seeds 8    # also the book preset on the GPU for seeds 0-7 (final perplexity)

The CPU figure is measured on the same machine in the same run (a few epochs: its tokens per second do not
depend on how many epochs run), with every CPU thread PyTorch uses there."""

# tests/test_benches.py runs this bench at a tiny size (RNNLAB_BENCH_TINY=1) with each argument list here
TINY_RUNS = [['--presets', 'tiny', '--cpu-epochs', '1', '--seeds', '1']]
NEEDS_CORPUS = True

import argparse
import statistics
import time
from dataclasses import replace

import torch

from common import TINY, size
from core.text.corpus import load_corpus
from core.runs.config import PRESETS
from core.runs.data import prepare_data
from core.runs.loop import train


def line(name: str, r) -> str:
    return (f"{name:>5} on {r.device}: {r.tokens_per_s:>12,.0f} tokens/s, {r.elapsed:6.1f} s for "
            f"{r.final.epoch} epochs, val ppl {r.final.val_ppl:.3f}, {r.final.val_bpb:.3f} bits/byte")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--presets", default="book,bpe,whole")
    parser.add_argument("--cpu-epochs", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=0)
    args = parser.parse_args()
    gpu = "cuda" if torch.cuda.is_available() else "cpu" if TINY else None   # tiny: the CPU stands in, to test it
    if gpu is None:
        print("no CUDA GPU visible: nothing to measure")
        return
    if gpu == "cuda":
        print(f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}, CUDA {torch.version.cuda}, "
              f"cuDNN {torch.backends.cudnn.version()}; CPU threads {torch.get_num_threads()}")
    text = load_corpus()
    # Warm-up: CUDA context, cuDNN handles and kernels load once per process, not per run.
    train(replace(PRESETS["tiny"].config, device=gpu, epochs=1), text)
    for name in args.presets.split(","):
        data = prepare_data(PRESETS[name].config, text)
        rates = {}
        for side, dev in (("gpu", gpu), ("cpu", "cpu")):
            cfg = replace(PRESETS[name].config, device=dev, epochs=size(PRESETS[name].config.epochs, 1))
            if side == "cpu":
                cfg = replace(cfg, epochs=min(cfg.epochs, args.cpu_epochs))
            r = train(cfg, data=data)
            rates[side] = r.tokens_per_s
            print(line(name, r), flush=True)
        print(f"{name:>5}: GPU/CPU tokens per second = {rates['gpu'] / rates['cpu']:.1f}x", flush=True)
    if args.seeds:
        data = prepare_data(PRESETS["book"].config, text)
        ppl, secs = [], []
        for seed in range(args.seeds):
            t = time.perf_counter()
            r = train(replace(PRESETS["book"].config, device=gpu, seed=seed, epochs=size(100, 1)), data=data)
            secs.append(time.perf_counter() - t)
            ppl.append(r.final.val_ppl)
            print(f"book seed {seed} on {gpu}: val ppl {ppl[-1]:.3f}, {secs[-1]:.1f} s", flush=True)
        print(f"book on {gpu} over seeds 0-{args.seeds - 1}: mean val ppl {statistics.mean(ppl):.3f} "
              f"(min {min(ppl):.3f}, max {max(ppl):.3f}), mean {statistics.mean(secs):.1f} s a run")


if __name__ == "__main__":
    main()
