"""Several web processes behind HAProxy (deploy/haproxy.cfg), sharing one run store: a learner's tab stays on
one process (sticky cookie, websocket included), and a run started on one process opens on the other."""
import os
import re
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.sync_api import expect

from core.labs import Url, query
from conftest import ROOT, _free_port, corpus_path

pytestmark = pytest.mark.browser


def _healthy(url: str, seconds: float = 60) -> bool:
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.read() == b"ok":
                    return True
        except OSError:
            time.sleep(0.3)
    return False


def _both_up(url: str, seconds: float = 60) -> bool:
    """Until HAProxy's health checks have marked both processes up: new visitors (no cookie) are then sent to
    each of them, as the sticky cookie it sets names."""
    seen, deadline = set(), time.time() + seconds
    while seen != {"app1", "app2"} and time.time() < deadline:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=5) as r:
            cookie = " ".join(r.headers.get_all("Set-Cookie") or [])   # Streamlit sets one of its own too
        seen.update(name for name in ("app1", "app2") if f"RNNLAB_SERVER={name}" in cookie)
        time.sleep(0.1)
    return seen == {"app1", "app2"}


APP_PIDS: list[int] = []   # the class site's two app processes, for the warm-start test


def worker_children(pid: int) -> list[int]:
    """The `python -m core.runs.worker` processes whose parent is pid (Linux's /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid and b"core.runs.worker" in cmd:
            found.append(int(entry.name))
    return found


def _app_processes(ports: list[int], seconds: float = 120) -> list[int]:
    """The pids of the `python -m ui.serve` processes serving these ports (class.sh's children)."""
    deadline, found = time.time() + seconds, {}
    while True:
        for entry in Path("/proc").iterdir():
            try:
                cmd = (entry / "cmdline").read_bytes().split(b"\0")
            except (OSError, ValueError):
                continue
            if b"ui.serve" in cmd and b"--server.port" in cmd:
                port = int(cmd[cmd.index(b"--server.port") + 1])
                if port in ports:
                    found[port] = int(entry.name)
        if len(found) == len(ports) or time.time() >= deadline:
            return [found[p] for p in ports if p in found]
        time.sleep(0.2)


@pytest.fixture(scope="module")
def class_site(tmp_path_factory):
    """A class on one machine without Docker, as the README starts it: `bash scripts/class.sh` (two `python -m
    ui.serve` processes with one shared run store, behind HAProxy); yields the proxy's URL."""
    haproxy = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/usr/local/sbin")
    if haproxy is None:
        pytest.fail("HAProxy is not installed: scripts/test.sh installs it (apt-get install haproxy).")
    tmp = tmp_path_factory.mktemp("class-site")
    ports, front = [_free_port(), _free_port()], _free_port()
    env = dict(os.environ, RNNLAB_CACHE_DIR=str(tmp / "cache"), RNNLAB_RUNS_DIR=str(tmp / "runs"),
               RNNLAB_MAX_CPU_RUNS="1", RNNLAB_WARM_UP="0",   # no page here opens Text to tokens
               RNNLAB_WARM_WORKERS="1",   # the deploy as a class gets it: a spare worker each
               PORT=str(front), HOST="127.0.0.1", APP_PORTS=f"{ports[0]} {ports[1]}")
    if corpus_path() is not None:
        env["RNNLAB_CORPUS"] = str(corpus_path())
    log = open(tmp / "class.log", "w")
    script = subprocess.Popen(["bash", str(ROOT / "scripts" / "class.sh")], cwd=ROOT, env=env, stdout=log,
                              stderr=subprocess.STDOUT)
    try:
        for port in ports:
            assert _healthy(f"http://127.0.0.1:{port}", 300), "an app process did not become healthy"
        APP_PIDS[:] = _app_processes(ports)
        url = f"http://127.0.0.1:{front}"
        assert _healthy(url), "HAProxy did not answer"
        assert _both_up(url), "HAProxy did not send requests to both app processes"
        yield url
    finally:
        script.terminate()                       # class.sh stops its three processes as it ends
        try:
            script.wait(timeout=30)
        except subprocess.TimeoutExpired:
            script.kill()
        log.close()
        said = (tmp / "class.log").read_text()
        assert "class.sh: RNN Lab for a class on http://localhost:" in said, said[-2000:]
        assert not _app_processes(ports, seconds=0), "class.sh left an app process running"


def remembered(page, seconds: float = 30) -> None:
    """Until the browser holds the learner's cookie (set by a tiny frame just after joining): a link opened next,
    without the code in it, then finds the learner."""
    deadline = time.time() + seconds
    while not any(c["name"] == "rnnlab_me" for c in page.context.cookies()):
        assert time.time() < deadline, "the learner's cookie was never set"
        page.wait_for_timeout(100)


def server_of(context) -> str:
    return next(c["value"] for c in context.cookies() if c["name"] == "RNNLAB_SERVER")


def test_each_app_process_starts_its_spare_worker_before_any_page_opens(class_site):
    """Issue 43: `python -m ui.serve` (the deploy's command) starts a training worker with the server, so the first
    learner's Train press finds one warm, as the hundredth does. Only health checks have reached the apps yet."""
    for pid in APP_PIDS:
        deadline = time.time() + 60
        while not worker_children(pid):
            assert time.time() < deadline, f"app process {pid} started no spare training worker"
            time.sleep(0.2)


def test_a_run_started_on_one_process_opens_on_the_other(browser, class_site, corpus_file):
    first = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = first.new_page()
    tab.goto(class_site + "/training?preset=tiny&epochs=2")
    tab.get_by_role("button", name="Train", exact=True).click()
    expect(tab.get_by_text("tiny #1: finished")).to_be_visible(timeout=120_000)
    here = server_of(first)
    assert here in ("app1", "app2")
    address = tab.url
    assert f"{Url.RUN}=" in address

    other = "app2" if here == "app1" else "app1"
    second = browser.new_context(viewport={"width": 1280, "height": 900})
    second.add_cookies([{"name": "RNNLAB_SERVER", "value": other, "url": class_site}])   # the other process
    tab2 = second.new_page()
    tab2.goto(address)
    expect(tab2.get_by_text("tiny #1: finished")).to_be_visible(timeout=60_000)
    expect(tab2.locator("[data-testid='stMetric']", has_text="Validation perplexity")).to_be_visible(timeout=30_000)
    assert server_of(second) == other                    # it really was served by the other process
    assert tab.get_by_text(re.compile(r"Validation perplexity")).first.is_visible()
    first.close()
    second.close()


def test_a_class_is_shared_by_both_processes(browser, class_site):
    """Issue 26: the teacher's process and a learner's process are different ones; the class records (SQLite in
    the shared run store) are the same for both."""
    teacher_ctx = browser.new_context(viewport={"width": 1280, "height": 1200})
    teacher = teacher_ctx.new_page()
    teacher.goto(class_site + "/classroom")
    teacher.get_by_label("Class name").fill("Two processes")
    teacher.get_by_role("button", name="Start the class").click()
    expect(teacher.get_by_text("Your class: Two processes")).to_be_visible(timeout=30_000)
    expect(teacher).to_have_url(re.compile(rf"[?&]{Url.JOIN}=[A-Z0-9]{{8}}"), timeout=30_000)   # the key kept
    code = re.search(rf"{Url.JOIN}=([A-Z0-9]{{8}})", teacher.url).group(1)
    here = server_of(teacher_ctx)
    other = "app2" if here == "app1" else "app1"
    learner_ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    learner_ctx.add_cookies([{"name": "RNNLAB_SERVER", "value": other, "url": class_site}])   # the other process
    learner = learner_ctx.new_page()
    learner.goto(f"{class_site}/classroom?{urlencode(query('classroom', join=code))}")
    learner.get_by_label("Your name, as your teacher knows you").fill("Cleo")
    learner.get_by_role("button", name="Join").click()
    expect(learner.get_by_text("your answers reach your teacher")).to_be_visible(timeout=30_000)
    remembered(learner)
    learner.goto(class_site + "/gradient_flow?" + urlencode(query(
        "gradient_flow", {"scale": 1.5, "use_tanh": False}, exercise="gf_regime", hide=["scale", "use_tanh"])))
    learner.get_by_text("exploding", exact=True).first.click()
    learner.get_by_role("button", name="Check", exact=True).first.click()
    expect(learner.get_by_text("You answered exploding.")).to_be_visible(timeout=30_000)
    assert server_of(learner_ctx) == other and server_of(teacher_ctx) == here
    teacher.goto(teacher.url.split("&")[0] + "&show=gf_regime")
    expect(teacher.locator("[data-testid='stDataFrame']").first).to_contain_text("Cleo", timeout=30_000)
    chart = teacher.locator("[data-testid='stPlotlyChart'][aria-label*='learners answered']")
    expect(chart).to_have_attribute("aria-label", re.compile(r"1 of 1 learners answered; 1 right"))
    teacher_ctx.close()
    learner_ctx.close()
