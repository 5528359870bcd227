"""Every benchmark runs once at a tiny size (RNNLAB_BENCH_TINY=1, bench/common.py), so none rots unnoticed: it
must end cleanly and print its figures. What the figures are is for bench/, not for a test."""
import ast
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

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


def run_bench(script: str, args: list[str], runs: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, RNNLAB_BENCH_TINY="1", RNNLAB_RUNS_DIR=str(runs), RNNLAB_WARM_UP="0")   # its servers too
    return subprocess.run([sys.executable, str(ROOT / "bench" / script), *args], cwd=ROOT / "bench", env=env,
                          capture_output=True, text=True, timeout=300)


# The benches whose tiny runs take longest (a server and a browser each: 14-29 s here), started first, so that the
# two at a time end together instead of the slowest running alone at the end.
SLOWEST_FIRST = ["waits.py", "idle_tabs.py", "load.py", "page_reruns.py", "forecast_rerun.py"]


@pytest.fixture(scope="module")
def tiny_runs(tmp_path_factory) -> dict:
    """Every bench's tiny runs, two at a time (a bench mostly waits on one core, for its server, its browser or
    its own process): the module's wall time is about half the benches' added up."""
    from concurrent.futures import ThreadPoolExecutor
    todo = [(i, script, args) for i, (script, args, needs) in enumerate(BENCHES) if not needs or corpus_path()]
    todo.sort(key=lambda job: SLOWEST_FIRST.index(job[1]) if job[1] in SLOWEST_FIRST else len(SLOWEST_FIRST))
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {i: pool.submit(run_bench, script, args, tmp_path_factory.mktemp(f"bench{i}"))
                   for i, script, args in todo}
    return {i: f.result() for i, f in futures.items()}


@pytest.mark.parametrize("index", range(len(BENCHES)),
                         ids=[f"{s}{'-' + '-'.join(a[:2]) if a else ''}" for s, a, _ in BENCHES])
def test_the_bench_runs_at_a_tiny_size(index, tiny_runs):
    if index not in tiny_runs:
        pytest.skip("this bench trains on the corpus")
    done = tiny_runs[index]
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert re.search(r"\d", done.stdout), done.stdout
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
