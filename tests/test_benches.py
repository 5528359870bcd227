"""Every benchmark runs once at a tiny size (RNNLAB_BENCH_TINY=1, bench/common.py), so none rots unnoticed: it
must end cleanly and print its figures. What the figures are is for bench/, not for a test."""
import ast
import importlib.util
import os
import re
import subprocess
import sys

import pytest

from apptest_util import ROOT
from conftest import corpus_path

pytestmark = pytest.mark.slow



def declared(path) -> dict:
    """A bench's module-level declarations (TINY_RUNS, NEEDS_CORPUS, HELPER_OF), read without running it."""
    tree = ast.parse(path.read_text())
    return {t.id: ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
            for t in node.targets if isinstance(t, ast.Name) and t.id in ("TINY_RUNS", "NEEDS_CORPUS", "HELPER_OF")}


SCRIPTS = {p.name: declared(p) for p in sorted((ROOT / "bench").glob("*.py")) if p.name != "common.py"}
BENCHES = [(name, args, d.get("NEEDS_CORPUS", False)) for name, d in SCRIPTS.items() for args in d.get("TINY_RUNS", [])]
NEEDS_D2L = "d2l_concise.py"   # the book's own package, not a dependency of RNN Lab: run by train_speed.py --d2l


def test_every_bench_says_how_it_is_run():
    """Each script in bench/ declares the argument lists it runs with at a tiny size (TINY_RUNS), or the bench it
    runs inside (HELPER_OF): a new bench is run by the next test without editing a list."""
    for name, d in SCRIPTS.items():
        assert d.get("TINY_RUNS") or d.get("HELPER_OF") in SCRIPTS, name
    assert len(BENCHES) >= 12


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
