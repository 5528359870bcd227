"""AppTest: the shell (navigation, the chapter as first page, sidebar) and the Forecasting page."""
from streamlit.testing.v1 import AppTest

from apptest_util import ROOT, metric, page
from core.labs import LABS


def test_the_app_opens_on_the_chapter():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    assert at.title[0].value.startswith("RNN Lab: the chapter") and "Act 1" in at.header[0].value
    sidebar = " ".join(c.value for c in at.sidebar.caption)
    assert "Training device" in sidebar and ("CPU" in sidebar or "CUDA" in sidebar)
    if "CPU" in sidebar:   # the threads a Training-lab run uses: a training process's own, unless runs use the server's
        import os
        import torch
        from core.runs.worker import worker_threads
        in_process = (os.environ.get("RNNLAB_TRAIN_IN") or "process") == "process"
        n = worker_threads() if in_process else torch.get_num_threads()
        assert f"CPU ({n} thread{'' if n == 1 else 's'})" in sidebar


def test_every_lab_page_is_reachable_through_navigation():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    for lab in LABS:
        at.switch_page(lab.path).run()
        assert not at.exception, lab.path
        assert lab.title in at.title[0].value


def test_forecasting_defaults():
    at = page("forecasting").run()
    assert not at.exception and not at.error
    assert float(metric(at, "One-step MSE, training")) < 0.1
    assert dict(at.query_params)["tau"] == "4"


def test_forecasting_tau_and_k_change_the_mse():
    at = page("forecasting").run()
    one_step, k_step = metric(at, "One-step MSE, test"), metric(at, "16-step")
    at.slider(key="forecasting.tau").set_value(10).run()
    assert metric(at, "One-step MSE, test") != one_step
    assert at.query_params["tau"] == "10"
    at.slider(key="forecasting.k").set_value(40).run()
    assert metric(at, "40-step") != k_step
    assert not at.exception


def test_forecasting_bad_query_params_warn_and_fall_back():
    at = page("forecasting", tau="abc", k="100000", sigma="nan").run()
    assert not at.exception
    warnings = " ".join(w.value for w in at.warning)
    assert "tau" in warnings and "k=" in warnings and "sigma" in warnings
    assert at.slider(key="forecasting.tau").value == 4


def test_forecasting_url_reproduces_view():
    at = page("forecasting", tau="7", k="33", seed="5").run()
    assert at.slider(key="forecasting.tau").value == 7
    assert metric(at, "33-step")


def test_a_rerun_that_carries_an_older_address_keeps_the_slider_but_a_new_link_moves_it():
    """Two quick moves: the second rerun is sent before the browser shows the first one's address (t=5 here,
    while the page had already written 7). That older address is an echo, not a link to follow."""
    at = page("forecasting", tau="5").run()
    tau = lambda: at.slider(key="forecasting.tau")
    tau().set_value(7).run()
    assert at.query_params["tau"] == "7"
    at.query_params["tau"] = "5"              # the address the browser still showed when the learner moved again
    tau().set_value(9).run()
    assert tau().value == 9 and at.query_params["tau"] == "9"
    at.query_params["tau"] = "12"             # a link this session never wrote: followed
    at.run()
    assert tau().value == 12


WARM_UP_NEVER_ENDS = """
import sys, threading, time
sys.path.insert(0, {root!r})
from core.nn import interrupt
from ui import texts
started = threading.Event()

def endless(raw, alpha):   # a warm-up piece as long as the slowest, on a loaded machine
    started.set()
    while True:
        interrupt.poll()
        time.sleep(0.01)

texts.time_machine_or_none = lambda: "the time traveller spoke of the fourth dimension " * 40
texts.ngram_vs_rnn = endless
from streamlit.testing.v1 import AppTest
AppTest.from_file({app!r}, default_timeout=120).run()
assert started.wait(120), "the warm-up never reached its last piece"
print("warm-up still running as the process ends:", any(t.name == "rnnlab-warm-up" for t in threading.enumerate()))
"""


def test_a_process_that_ends_does_not_wait_for_the_warm_up(tmp_path):
    """A server stopped soon after its first page waited for app.py's warm-up (up to minutes on a loaded
    machine). The warm-up is told when the interpreter starts to end and stops at its next step; the process
    ends cleanly (no exit code 134 from a thread killed inside native code). A hang fails here by the timeout."""
    import subprocess
    import sys
    code = WARM_UP_NEVER_ENDS.format(root=str(ROOT), app=str(ROOT / "app.py"))
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "RNNLAB_WARM_WORKERS": "0"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "warm-up still running as the process ends: True" in done.stdout


def test_the_server_prints_no_line_a_newcomer_takes_for_a_failure():
    """Issue 63: a first start printed "Did not auto detect external IP" and "Thread 'rnnlab-warm-up': missing
    ScriptRunContext!" three times. Those lines, as Streamlit logs them (the warm-up's cached computations run in
    a thread of that name outside any page), are quiet; the same warning from any other thread still shows."""
    import subprocess
    import sys
    code = """
import threading
from streamlit import net_util
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx
from ui.serve import quiet_logs
quiet_logs()
t = threading.Thread(target=get_script_run_ctx, name="rnnlab-warm-up"); t.start(); t.join()
net_util._LOGGER.warning("Did not auto detect external IP. Please go to %s for debugging hints.", "the docs")
u = threading.Thread(target=get_script_run_ctx, name="someone-else"); u.start(); u.join()
"""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "rnnlab-warm-up" not in out and "external IP" not in out, out
    assert "Thread 'someone-else': missing ScriptRunContext" in out, out


def test_run_sh_says_what_it_installs_and_starts_without_an_alarming_line(tmp_path):
    """Issue 63: a newcomer's `bash scripts/run.sh` was silent through pip, then printed lines that look like
    failures. It names the packages, says how long they took, and the server starts with no WARNING line."""
    import os
    import subprocess
    import time
    import urllib.request
    from conftest import _free_port
    port = _free_port()
    log = tmp_path / "run.log"
    env = dict(os.environ, RNNLAB_RUNS_DIR=str(tmp_path / "runs"), RNNLAB_CACHE_DIR=str(tmp_path / "cache"),
               RNNLAB_WARM_WORKERS="0")
    with open(log, "w") as out:
        proc = subprocess.Popen(["bash", str(ROOT / "scripts" / "run.sh"), "--server.port", str(port)], cwd=ROOT,
                                env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.time() + 600
            while time.time() < deadline and "You can now view" not in log.read_text():
                assert proc.poll() is None, log.read_text()[-3000:]
                time.sleep(0.5)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=30) as r:
                assert r.read() == b"ok"
        finally:
            os.killpg(proc.pid, 15)
            proc.wait(timeout=30)
    said = log.read_text()
    assert "run.sh: installing RNN Lab's packages into" in said and "torch==" in said, said[-3000:]
    assert "packages ready after" in said and "starting RNN Lab (Streamlit prints its address below" in said, said[-3000:]
    assert not [line for line in said.splitlines() if "WARNING" in line or "Did not auto detect" in line or
                "missing ScriptRunContext" in line], said[-3000:]
