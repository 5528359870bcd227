"""The floor plan of core/ (README, "Layout"): packages by the chapter's topics, each layer importing only from
the layers below it, checked by import-linter's contracts in .importlinter (lint-imports), not by a graph
written here."""
import shutil
import subprocess
import sys

from apptest_util import ROOT

LINT = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
        "sys.exit(lint_imports_command())"]


def lint(where=ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(LINT, cwd=where, capture_output=True, text=True, timeout=120)


def test_the_import_contracts_hold():
    out = lint()
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "3 kept, 0 broken" in out.stdout


def test_an_upward_import_or_a_circle_breaks_a_contract(tmp_path):
    """The contracts can fail: text importing runs (a lower layer reaching up), and two modules of nn importing
    each other, each break theirs."""
    shutil.copytree(ROOT / "core", tmp_path / "core", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "ui", tmp_path / "ui", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / ".importlinter", tmp_path)
    with open(tmp_path / "core" / "text" / "ngrams.py", "a") as f:
        f.write("\nfrom core.runs import store  # planted\n")
    with open(tmp_path / "core" / "nn" / "models.py", "a") as f:
        f.write("\nfrom core.nn import sampling  # planted\n")
    out = lint(tmp_path)
    assert out.returncode != 0
    assert "1 kept, 2 broken" in out.stdout
    assert "core.text.ngrams -> core.runs.store" in out.stdout


def test_the_root_of_core_holds_only_what_all_share():
    flat = sorted(p.name for p in (ROOT / "core").glob("*.py"))
    assert len(flat) <= 8, flat
    packages = sorted(p.parent.name for p in (ROOT / "core").glob("*/__init__.py"))
    assert packages == ["exercises", "lesson", "nn", "runs", "sequences", "text"]


def test_core_files_stay_readable_in_one_sitting():
    long = {str(p.relative_to(ROOT)): n for p in (ROOT / "core").rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 380}
    assert long == {}


def test_ui_never_imports_a_page():
    for path in (ROOT / "ui").glob("*.py"):
        assert "from pages" not in path.read_text() and "import pages" not in path.read_text(), path
