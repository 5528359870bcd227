"""What idle tabs cost the server: CPU of one `streamlit run app.py` while N browser tabs sit open on a page.

    python bench/idle_tabs.py [--tabs 5] [--seconds 20]

Opens N tabs (headless Debian chromium) on the Training page with no run, then on Forecasting, then on a class's
teacher view (which polls its class every second for a change), and measures the server process's CPU time over
the same window for each; prints each as a share of one core (issue 19's target: 5 idle Training tabs under 5%).
"""
from __future__ import annotations

# tests/test_benches.py runs this bench at a tiny size (RNNLAB_BENCH_TINY=1) with each argument list here
TINY_RUNS = [['--tabs', '1', '--seconds', '0.3']]
NEEDS_CORPUS = False


import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from urllib.parse import urlencode

from common import ROOT, cpu_seconds, size
from core.labs import query


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tabs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=20)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright
    runs = tempfile.TemporaryDirectory()
    os.environ["RNNLAB_RUNS_DIR"] = runs.name      # the server's and this process's class records
    from core import classroom
    teacher = classroom.create_class("Idle").teacher_token
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "ui.serve", "--server.port",
                               str(port), "--server.headless", "true"], cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium")   # while the server starts
            for _ in range(120):
                try:
                    if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                        break
                except OSError:
                    time.sleep(0.5)
            pages = ("/training", "/forecasting", "/classroom?" + urlencode(query("classroom", teacher=teacher)))
            for page_path in size(pages, pages[-1:]):   # a tiny run: the teacher's view, whose poll is the busiest
                tabs = [browser.new_page() for _ in range(args.tabs)]
                for tab in tabs:
                    tab.goto(url + page_path)
                    tab.wait_for_selector("h1", timeout=60_000)
                time.sleep(size(5, 0.1))   # let the first renders finish (a tiny run only checks the bench runs)
                before = cpu_seconds(server.pid)
                time.sleep(args.seconds)
                used = cpu_seconds(server.pid) - before
                print(f"{args.tabs} idle tabs on {page_path.split('?')[0]:13s}: server CPU {100 * used / args.seconds:5.1f}% of "
                      f"one core over {args.seconds:g} s")
                for tab in tabs:
                    tab.close()
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
