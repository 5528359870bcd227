"""Memory and gates (issue 64): a live comparison at the lab's defaults (the RNN, the GRU and the LSTM, 300 steps each
at delay 40) trained the way the page trains it: submitted to a job manager whose runs train in a worker process
(warm, as a server keeps one), from the press to the saved run, median of a few; and whether it reproduced the
shipped run (assets/gates_run.json) to the last digit. Also the page's first draw at its defaults (AppTest, the
stored comparison: reading it and analysing it once per server).

    python bench/gates.py [--runs 3]
"""

# tests/test_benches.py runs this bench at a tiny size (RNNLAB_BENCH_TINY=1) with each argument list here
TINY_RUNS = [["--runs", "1"]]
NEEDS_CORPUS = False

import argparse
import os
import statistics
import tempfile
import time

from common import ROOT, compile_bytecode, size


def live_seconds(comparison) -> tuple[float, object]:
    from core.runs import launchers
    from core.runs.jobs import JobManager
    manager = JobManager(max_cpu=1, max_gpu=0, mode="process")
    launchers.POOL.fill()
    while not launchers.POOL.spare:
        time.sleep(0.05)
    time.sleep(size(8, 0))                   # the spare worker has done its imports, as on a server a while up
    started = time.perf_counter()
    job = manager.submit(comparison, "", "bench")
    while job.active:
        time.sleep(0.05)
    assert job.status == "finished", job.message
    return time.perf_counter() - started, job.result


def first_draw_seconds() -> float:
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(str(ROOT / "pages" / "gates.py"), default_timeout=120)
    started = time.perf_counter()
    at.run()
    assert not at.exception, at.exception
    return time.perf_counter() - started


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    os.environ["RNNLAB_WARM_WORKERS"] = "1"
    os.environ.setdefault("RNNLAB_RUNS_DIR", tempfile.mkdtemp(prefix="rnnlab-bench-"))
    compile_bytecode()
    from core.nn import memory_store
    shipped = memory_store.load()
    comparison = size(memory_store.Comparison(), memory_store.Comparison(delay=3, hidden=4, steps=50))
    print(f"first draw of /gates at its defaults: {first_draw_seconds():.2f} s (AppTest, a fresh server's first)")
    times, same = [], []
    for _ in range(args.runs):
        seconds, saved = live_seconds(comparison)
        times.append(seconds)
        same.append(all(saved.cells[k].accuracy == shipped.cells[k].accuracy for k in saved.cells))
    print(f"live comparison ({comparison.total_steps} steps in all, delay {comparison.delay}), press to saved run: "
          f"median {statistics.median(times):.1f} s (min {min(times):.1f}, max {max(times):.1f}; {len(times)} runs); "
          f"goal at most 20 s")
    if comparison == shipped.comparison:
        print(f"reproduced the shipped run's curves exactly: {sum(same)} of {len(same)} runs")
