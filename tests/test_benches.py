"""Every benchmark runs once at a tiny size (RNNLAB_BENCH_TINY=1, bench/common.py), so none rots unnoticed: it
must end cleanly and print its figures. What the figures are is for bench/, not for a test."""
import importlib.util
import os
import re
import subprocess
import sys

import pytest

from apptest_util import ROOT
from conftest import corpus_path

pytestmark = pytest.mark.slow

BENCHES = [  # (script, arguments at a tiny size, needs the corpus)
    ("page_reruns.py", [], False),
    ("sampling_speed.py", [], False),
    ("forecast_rerun.py", [], False),
    ("train_speed.py", ["--book", "--full"], True),
    ("train_speed.py", ["--seeds", "1", "--paths", "rnn,book"], True),
    ("finished_runs_memory.py", ["--runs", "1", "--hidden", "64"], False),
    ("idle_tabs.py", ["--tabs", "1", "--seconds", "0.3"], False),
    ("load.py", ["--learners", "1", "--moves", "2", "--no-training"], False),
    ("gpu.py", ["--presets", "tiny", "--cpu-epochs", "1", "--seeds", "1"], True),   # the CPU stands in
    ("stop_latency.py", [], False),
    ("train_profile.py", ["--repeats", "1"], True),
    ("train_profile.py", ["--preset", "tiny", "--threads", "1", "--repeats", "1"], True),
    ("waits.py", [], True),   # a browser on an idle server: Act 1's slider and Train
]
NEEDS_D2L = "d2l_concise.py"   # the book's own package, not a dependency of RNN Lab: run by train_speed.py --d2l


def test_every_bench_is_listed_here():
    scripts = {p.name for p in (ROOT / "bench").glob("*.py")} - {"common.py", "book_loop.py", "st_client.py",
                                                                  NEEDS_D2L}
    assert scripts == {name for name, _, _ in BENCHES}   # book_loop and st_client run inside train_speed and load


def test_the_d2l_bench_says_how_to_get_d2l_when_it_is_missing(tmp_path):
    if importlib.util.find_spec("d2l") is not None:
        pytest.skip("d2l is installed here")
    done = subprocess.run([sys.executable, str(ROOT / "bench" / NEEDS_D2L), "--epochs", "1"], cwd=ROOT / "bench",
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "pip install d2l==1.0.3" in done.stderr, done.stderr[-2000:]
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("script,args,needs_corpus", BENCHES, ids=[f"{s}{'-' + '-'.join(a[:2]) if a else ''}" for s, a, _ in BENCHES])
def test_the_bench_runs_at_a_tiny_size(script, args, needs_corpus, tmp_path):
    if needs_corpus and corpus_path() is None:
        pytest.skip("this bench trains on the corpus")
    env = dict(os.environ, RNNLAB_BENCH_TINY="1", RNNLAB_RUNS_DIR=str(tmp_path / "runs"))
    done = subprocess.run([sys.executable, str(ROOT / "bench" / script), *args], cwd=ROOT / "bench", env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert re.search(r"\d", done.stdout), done.stdout
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
