"""The floor plan of core/ (README, "Layout"): packages by the chapter's topics, each layer importing only from
the layers below it, checked by import-linter's contracts in .importlinter (lint-imports), not by a graph
written here."""
import re
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
    assert packages == ["classroom", "exercises", "i18n", "labs", "lesson", "nn", "notebooks", "runs", "sequences",
                        "text"]


def test_core_files_stay_readable_in_one_sitting():
    long = {str(p.relative_to(ROOT)): n for p in (ROOT / "core").rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 380}
    assert long == {}


def test_ui_never_imports_a_page():
    for path in (ROOT / "ui").glob("*.py"):
        assert "from pages" not in path.read_text() and "import pages" not in path.read_text(), path


def layout_block() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Layout\n", 1)[1]
    return section.split("```\n", 2)[1].splitlines()


def layout_names() -> set[str]:
    """The paths the README's Layout names: a line's first word (top level, or in core/ when indented by two),
    and the files and folders its description names (in that folder, or from the top when they hold a '/')."""
    named, folder = set(), ""
    for line in layout_block():
        indent = len(line) - len(line.lstrip())
        words = line.strip()
        if indent <= 2 and words:
            first, _, words = words.partition(" ")
            path = first if indent == 0 else f"core/{first}"
            named.add(path.rstrip("/"))
            folder = path if path.endswith("/") else ""
        for token in re.findall(r"[A-Za-z_][\w./-]*[\w/]", words):
            if "/" in token.rstrip("/"):
                named.add(token.rstrip("/"))                  # a path from the top: core/labs.py
            elif folder and token.endswith((".py", "/")):
                named.add(folder + token.rstrip("/"))         # a file or folder in this line's folder
    return named


def test_the_readme_layout_matches_the_tree():
    """Every file and folder the README's Layout names exists, and it names every top-level folder, every module
    and package of core/ and every file of core's packages and of ui/."""
    named = layout_names()
    missing = sorted(n for n in named if not (ROOT / n).exists())
    assert missing == [], f"the README's layout names what is not there: {missing}"
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    must = {t.split("/")[0] for t in tracked if "/" in t and not t.startswith(".")}
    must |= {t for t in tracked if "/" not in t and t.endswith(".py")}
    core = [t for t in tracked if t.startswith("core/") and t.endswith(".py") and not t.endswith("__.py")]
    must |= {t.rsplit("/", 1)[0] if t.count("/") > 2 else t for t in core}      # a module of a sub-package counts as its package
    must |= {t.rsplit("/", 1)[0] for t in core if t.count("/") == 2}            # each package of core
    must |= {t for t in tracked if t.startswith("ui/") and t.endswith(".py") and not t.endswith("__.py")}
    unnamed = sorted(must - named)
    assert unnamed == [], f"the README's layout leaves out: {unnamed}"


def test_the_readme_stays_a_five_minute_read():
    """What RNN Lab is and how to run it; measurements live in docs/performance.md, linked from it."""
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 300
    assert "docs/performance.md" in text and (ROOT / "docs" / "performance.md").is_file()


def test_the_package_ships_every_package_of_core_and_the_assets():
    """pyproject.toml lists core's packages by hand (setuptools): a new one must be listed, or a wheel leaves it
    out (core.notebooks was, once)."""
    import tomllib
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "core").rglob("__init__.py")}
    assert listed - {"rnnlab_assets"} == found


def test_the_package_pins_what_the_app_pins():
    """Issue 63: `pip install -e .` picked torch 2.14 (the newest) where the app pins 2.13.0. Every dependency of
    the rnnlab package, and its notebook extra, is pinned at requirements.txt's version."""
    import re
    import tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = dict(re.findall(r"^([A-Za-z0-9_.-]+)==([^\s#]+)", (ROOT / "requirements.txt").read_text(), re.M))
    wanted = project["dependencies"] + project["optional-dependencies"]["notebook"]
    for dep in wanted:
        name, _, version = dep.partition("==")
        assert version and pins.get(name) == version, f"{dep}: requirements.txt pins {pins.get(name)}"


def test_the_readme_names_where_the_corpus_comes_from():
    """Issue 63: the corpus's public location, needed to fill deploy/data/, was not in the README."""
    from core.text.corpus import CORPUS_SHA1 as SHA1, CORPUS_URL
    text = (ROOT / "README.md").read_text()
    assert CORPUS_URL in text and SHA1 in text
