"""Server time of a Forecasting rerun after a slider change (median of 20 AppTest reruns), server start, and where
one rerun's time goes (cProfile inside the script's thread: the maths, building the figures, st.plotly_chart).

    python bench/forecast_rerun.py
"""

# tests/test_benches.py runs this bench at a tiny size (RNNLAB_BENCH_TINY=1) with each argument list here
TINY_RUNS = [[]]
NEEDS_CORPUS = False

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


def where_the_time_goes(reruns: int) -> None:
    """cProfile over AppTest reruns of Forecasting after a tau change (the profiler is switched on inside the
    script's own thread, when the page starts), split by what the time is spent in."""
    import cProfile
    import pstats

    from streamlit.testing.v1 import AppTest
    from ui import url_state
    at = AppTest.from_file(str(ROOT / "pages" / "forecasting.py"), default_timeout=60).run()
    prof, start, walls = cProfile.Profile(), url_state.page, []

    def page(*args, **kwargs):
        prof.enable()              # in the script's thread; it ends with the run
        return start(*args, **kwargs)
    url_state.page = page
    try:
        for i in range(reruns):
            at.slider(key="forecasting.tau").set_value((8, 4, 16, 6, 12, 3)[i % 6])
            t0 = time.perf_counter()
            at.run()
            walls.append(time.perf_counter() - t0)
    finally:
        url_state.page = start
    prof.create_stats()
    stats = pstats.Stats(prof).stats

    def cum(pred) -> float:       # cumulative seconds per rerun in the functions pred picks (outermost calls)
        return sum(v[3] for (f, _, name), v in stats.items() if pred(f, name)) / reruns
    rows = (("everything in the script's thread (profiled)", sum(v[2] for v in stats.values()) / reruns),
            ("  the maths (core.sequences.forecast.analyse)", cum(lambda f, n: f.endswith("core/sequences/forecast.py") and n == "analyse")),
            ("  building the figures", cum(lambda f, n: f.endswith("core/labs/forecasting.py") and n.endswith("_figure"))),
            ("  st.plotly_chart (copy, to JSON, send)", cum(lambda f, n: f.endswith("plotly_chart.py")
                                                          and n == "plotly_chart")),
            ("  the exercise cards", cum(lambda f, n: f.endswith("ui/exercises.py") and n == "section")),
            ("  the controls", cum(lambda f, n: f.endswith("ui/common.py") and n == "controls_beside_view")))
    print(f"\none Forecasting rerun in process (AppTest), median of {reruns}: {1000 * statistics.median(walls):.0f} ms "
          "wall; cProfile's own cost about doubles what it measures")
    for name, seconds in rows:
        print(f"  {name:<45} {1000 * seconds:6.1f} ms")
    pstats.Stats(prof).sort_stats("cumulative").print_stats(15)


def server_start_seconds() -> float:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "ui.serve", "--server.port", str(port),
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
    where_the_time_goes(size(10, 1))
