"""A class moving together: K learners (websocket clients, bench/st_client.py) on one server process move the same
Forecasting slider to the same value at the same instant ("now set tau to 8"), R times; prints each learner's time
to its answer (median and max per burst, and over all bursts), and beside it the same K learners moving one at a
time (staggered), from the same run.

    python bench/burst.py                     # 20 learners, 6 bursts
    python bench/burst.py --learners 10 --bursts 4

Then, where one rerun's server time goes (an in-process AppTest rerun of the same page under cProfile): the page's
script without its charts, building the figures, turning them into JSON, and the rest.
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, size  # noqa: E402
from load import Server  # noqa: E402
from st_client import Learner  # noqa: E402

KEY, VALUES = "forecasting.tau", (8, 4, 16, 6, 12, 3)


async def bursts(port: int, k: int, n: int) -> tuple[list[list[float]], list[float]]:
    """(each burst's K answer times, the staggered answer times)."""
    learners = [Learner(port) for _ in range(k)]
    for learner in learners:
        await learner.connect()
    await asyncio.gather(*(learner.open("forecasting") for learner in learners))
    together = []
    for i in range(n):
        await asyncio.sleep(1.0)
        together.append(list(await asyncio.gather(*(learner.move(KEY, VALUES[i % len(VALUES)]) for learner in learners))))
    staggered = []
    for i, learner in enumerate(learners):
        await asyncio.sleep(0.3)
        staggered.append(await learner.move(KEY, VALUES[(n + i) % len(VALUES)]))
    errors = [e for learner in learners for e in learner.errors]
    for learner in learners:
        await learner.close()
    if errors:
        print(f"{len(errors)} errors, first: {errors[0][:200]}")
    return together, staggered


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
            at.slider(key=KEY).set_value(VALUES[i % len(VALUES)])
            t0 = time.perf_counter()
            at.run()
            walls.append(time.perf_counter() - t0)
    finally:
        url_state.page = start
    prof.create_stats()
    stats = pstats.Stats(prof).stats

    def cum(pred) -> float:       # cumulative seconds per rerun in the functions pred picks (outermost calls)
        return sum(v[3] for (f, _, name), v in stats.items() if pred(f, name)) / reruns
    rows = (("the page's script, all of it", cum(lambda f, n: f.endswith("ui/url_state.py") and n == "page")
             + cum(lambda f, n: f.endswith("pages/forecasting.py") and n == "main")),
            ("the maths (core.forecast.analyse)", cum(lambda f, n: f.endswith("core/forecast.py") and n == "analyse")),
            ("building the figures", cum(lambda f, n: f.endswith("pages/forecasting.py") and n.endswith("_figure"))),
            ("st.plotly_chart (copy, to JSON, send)", cum(lambda f, n: f.endswith("plotly_chart.py") and n == "plotly_chart")),
            ("  of it, plotly.io.to_json", cum(lambda f, n: f.endswith("plotly/io/_json.py") and n == "to_json")),
            ("markdown, metrics and the rest", 0.0))
    print(f"\none Forecasting rerun in process (AppTest), median of {reruns}: {1000 * statistics.median(walls):.0f} ms wall")
    for name, seconds in rows[:-1]:
        print(f"  {name:<42} {1000 * seconds:6.1f} ms")
    pstats.Stats(prof).sort_stats("cumulative").print_stats(40)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--learners", type=int, default=size(20, 4))
    ap.add_argument("--bursts", type=int, default=size(6, 2))
    args = ap.parse_args()
    server = Server({**__import__("os").environ})
    try:
        asyncio.run(bursts(server.port, 1, 1))                    # warm-up: imports, caches
        together, staggered = asyncio.run(bursts(server.port, args.learners, args.bursts))
    finally:
        server.stop()
    print(f"{args.learners} learners on one server process, the same slider move at the same instant:")
    for i, times in enumerate(together):
        print(f"  burst {i + 1} (tau = {VALUES[i % len(VALUES)]:2d}): median {1000 * statistics.median(times):5.0f} ms, "
              f"max {1000 * max(times):5.0f} ms")
    everything = [t for times in together for t in times]
    print(f"all bursts: median {1000 * statistics.median(everything):.0f} ms (goal < 500 ms), "
          f"max {1000 * max(everything):.0f} ms; one at a time: median {1000 * statistics.median(staggered):.0f} ms")
    where_the_time_goes(size(10, 2))


if __name__ == "__main__":
    main()
