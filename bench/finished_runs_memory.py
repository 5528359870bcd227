"""Server memory after N finished runs, with training in worker processes (the default) and in server threads.

    python bench/finished_runs_memory.py [--runs 10] [--hidden 1536]

Each run is one epoch of a model with large weights (hidden units as given) on a small text; the runs finish,
their learners are gone, and the server (this process, holding the job manager) is measured: resident memory
(RSS) after the runs against before, both modes in one run of the script. Target (issue 19): within 50 MB with
worker processes.
"""
from __future__ import annotations

# tests/test_benches.py runs this bench at a tiny size (RNNLAB_BENCH_TINY=1) with each argument list here
TINY_RUNS = [['--runs', '1', '--hidden', '64']]
NEEDS_CORPUS = False


import argparse
import gc
import os
import tempfile

from common import ROOT  # noqa: F401  (puts the project on sys.path)


def rss_mb() -> float:
    with open(f"/proc/{os.getpid()}/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def measure(mode: str, runs: int, hidden: int) -> tuple[float, float]:
    from core.runs.config import TrainConfig
    from core.runs.jobs import JobManager
    text = "the quick brown fox jumps over the lazy dog " * 300
    cfg = TrainConfig(hidden_size=hidden, num_train=2000, num_val=200, num_steps=16, batch_size=256, epochs=1,
                      sample_length=5)
    manager = JobManager(max_cpu=1, max_gpu=0, mode=mode, session_alive=lambda sid: False)
    gc.collect()
    start = rss_mb()
    for i in range(runs):
        job = manager.submit(cfg, text, f"learner {i}")
        job.thread.join(600)
        assert job.status == "finished", job.message
    gc.collect()
    return start, rss_mb()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--hidden", type=int, default=1536)
    args = parser.parse_args()
    os.environ.setdefault("RNNLAB_CACHE_DIR", tempfile.mkdtemp(prefix="rnnlab-bench-"))
    for mode in ("process", "thread"):
        before, after = measure(mode, args.runs, args.hidden)
        print(f"{mode:8s}: server RSS {before:7.1f} MB before, {after:7.1f} MB after {args.runs} finished runs "
              f"(hidden {args.hidden}): +{after - before:.1f} MB")


if __name__ == "__main__":
    main()
