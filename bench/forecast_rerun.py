"""Server time of a Forecasting rerun after a slider change (median of 20 AppTest reruns), and server start.

    python bench/forecast_rerun.py
"""
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

from streamlit.testing.v1 import AppTest

from common import ROOT, size


def rerun_times(n: int | None = None) -> list[float]:
    at = AppTest.from_file(str(ROOT / "pages" / "forecasting.py"), default_timeout=60).run()
    slider = "forecasting.tau"
    times = []
    for i in range(n or size(20, 2)):
        at.slider(key=slider).set_value(4 + (i % 8))
        t0 = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - t0)
        assert not at.exception
    return times


def server_start_seconds() -> float:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port", str(port),
                             "--server.headless", "true"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1) as r:
                    if r.read() == b"ok":
                        return time.perf_counter() - t0
            except OSError:
                if time.perf_counter() - t0 > 60:
                    raise RuntimeError("server not healthy within 60 s")
                time.sleep(0.05)
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    times = rerun_times()
    print(f"forecasting rerun after a tau change, T=1000: median {1000 * statistics.median(times):.1f} ms "
          f"(min {1000 * min(times):.1f}, max {1000 * max(times):.1f}) over {len(times)} AppTest reruns; target < 100 ms")
    print(f"server healthy after {server_start_seconds():.2f} s; target < 5 s")
