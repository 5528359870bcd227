"""A class answering at once: P processes (as several web processes behind the proxy) x W writer threads each,
every writer a learner recording N attempts as fast as it can into one class's SQLite records.

    python bench/class_writes.py [--processes 4] [--writers 8] [--writes 150]

At the defaults that is 4,800 attempts (issue 42: 1 and 65 of them were lost in two overload runs before writes
waited out a busy database and tried again). Prints the writes kept against those made, the writes that failed
(a learner would have seen "too busy"), and the time per write (median and 99th percentile) across all writers.
"""
from __future__ import annotations

# tests/test_benches.py runs this bench at a tiny size (RNNLAB_BENCH_TINY=1) with each argument list here
TINY_RUNS = [['--processes', '2', '--writers', '2', '--writes', '5']]
NEEDS_CORPUS = False

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from common import ROOT


def writer_process(code: str, prefix: str, writers: int, writes: int) -> None:
    """One process: `writers` learners join and answer at once; prints its times and failures as JSON."""
    from core import classroom
    times, failed = [], []

    def one(i: int) -> None:
        token = classroom.join(code, f"{prefix}-{i}")
        for k in range(writes):
            t0 = time.perf_counter()
            try:
                classroom.record_attempt(token, "gf_thirty", 0.01 * k, k % 2 == 0, 0.0424)
            except ValueError as exc:
                failed.append(str(exc))
            times.append(time.perf_counter() - t0)
    threads = [threading.Thread(target=one, args=(i,)) for i in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({"times": times, "failed": failed}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--writes", type=int, default=150)
    parser.add_argument("--child", nargs=2, metavar=("CODE", "PREFIX"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return writer_process(*args.child, args.writers, args.writes)
    from core import classroom
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, RNNLAB_RUNS_DIR=folder)
        os.environ["RNNLAB_RUNS_DIR"] = folder
        info = classroom.create_class("Overload")
        started = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, __file__, "--child", info.join_code, f"p{p}", "--writers",
                                   str(args.writers), "--writes", str(args.writes)], env=env, cwd=ROOT / "bench",
                                  stdout=subprocess.PIPE, text=True) for p in range(args.processes)]
        outs = [json.loads(p.communicate()[0]) for p in procs]
        wall = time.perf_counter() - started
        made = args.processes * args.writers * args.writes
        kept = len(classroom.class_attempts(info.id))
    times = sorted(t for o in outs for t in o["times"])
    failed = [f for o in outs for f in o["failed"]]
    p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
    print(f"{args.processes} processes x {args.writers} writers x {args.writes} writes = {made} attempts in "
          f"{wall:.1f} s ({made / wall:.0f} a second)")
    print(f"kept {kept} of {made}; lost {made - kept}; failed with 'too busy': {len(failed)}")
    print(f"time per write: median {1000 * statistics.median(times):.1f} ms, 99th percentile {1000 * p99:.1f} ms, "
          f"worst {1000 * times[-1]:.1f} ms")
    if kept != made:
        sys.exit(1)


if __name__ == "__main__":
    main()
