"""A class at once: K simulated learners (websocket clients, bench/st_client.py) open a lab together and move
a slider every second or so; prints median and max rerun latency, session-open time and server memory, for
K = 1, 5, 10, 20, without and with a training run in progress, and with one or more server processes.

    python bench/load.py                          # Forecasting, one server process
    python bench/load.py --servers 1,2            # also two processes, learners split between them (as the
                                                  # sticky proxy in deploy/ does), with the ratios
    python bench/load.py --compare-defaults       # also Streamlit's defaults for what config.toml changes
    python bench/load.py --page sampling --key sampling.temp --values 0.5,1,1.5
    python bench/load.py --learners 20,40 --no-training

A learner waits for its rerun to finish, thinks 0.5-1.5 s, then moves the slider again (a real learner moves a
slider, looks at the result, moves it again). The training run is the book preset pressed from the Training
lab over the same protocol, so it runs exactly as a learner's would (in its own lower-priority process).
Numbers are from one run of this script; ratios compare settings measured in that same run.

Then a class moving together: the largest K learners on one server process move the slider to the same value
at the same instant ("now set tau to 8"), --bursts times; each learner's time to its answer (median and max),
beside the same learners moving one at a time.
"""
from __future__ import annotations

# tests/test_benches.py runs this bench at a tiny size (RNNLAB_BENCH_TINY=1) with each argument list here
TINY_RUNS = [['--learners', '1', '--moves', '2', '--no-training']]
NEEDS_CORPUS = False


import argparse
import asyncio
import os
import random
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import cpu_seconds, size  # noqa: E402
from st_client import Learner  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One `streamlit run app.py` process on a free port."""

    def __init__(self, env: dict, extra: list[str] = ()):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ui.serve", "--server.port", str(self.port),
             "--server.headless", "true", "--browser.gatherUsageStats", "false", *extra],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t0 = time.time()
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_stcore/health", timeout=1) as r:
                    if r.read() == b"ok":
                        return
            except OSError:
                if time.time() - t0 > 60:
                    raise RuntimeError("the server did not become healthy within 60 s")
                time.sleep(0.1)

    def rss_mb(self) -> float:
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            pass
        return float("nan")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@dataclass
class Round:
    opens: list = field(default_factory=list)
    reruns: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    rss_mb: float = 0.0


async def one_learner(port: int, args, rnd: Round, seed: int) -> None:
    rng = random.Random(seed)
    learner = Learner(port)
    try:
        await learner.connect()
        rnd.opens.append(await learner.open(args.page))
        for _ in range(args.moves):
            await asyncio.sleep(rng.uniform(0.5, 1.5))
            rnd.reruns.append(await learner.move(args.key, rng.choice(args.values)))
    except Exception as exc:  # counted, not raised: the bench reports errors
        rnd.errors.append(repr(exc))
    finally:
        rnd.errors.extend(learner.errors)
        await learner.close()


async def start_training(port: int) -> Learner:
    """Press Train (the book preset) on the Training lab, as a learner would; returns the open tab."""
    tab = Learner(port)
    await tab.connect()
    await tab.open("training")
    await tab.press("tr.train")
    return tab


async def a_round(servers: list[Server], k: int, args, training: bool) -> Round:
    rnd = Round()
    tab = await start_training(servers[0].port) if training else None
    if tab is not None:
        if not any(k.startswith("stop_") for k in tab.widgets):
            rnd.errors.append("the training run did not start: " + " | ".join(tab.alerts)[:300]
                              + f" (widgets: {', '.join(k for k in tab.widgets if not k.startswith('tr.'))})")
        await asyncio.sleep(3)   # let the run get going
    await asyncio.gather(*(one_learner(servers[i % len(servers)].port, args, rnd, seed=i) for i in range(k)))
    rnd.rss_mb = sum(s.rss_mb() for s in servers)
    if tab is not None:
        await tab.press_if_there("stop_")   # stop it, keeping the next round clean
        await tab.close()
        await asyncio.sleep(2)
    return rnd


async def bursts(port: int, k: int, n: int, args, pid: int) -> tuple[list[list[float]], list[float], list[float]]:
    """(each burst's K answer times, the staggered answer times, the server's CPU seconds in each burst): K learners
    on args.page move args.key together."""
    learners = [Learner(port) for _ in range(k)]
    for learner in learners:
        await learner.connect()
    await asyncio.gather(*(learner.open(args.page) for learner in learners))
    together, cpu = [], []
    for i in range(n):
        await asyncio.sleep(1.0)
        before = cpu_seconds(pid)
        value = args.values[i % len(args.values)]
        together.append(list(await asyncio.gather(*(learner.move(args.key, value) for learner in learners))))
        cpu.append(cpu_seconds(pid) - before)
    staggered = []
    for i, learner in enumerate(learners):
        await asyncio.sleep(0.3)
        staggered.append(await learner.move(args.key, args.values[(n + i) % len(args.values)]))
    errors = [e for learner in learners for e in learner.errors]
    for learner in learners:
        await learner.close()
    if errors:
        print(f"{len(errors)} errors, first: {errors[0][:200]}")
    return together, staggered, cpu


def report_bursts(server: Server, args) -> None:
    k = max(args.learners)
    t0 = time.process_time()
    together, staggered, cpu = asyncio.run(bursts(server.port, k, args.bursts, args, server.proc.pid))
    mine = time.process_time() - t0
    every = [t for times in together for t in times]
    print(f"{k} learners moving {args.key} together, {len(together)} bursts: median {ms(statistics.median(every))} ms, "
          f"max {ms(max(every))} ms (per burst: " + ", ".join(f"{ms(statistics.median(t)).strip()}" for t in together)
          + f" ms); one at a time: median {ms(statistics.median(staggered))} ms; the server's CPU per burst: median "
          f"{ms(statistics.median(cpu))} ms; these simulated learners' own CPU (on the same cores): {ms(mine)} ms in all")


def ms(x: float) -> str:
    return f"{1000 * x:6.0f}"


def median_rerun(r: Round) -> float:
    return statistics.median(r.reruns) if r.reruns else float("nan")


def measure(label: str, n_servers: int, extra: list[str], env: dict, args) -> dict:
    """Every round (learner counts, without and with training) on fresh servers of one configuration."""
    servers = [Server(env, extra) for _ in range(n_servers)]
    results = {}
    try:
        asyncio.run(a_round(servers, len(servers), args, training=False))   # warm-up: imports, caches
        print(f"\n{label}: {n_servers} server process(es)")
        print(" training  learners | rerun median    max | open median    max | errors | server MB")
        for k in args.learners:
            for training in ([False] if args.no_training else [False, True]) * args.repeats:
                r = asyncio.run(a_round(servers, k, args, training))   # repeats alternate, and pool
                if (training, k) in results:
                    old = results[training, k]
                    r = Round(old.opens + r.opens, old.reruns + r.reruns, old.errors + r.errors, r.rss_mb)
                results[training, k] = r
                print(f" {'yes' if training else 'no':>8}  {k:8d} | {ms(median_rerun(r))} ms "
                      f"{ms(max(r.reruns, default=float('nan')))} | {ms(statistics.median(r.opens))} ms "
                      f"{ms(max(r.opens))} | {len(r.errors):6d} | {r.rss_mb:9.0f}")
                for e in r.errors[:3]:
                    print("          error:", e[:300])
        if n_servers == 1:
            report_bursts(servers[0], args)
    finally:
        for s in servers:
            s.stop()
    return results


def ratios(label: str, top: dict, bottom: dict, training: bool = False, other_training: bool = False) -> None:
    ks = sorted(k for t, k in top if t == training)
    print(f"{label}:", ", ".join(f"{k}: {median_rerun(top[training, k]) / median_rerun(bottom[other_training, k]):.2f}x"
                                 for k in ks))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--page", default="forecasting")
    ap.add_argument("--key", default="forecasting.tau", help="the slider's key on that page")
    ap.add_argument("--values", default="3,4,5,6,8,10,12,16", help="values the slider is moved to")
    ap.add_argument("--learners", default="1,5,10,20")
    ap.add_argument("--moves", type=int, default=8, help="slider moves per learner")
    ap.add_argument("--servers", default="1", help="server process counts to measure, e.g. 1,2")
    ap.add_argument("--repeats", type=int, default=1,
                    help="rounds per learner count, alternating without and with training (pooled)")
    ap.add_argument("--no-training", action="store_true", help="skip the rounds with a training run going")
    ap.add_argument("--bursts", type=int, default=size(6, 1), help="synchronized moves of the largest class")
    ap.add_argument("--compare-defaults", action="store_true",
                    help="also measure one server with Streamlit's own defaults for what .streamlit/config.toml "
                         "changes for speed (a garbage collection after every rerun, file watching)")
    args = ap.parse_args()
    args.values = [float(v) for v in args.values.split(",")]
    args.learners = [int(v) for v in args.learners.split(",")]
    env = dict(os.environ, RNNLAB_MAX_QUEUE="50")
    corpus = ROOT.parent / "shared" / "data" / "timemachine.txt"
    if "RNNLAB_CORPUS" not in env and corpus.is_file():
        env["RNNLAB_CORPUS"] = str(corpus)   # the training rounds train on The Time Machine
    print(f"{args.page}: moving {args.key}; {os.cpu_count()} CPUs; {args.moves} moves per learner, 0.5-1.5 s apart")
    shipped = {n: measure("config.toml as shipped", n, [], env, args) for n in map(int, args.servers.split(","))}
    first = min(shipped)
    print()
    ratios(f"median rerun, K learners / {args.learners[0]} learner(s)", shipped[first],
           {(False, k): shipped[first][False, args.learners[0]] for k in args.learners})
    if not args.no_training:
        ratios("median rerun with a training run / without", shipped[first], shipped[first], True, False)
    for n in sorted(shipped)[1:]:
        ratios(f"median rerun, {n} server processes / {first}", shipped[n], shipped[first])
    if args.compare_defaults:
        defaults = measure("Streamlit defaults", first, ["--runner.postScriptGC", "true",
                                                          "--server.fileWatcherType", "auto"], env, args)
        ratios("median rerun, Streamlit defaults / as shipped", defaults, shipped[first])
        if not args.no_training:
            ratios("... with a training run", defaults, shipped[first], True, True)


if __name__ == "__main__":
    main()
