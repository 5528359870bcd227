"""How soon an open teacher's view shows a new answer: one `streamlit run app.py`, the teacher's view open in
headless Debian chromium, and N answers recorded one at a time (as learners in other browsers would, straight
into the class records); for each, the seconds until the view's chart says the new count.

    python bench/teacher_live.py [--answers 8]

Issue 42's goal: within 2 s (the view polled every 20 s before, and answers took 3-17 s to appear). Prints the
median and the worst delay. Also prints the server's CPU share while the view sits open and nothing changes.
"""
from __future__ import annotations

# tests/test_benches.py runs this bench at a tiny size (RNNLAB_BENCH_TINY=1) with each argument list here
TINY_RUNS = [['--answers', '1']]
NEEDS_CORPUS = False

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

from common import ROOT, cpu_seconds, size


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, env: dict) -> subprocess.Popen:
    server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port",
                               str(port), "--server.headless", "true"], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(240):
        try:
            if urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).read() == b"ok":
                return server
        except OSError:
            time.sleep(0.5)
    raise SystemExit("the app server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=8)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright
    with tempfile.TemporaryDirectory() as folder:
        os.environ["RNNLAB_RUNS_DIR"] = folder
        from core import classroom
        info = classroom.create_class("Live")
        tokens = [classroom.join(info.join_code, f"Learner {i + 1}") for i in range(args.answers)]
        port = free_port()
        server = start_server(port, dict(os.environ, RNNLAB_WARM_WORKERS="0"))
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path="/usr/bin/chromium")
                page = browser.new_page(viewport={"width": 1400, "height": 1800})
                page.goto(f"http://127.0.0.1:{port}/classroom?teacher={info.teacher_token}&show=gf_thirty")
                page.wait_for_selector("[aria-label*='No one of the']", state="attached", timeout=120_000)
                time.sleep(size(3, 0.5))
                before, quiet = cpu_seconds(server.pid), size(10, 0.5)
                time.sleep(quiet)
                idle = (cpu_seconds(server.pid) - before) / quiet
                delays = []
                for i, token in enumerate(tokens):
                    started = time.perf_counter()
                    classroom.record_attempt(token, "gf_thirty", 0.04, True, 0.0424)
                    page.wait_for_selector(f"[aria-label*='{i + 1} of {len(tokens)} learners answered']",
                                           state="attached", timeout=60_000)
                    delays.append(time.perf_counter() - started)
                    time.sleep(size(0.7, 0.1))   # answers a moment apart, at varied points of the poll
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=30)
    print("each answer, seconds:", " ".join(f"{d:.2f}" for d in delays))
    print(f"{len(delays)} answers: the open teacher's view showed each after median {statistics.median(delays):.2f} s, "
          f"worst {max(delays):.2f} s (goal: within 2 s)")
    print(f"server CPU while the view sits open and nothing changes: {100 * idle:.1f}% of one core")


if __name__ == "__main__":
    main()
