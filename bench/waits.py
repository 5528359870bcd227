"""The wait budget: a real browser (Playwright on Debian's chromium) presses the app's slow buttons and moves its
sliders, and this prints, for each, the seconds to the first visible feedback and to the result, on an idle
server and with K simulated learners moving Forecasting's slider at the same time (bench/load.py's websocket
learners), as one table from one run.

    python bench/waits.py                 # 20 learners pressing Train; then idle, then 20 learners moving sliders
    python bench/waits.py --learners 0,5  # other loads
    python bench/waits.py --learners ""   # the presses only
    python bench/waits.py --teacher 100   # only the teacher's live view: 100 answers one at a time, each timed

First, a class pressing Train (--presses K, default 20, within --within seconds, default 10): on a fresh server
(`python -m ui.serve`, one training slot), K simulated learners (websocket clients, bench/st_client.py, which
follow the page's own refreshes as a browser does) each open the Training lab at Tiny with one epoch and press
Train at a random moment of those seconds. Printed: the seconds until each learner's page says where the run is
(its place in the queue, or that it starts), and until it shows the run's first train perplexity; the median,
the worst, and each learner's in the order they pressed.

What is timed, from the click or key press:
- Train (Tiny, 2 epochs): feedback = the run's status line; result = the first train perplexity on screen (the line
  under Train, after the first step, or the run's panel when the run ended between two draws of the page).
- Check on the Training lab's tr_slow exercise (it trains the passage at lr 0.1): feedback = the page's running
  indicator or the grade; result = the grade.
- Time both (after the acts): feedback = the spinner; result = the timings table.
- Text to tokens, first open on a new server, from its home page's menu (as a learner opens it): feedback = the
  page's title; result = its last chart drawn and the page's run over.
- The RNN cell's time-step slider, Act 1's tau slider (one key press): feedback = the slider's new value (drawn
  by the browser at once); result = the URL carrying the new value, the page's rerun done.
- A teacher sees a new answer: the class's view open, a learner's answer recorded (straight into the class
  records, as a learner's Check does); feedback = result = the view's chart counting it. Goal: within 2 s
  (issue 42). Several answers one at a time; the median is printed.
"""
from __future__ import annotations

# tests/test_benches.py runs this bench at a tiny size (RNNLAB_BENCH_TINY=1) with each argument list here
TINY_RUNS = [[]]
NEEDS_CORPUS = True


import argparse
import asyncio
import math
import os
import re
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import size  # noqa: E402
from load import Round, Server, one_learner  # noqa: E402
from core.labs import query  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
BLANK_RELOAD_S = 10.0   # a simulated learner whose page refreshes draw nothing for this long reloads it


class Background:
    """K simulated learners moving Forecasting's tau slider until stopped (a thread with its own event loop)."""

    def __init__(self, port: int, k: int):
        self.port, self.k, self.rnd = port, k, Round()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)

    async def _main(self) -> None:
        args = argparse.Namespace(page="forecasting", key="forecasting.tau", values=[2, 4, 8, 16], moves=10 ** 6)

        async def learner(i):
            task = asyncio.create_task(one_learner(self.port, args, self.rnd, seed=i))
            while not self.stop.is_set() and not task.done():
                await asyncio.sleep(0.2)
            task.cancel()
        await asyncio.gather(*(learner(i) for i in range(self.k)), return_exceptions=True)

    def __enter__(self):
        if self.k:
            self.thread.start()
            time.sleep(3)        # let them all open the page
        return self

    def __exit__(self, *exc):
        self.stop.set()
        if self.k:
            self.thread.join(timeout=30)


def timed(page, act, feedback, result, timeout=120) -> tuple[float, float]:
    """(seconds to feedback, seconds to result) after act(); feedback and result wait on the page."""
    t0 = time.perf_counter()
    act()
    feedback(timeout)
    t1 = time.perf_counter()
    result(timeout)
    return t1 - t0, time.perf_counter() - t0


def quiet(page, timeout=60) -> None:
    """Until Streamlit's running indicator has gone (a rerun finished)."""
    page.wait_for_timeout(100)
    page.locator("[data-testid='stStatusWidget']").wait_for(state="detached", timeout=timeout * 1000)


def rerun_done(page, before: str, timeout: float) -> None:
    """After a control moved: its rerun started (the URL changed, or the running indicator showed) and ended."""
    try:
        page.wait_for_function("u => location.href !== u || document.querySelector('[data-testid=stStatusWidget]')",
                               arg=before, timeout=3000)
    except Exception:   # noqa: BLE001 - a rerun too quick to show either: it is over already
        pass
    quiet(page, timeout)


def measure_all(base: str, browser, tiny: bool) -> dict[str, tuple[float, float]]:
    out = {}
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    ms = lambda s: s * 1000   # noqa: E731

    # Text to tokens, its first open on this server, after the app's home page (where a class starts)
    if not tiny:
        page.goto(base + "/")
        page.locator("h1").first.wait_for(timeout=60_000)
        quiet(page)
        link = page.locator("[data-testid='stSidebarNav'] a", has_text="Text to tokens")
        out["Text to tokens, first open"] = timed(
            page, link.click,
            lambda t: page.locator("h1").first.wait_for(timeout=ms(t)),
            lambda t: (page.locator("[data-testid='stPlotlyChart'][aria-label*='pretrained RNN scores']").wait_for(
                state="attached", timeout=ms(t)), quiet(page, t)))

    sliders = (("Act 1, tau slider", "/?" + urlencode(query("chapter", {"act": 1})), "Window τ", "ArrowRight"),
               ("RNN cell, time-step slider", "/rnn_cell", "Time step t", "ArrowRight"))
    for label, path, slider, key in sliders[:1] if tiny else sliders:
        page.goto(base + path)
        handle = page.get_by_role("slider", name=re.compile(slider)).first
        handle.wait_for(timeout=60_000)
        quiet(page)
        before = page.url
        out[label] = timed(page, lambda: (handle.focus(), page.keyboard.press(key)), lambda t: None,
                           lambda t: rerun_done(page, before, t))

    if not tiny:
        page.goto(base + "/?" + urlencode(query("chapter", {"act": 5})))
        button = page.get_by_role("button", name=re.compile("Time both"))
        button.wait_for(timeout=60_000)
        out["Time both (after the acts)"] = timed(
            page, button.click,
            lambda t: page.locator("[data-testid='stSpinner'], [data-testid='stProgress'], [data-testid="
                                   "'stStatusWidget']").or_(page.get_by_text("Seconds per epoch include")).first.wait_for(
                timeout=ms(t)),
            lambda t: page.get_by_text("Seconds per epoch include").first.wait_for(timeout=ms(t)))

        page.goto(base + "/training?" + urlencode(query("training", {"preset": "passage"})))
        check = page.locator(".st-key-ex-tr_slow-check button")
        check.wait_for(timeout=60_000)
        page.locator(".st-key-ex-tr_slow-answer").get_by_text("no", exact=True).click()
        quiet(page)
        out["Check: tr_slow (the passage at lr 0.1; its answer ships)"] = timed(
            page, check.click,
            lambda t: page.locator("[data-testid='stStatusWidget'], [data-testid='stSpinner']").or_(
                page.get_by_text("You answered no")).first.wait_for(timeout=ms(t)),
            lambda t: page.get_by_text("You answered no").wait_for(timeout=ms(t)))

    out["A teacher sees a new answer (median / worst)"] = teacher_sees(page, base, size(6, 1))

    page.goto(base + "/training?" + urlencode(query("training", {"preset": "tiny", "epochs": size(2, 1)})))
    train = page.get_by_role("button", name="Train", exact=True)
    train.wait_for(timeout=60_000)
    quiet(page)
    out["Train (Tiny): first train perplexity on screen"] = timed(
        page, train.click,
        lambda t: page.get_by_text(re.compile(r"tiny #\d+: ")).first.wait_for(timeout=ms(t)),
        lambda t: page.get_by_text(re.compile(r"train perplexity \d")).or_(   # the line under Train, or the
            page.get_by_test_id("stMetric").filter(has_text=re.compile(r"Train perplexity\s*\d"))  # panel: a run
        ).first.wait_for(timeout=ms(t)))                                            # over between two draws
    page.get_by_text(re.compile(r"tiny #\d+: (finished|stopped)")).first.wait_for(timeout=300_000)
    page.close()
    return out


def teacher_sees(page, base: str, answers: int, report: bool = False, with_run: bool = False) -> tuple[float, float]:
    """The class view open on the teacher's page; `answers` learners answer one at a time, a moment apart; returns
    the median and the worst seconds until the view counts each (the class records are the server's:
    RNNLAB_RUNS_DIR). report: print every delay and how many took over 2 s (issue 63's stalls)."""
    from core import classroom
    info = classroom.create_class("Waits")
    tokens = [classroom.join(info.join_code, f"Learner {i + 1}") for i in range(answers)]
    if with_run:                 # a learner's run training meanwhile: the view's runs chart redraws every 3 s too
        from core.runs import store
        from core.runs.config import PRESETS
        from core.runs.record import Status
        store.create("waitsrun0001", PRESETS["tiny"].config, "tiny #1", "cpu")
        store.set_state("waitsrun0001", Status.RUNNING)
        classroom.record_run(tokens[0], "waitsrun0001", "tiny #1", PRESETS["tiny"].config.to_dict())
    page.goto(f"{base}/classroom?{urlencode(query('classroom', {'shown': 'gf_thirty'}, teacher=info.teacher_token))}")
    page.locator("[aria-label*='No one of the']").wait_for(state="attached", timeout=120_000)
    quiet(page)
    delays = []
    for i, token in enumerate(tokens):
        started = time.perf_counter()
        classroom.record_attempt(token, "gf_thirty", 0.04, True, 0.0424)
        page.locator(f"[aria-label*='{i + 1} of {answers} learners answered']").first.wait_for(
            state="attached", timeout=120_000)
        delays.append(time.perf_counter() - started)
        time.sleep(0.7)      # answers a moment apart, at varied points of the view's one-second poll
    if report:
        late = [(i + 1, round(d, 2)) for i, d in enumerate(delays) if d > 2.0]
        print(f"{answers} answers, one at a time: median {statistics.median(delays):.2f} s, worst {max(delays):.2f} s, "
              f"{len(late)} over 2 s {late}; all: {' '.join(f'{d:.2f}' for d in delays)}", flush=True)
    return statistics.median(delays), max(delays)


def teacher_only(answers: int, with_run: bool = False) -> None:
    """--teacher N: only the teacher's live view, on a fresh idle server, N answers one at a time."""
    from playwright.sync_api import sync_playwright
    scratch = tempfile.TemporaryDirectory()
    runs = Path(scratch.name) / "runs"
    os.environ["RNNLAB_RUNS_DIR"] = str(runs)
    server = Server(dict(os.environ, RNNLAB_RUNS_DIR=str(runs)))
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM)
            teacher_sees(browser.new_page(viewport={"width": 1400, "height": 1000}),
                         f"http://127.0.0.1:{server.port}", answers, report=True, with_run=with_run)
            browser.close()
    finally:
        server.stop()


async def one_press(port: int, delay: float, epochs: int) -> dict:
    """A learner opens the Training lab (Tiny), presses Train after `delay` seconds, and follows the page as the
    browser does (its fragments' own refreshes): seconds from the press to the first screen that says where the
    run is (its place in the queue, or that it starts), its place then, and seconds to the first train
    perplexity on screen (the line under Train)."""
    from st_client import Learner
    tab = Learner(port)
    await tab.connect()
    try:
        await tab.open("training", urlencode(query("training", {"preset": "tiny", "epochs": epochs})))
        await asyncio.sleep(delay)
        t0 = time.perf_counter()
        await tab.press("tr.train")
        said = time.perf_counter() - t0
        line = next((text for kind, text in tab.shown if "in line" in text or "starts together" in text), "")
        found = re.search(r"number (\d+) in line", line)
        place = int(found.group(1)) if found else 1 if line else 0   # 1: next, with its group; 0: trains at once
        told = any(("in line" in text or "starts together" in text) or kind == "progress" for kind, text in tab.shown)
        blank_since, reloads = None, 0
        while not any(re.search(r"train perplexity:? \d", text, re.I) for kind, text in tab.shown
                      if kind in ("progress", "metric")):   # the line under Train, or the panel (a run already over)
            if time.perf_counter() - t0 > 240 or tab.errors:
                raise RuntimeError(f"no train perplexity within 240 s: {tab.errors or tab.shown} {tab.auto}")
            await asyncio.wait_for(tab.refresh(), 60)
            blank_since = None if tab.shown else blank_since or time.perf_counter()
            if blank_since and time.perf_counter() - blank_since > BLANK_RELOAD_S:
                # This websocket client, unlike a browser, can lose step with a page that reruns itself from a
                # fragment (st.rerun) while its other fragment refreshes: its refreshes then draw nothing. A
                # learner would reload; so does it, and the report counts it.
                await asyncio.wait_for(tab.reload(), 60)
                blank_since, reloads = None, reloads + 1
        return {"said": said if told else math.nan, "place": place, "first": time.perf_counter() - t0,
                "reloads": reloads, "pressed": t0}
    finally:
        await tab.close()


async def class_presses(port: int, k: int, within_s: float, epochs: int) -> list[dict]:
    """K learners, each with a page open, press Train at random moments within `within_s` seconds."""
    import random
    rng = random.Random(0)
    delays = sorted(rng.uniform(0, within_s) for _ in range(k))
    got = await asyncio.gather(*(one_press(port, 2.0 + d, epochs) for d in delays))
    return sorted(got, key=lambda g: g["pressed"])   # the pages opened at their own pace: by the press's moment


def report_presses(k: int, within_s: float, epochs: int) -> None:
    """A fresh server; K learners press Train (Tiny, `epochs` epochs) within `within_s` s; prints the waits."""
    with tempfile.TemporaryDirectory() as scratch:
        runs = Path(scratch) / "runs"
        server = Server(dict(os.environ, RNNLAB_MAX_CPU_RUNS="1", RNNLAB_RUNS_DIR=str(runs), RNNLAB_WARM_UP="0"))
        try:
            time.sleep(size(3, 0))   # the server's spare worker has started (ui.serve); the learners open pages next
            got = asyncio.run(class_presses(server.port, k, within_s, epochs))
        finally:
            server.stop()
    firsts, said = [g["first"] for g in got], [g["said"] for g in got]
    print(f"{k} learners pressing Train (Tiny, {epochs} epoch{'s' if epochs != 1 else ''}) within {within_s:g} s, "
          f"one server, one training slot: the place in line shown after a median {statistics.median(said):.2f} s "
          f"(worst {max(said):.2f} s; places {sorted(g['place'] for g in got)}); the first train perplexity on "
          f"screen after a median {statistics.median(firsts):.1f} s, worst {max(firsts):.1f} s; the first learner "
          f"{got[0]['first']:.2f} s, the last to press {got[-1]['first']:.1f} s (in order of pressing, place: seconds "
          + ", ".join(f"{g['place']}: {g['first']:.1f}" for g in got) + ")"
          + (f"; {sum(g['reloads'] for g in got)} reload(s) of a page whose refreshes drew nothing for "
             f"{BLANK_RELOAD_S:g} s (the client lost step with the page, see one_press)"
             if any(g["reloads"] for g in got) else ""), flush=True)


def training_speed(runs_dir: Path) -> float:
    """Tokens per second of the one run trained on this server (its run.json in the server's store)."""
    from core.runs.record import RunFile
    speeds = [RunFile.from_json(f.read_bytes()).tokens_per_s for f in runs_dir.glob("*/run.json")]
    return statistics.median(speeds) if speeds else float("nan")


def main() -> None:
    from playwright.sync_api import sync_playwright
    ap = argparse.ArgumentParser()
    ap.add_argument("--learners", default=size("0,20", "0"))
    ap.add_argument("--presses", type=int, default=size(20, 2), help="learners pressing Train together (0: none)")
    ap.add_argument("--within", type=float, default=size(10.0, 1.0), help="seconds in which they all press")
    ap.add_argument("--press-epochs", type=int, default=1)
    ap.add_argument("--teacher", type=int, default=0, help="only the teacher's live view: this many answers, one at "
                    "a time, each timed until the view counts it (issue 63: every one within 2 s)")
    ap.add_argument("--with-run", action="store_true", help="with --teacher: a learner's run training meanwhile")
    args = ap.parse_args()
    if args.teacher:
        teacher_only(args.teacher, args.with_run)
        return
    if args.presses:
        report_presses(args.presses, args.within, args.press_epochs)
    loads = [int(k) for k in args.learners.split(",") if k]   # --learners "": the presses only
    if not loads:
        return
    tables, speeds = {}, {}
    scratch = tempfile.TemporaryDirectory()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM)
        for k in loads:
            runs = Path(scratch.name) / f"runs-{k}"
            env = dict(os.environ, RNNLAB_MAX_CPU_RUNS="1", RNNLAB_RUNS_DIR=str(runs))
            os.environ["RNNLAB_RUNS_DIR"] = str(runs)     # the class the teacher's wait records into: the server's
            server = Server(env)       # a fresh server for each load: Text to tokens' first open is a first
            try:
                with Background(server.port, k) as bg:
                    tables[k] = measure_all(f"http://127.0.0.1:{server.port}", browser, tiny=size(False, True))
                    reruns = bg.rnd.reruns
                speeds[k] = training_speed(runs)
                if k:
                    print(f"{k} learners: their median rerun {1000 * statistics.median(reruns):.0f} ms over "
                          f"{len(reruns)} moves, {len(bg.rnd.errors)} errors", flush=True)
            finally:
                server.stop()
        browser.close()
    names = list(next(iter(tables.values())))
    head = "| wait | " + " | ".join(f"{k} learners: feedback / result (s)" for k in loads) + " |"
    print(head)
    print("|" + " --- |" * (len(loads) + 1))
    for name in names:
        cells = [f"{tables[k][name][0]:.2f} / {tables[k][name][1]:.2f}" for k in loads]
        print(f"| {name} | " + " | ".join(cells) + " |")
    base = speeds.get(loads[0], float("nan"))
    print("Train (Tiny)'s own speed: " + ", ".join(f"{k} learners {v:,.0f} tokens/s" for k, v in speeds.items())
          + "".join(f"; {k} learners / {loads[0]}: {base / v:.2f}x slower per step" for k, v in speeds.items()
                    if k != loads[0] and v > 0))


if __name__ == "__main__":
    main()
