"""Shared fixtures: the corpus path, a live Streamlit server, and Playwright on Debian's chromium."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
SHARED_CORPUS = ROOT.parent / "shared" / "data" / "timemachine.txt"
# No spare training workers unless a test asks for them (RNNLAB_WARM_WORKERS=1 there): a spare imports torch
# (2 CPU-s) in every server and after every run taken, and most of the suite's servers never train. A Train press
# then starts its worker on demand, which a test waits for as for any state.
os.environ.setdefault("RNNLAB_WARM_WORKERS", "0")


def _scan_installed_components_once() -> None:
    """Each new AppTest scans every installed package's metadata for Streamlit components (about 0.2 s of CPU,
    some 400 times in a run of the suite, in pytest's own process); the packages do not change while the tests
    run, so the scan's answer is kept from the first. Every AppTest still registers what it found."""
    from functools import lru_cache

    from streamlit.components.v2 import manifest_scanner
    if not hasattr(manifest_scanner.scan_component_manifests, "cache_info"):
        manifest_scanner.scan_component_manifests = lru_cache(maxsize=None)(manifest_scanner.scan_component_manifests)


_scan_installed_components_once()


def corpus_path() -> Path | None:
    """The local Time Machine copy the tests may use (RNNLAB_CORPUS or ../shared/data), else None."""
    env = os.environ.get("RNNLAB_CORPUS")
    if env and Path(env).is_file():
        return Path(env)
    return SHARED_CORPUS if SHARED_CORPUS.is_file() else None


@pytest.fixture(scope="session", autouse=True)
def train_each_exercise_once():
    """The exercises whose computation trains a model (Exercise.trains: the passage run, seconds each) run once
    per settings in this session; several files check the same run's answer (its grader, its pinned value, its
    JSON round trip, the self-check). A test that replaces Exercise.run replaces this too."""
    import json
    from core.exercises.types import Exercise
    plain_run, done = Exercise.run, {}

    def run(self, settings=None):
        if not self.trains:
            return plain_run(self, settings)
        from core.i18n import current   # an explanation is in the language it was asked in
        key = (self.key, json.dumps({**self.settings, **(settings or {})}, sort_keys=True), current())
        if key not in done:
            done[key] = plain_run(self, settings)
        return done[key]
    Exercise.run = run
    yield
    Exercise.run = plain_run


@pytest.fixture(scope="session")
def corpus_file() -> Path:
    path = corpus_path()
    if path is None:
        pytest.skip("The Time Machine corpus is not available locally (set RNNLAB_CORPUS).")
    return path


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Never touch the learner's cache directory, never download: point the cache at a temp folder. The corpus is
    RNNLAB_CORPUS (set here when a local copy exists), never the copy beside the clone that the CLI finds, so a
    test that unsets RNNLAB_CORPUS sees an app without a corpus."""
    from core.text import corpus
    monkeypatch.setattr(corpus, "BESIDE_CLONE", tmp_path_factory.getbasetemp() / "no-corpus-here.txt")
    monkeypatch.setenv("RNNLAB_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "rnnlab-cache"))
    path = corpus_path()
    if path is not None:
        monkeypatch.setenv("RNNLAB_CORPUS", str(path))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(port: int, proc: subprocess.Popen | None = None, seconds: float = 60) -> None:
    """Until the Streamlit server on this port answers its health check (the test fails after `seconds`)."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                if r.read() == b"ok":
                    return
        except OSError:
            time.sleep(0.3)
    if proc is not None:
        proc.kill()
    pytest.fail(f"streamlit did not become healthy within {seconds:g} s")


@pytest.fixture(scope="session")
def app_url(tmp_path_factory):
    """A real `streamlit run app.py` on a free loopback port, for the browser tests."""
    port = _free_port()
    env = dict(os.environ, RNNLAB_CACHE_DIR=str(tmp_path_factory.mktemp("server-cache")),
               RNNLAB_MAX_CPU_RUNS="1", PYTHONUNBUFFERED="1")
    path = corpus_path()
    if path is not None:
        env["RNNLAB_CORPUS"] = str(path)
    log = open(tmp_path_factory.mktemp("server") / "streamlit.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "ui.serve", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    wait_healthy(port, proc)
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.fail("Debian's chromium is not on PATH: scripts/test.sh installs it (apt-get install chromium).")
    return {**browser_type_launch_args, "executable_path": chromium, "args": [
        "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1400, "height": 900}}


@pytest.fixture(scope="session")
def _one_context(browser, browser_context_args):
    context = browser.new_context(**browser_context_args)
    yield context
    context.close()


@pytest.fixture
def page(_one_context, browser_context_args):
    """pytest-playwright's page, but one tab for all the tests that take it, as one learner moving from page to page:
    a new browser context for each test fetched and compiled Streamlit's scripts again (about 2 s a test here). Each
    test still starts as a first visit: no cookie (the app keeps nothing else in the browser), the usual window
    size, no other tab. Tests of several learners open contexts of their own."""
    tab = next((t for t in _one_context.pages if not t.is_closed()), None) or _one_context.new_page()
    _one_context.clear_cookies()
    tab.set_viewport_size(browser_context_args["viewport"])
    yield tab
    for other in _one_context.pages:
        if other is not tab:
            other.close()
    if not tab.is_closed():
        tab.goto("about:blank")   # its Streamlit session ends here, not during the next test
    _one_context.clear_cookies()


@pytest.fixture(scope="session")
def shots_dir() -> Path:
    out = ROOT / "tests" / "screenshots"
    out.mkdir(exist_ok=True)
    return out
