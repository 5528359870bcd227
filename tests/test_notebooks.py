"""Every lab and act as a notebook (issue 44): python -m core notebook writes a valid notebook for each, nbclient runs
each headless in an ipykernel at the defaults and at one other setting, every figure is drawn, and the numbers it
prints equal what core computes for the page at the same settings. One kernel runs them all, one after another (a
kernel per notebook would cost seconds each in starting and importing torch)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from core.notebooks import cli
from core.labs import LABS, PAGES
from core.notebooks.build import exercise_cells, settings_of

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
OTHER = {   # one setting other than the defaults for each (small where the lab trains); the defaults' case of every
            # lab comes from the registry
    "forecasting": {"tau": 8, "sigma": 0.0}, "gradient_flow": {"scale": 4.0, "use_tanh": False},
    "rnn_cell": {"word": "unfathomable", "t": 5}, "sampling": {"temperature": 0.0, "length": 60},
    "tokens": {"tokenizer": "word"}, "training": {"preset": "passage"}, "gates": {"delay": 5, "hidden": 8, "steps": 50},
}
DEFAULTS = {"training": {"preset": "tiny", "epochs": 1}}   # the Book preset's run takes a minute on this CPU
CASES = [(p.key, DEFAULTS.get(p.key, {})) for p in LABS] + list(OTHER.items()) + \
    [("chapter", {"act": act}) for act in (1, 2, 3, 4, 5)] + [("chapter", {"act": 1, "tau": 16}),
                                                              ("chapter", {"act": 5, "scale": 1.5})]


def expected(page: str, s: dict) -> dict:
    """What the page computes at settings s: the same core calls, here in the test."""
    if page == "forecasting" or (page == "chapter" and s["act"] == 1):
        from core.sequences import forecast
        if page == "chapter":
            s = dict(T=1000, n_train=600, tau=s["tau"], k=16, sigma=0.2, seed=0)
        a = forecast.analyse(forecast.make_series(s["T"], s["sigma"], s["seed"]), s["tau"], s["n_train"], s["k"])
        return dict(train_mse=a.train_mse, test_mse=a.test_mse, k_mse=a.k_mse)
    from core.labs import PAGES
    if page == "training":     # the form's settings over the preset: as many epochs as asked
        return {"epochs": s["epochs"]} if "epochs" in s else {}
    if page != "chapter" and PAGES[page].module:      # a lab built as one module: the numbers its page shows
        lab = PAGES[page].module
        return lab.numbers(lab.compute(lab.Settings(**s)))
    if page == "rnn_cell":
        from core.nn import cell_demo
        run = cell_demo.read_word(s["word"], s["h"], s["seed"])
        step = run.step(s["t"])
        return dict(p_next=float(step.P[step.target_id]), loss=step.loss, mean_loss=float(run.cache.loss))
    if page == "chapter" and s["act"] == 3:
        from core.nn import param_counts
        return dict(rnn=sum(param_counts.rnn_parameter_terms(28, 0, s["h"]).values()),
                    window_5=param_counts.window_model_parameters(28, 5, s["h"]),
                    window_20=param_counts.window_model_parameters(28, 20, s["h"]))
    if page == "chapter" and s["act"] == 4:
        from core.lesson import store
        h = store.load_baked().history
        return dict(val_ppl=h[-1].val_ppl, train_ppl=h[-1].train_ppl)
    if page == "chapter" and s["act"] == 5:
        from core.nn import gradflow
        a = gradflow.analyse(n=32, scale=s["scale"], T=24)
        return dict(rho=a.rho, growth=a.growth)
    return {}      # tokens, Act 2: counted from the corpus; checked for their figures only


@pytest.fixture(scope="module")
def kernel(corpus_file):
    from jupyter_client.manager import start_new_kernel
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(ROOT),
                              env={**__import__("os").environ, "RNNLAB_CORPUS": str(corpus_file),
                                   "PYTHONPATH": str(ROOT)})
    yield km, kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def run_notebook(nb, kernel) -> None:
    km, kc = kernel
    client = nbclient.NotebookClient(nb, km=km, kc=kc, timeout=300, allow_errors=False)
    client.kc = kc
    with client.setup_kernel(cleanup_kc=False):
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)


@pytest.mark.parametrize("lab,values", CASES, ids=[f"{p}-{'-'.join(f'{k}={v}' for k, v in v.items()) or 'defaults'}"
                                                     for p, v in CASES])
def test_each_notebook_runs_draws_its_figures_and_prints_the_pages_numbers(lab, values, kernel):
    page = lab
    nb = cli.build(page, values)
    nbformat.validate(nb)
    run_notebook(nb, kernel)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    shows = sum(c.source.count("fig.show()") + c.source.count("figure.show()") for c in nb.cells
                if c.cell_type == "code")
    module, s = PAGES[page].module, settings_of(page, values)
    if page == "chapter":     # Act 1 runs the Forecasting lab's module at the act's window
        module = PAGES["forecasting"].module if s["act"] == 1 else None
        s = dict(T=1000, n_train=600, tau=s["tau"], k=16, sigma=0.2, seed=0)
    if module and not getattr(module, "TRAINS", False):   # the loop's one chart.figure.show() stands for each chart
        shows += len(module.charts(module.compute(module.Settings(**s)))) - 1
    figures = [o for o in outputs if "application/vnd.plotly.v1+json" in o.get("data", {})]
    assert shows and len(figures) >= shows - sum(c.source.count("if a.horizon is not None") for c in nb.cells)
    numbers = nb.cells[-1 - len(exercise_cells(page, values.get("act")))]
    out = "".join(o.get("text", "") for o in numbers.outputs if o.get("name") == "stdout")   # may come in pieces
    printed = json.loads(out.strip().splitlines()[-1])
    for name, value in expected(page, settings_of(page, values)).items():
        assert printed[name] == pytest.approx(value, rel=1e-12, abs=1e-15) if isinstance(value, float) else \
            printed[name] == value, (page, name)


def test_the_command_writes_the_same_file_as_the_page(tmp_path):
    out = tmp_path / "f.ipynb"
    done = subprocess.run([sys.executable, "-m", "core", "notebook", "forecasting", "--set", "tau=8", "--set",
                           "sigma=0", "--out", str(out)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert out.read_text() == cli.dumps(cli.build("forecasting", {"tau": 8, "sigma": 0.0}))
    nb = nbformat.reads(out.read_text(), as_version=4)
    assert "'tau': 8," in nb.cells[2].source and "'sigma': 0.0," in nb.cells[2].source
    bad = subprocess.run([sys.executable, "-m", "core", "notebook", "forecasting", "--set", "tau=999"], cwd=ROOT,
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "tau" in bad.stderr and "Traceback" not in bad.stderr


def test_every_lab_and_act_has_a_notebook_and_its_exercises():
    from core.labs import LABS, CHAPTER_ACTS
    from core.exercises.bank import BANK
    covered = set()
    for page, values in [(p.key, {}) for p in LABS] + [("chapter", {"act": a}) for a in CHAPTER_ACTS]:
        nb = cli.build(page, values)
        covered |= {k for k in BANK if any(f"BANK[{k!r}]" in c.source for c in nb.cells)}
    assert covered == set(BANK)


@pytest.mark.parametrize("lab", ["forecasting", "chapter", "training"])
def test_each_page_offers_its_notebook_at_its_settings(lab):
    """The page's button (in the sidebar, or under the controls of a lab drawn as a fragment) on a page opened at
    other settings (AppTest; the browser test downloads one). The Training lab's comes from its form: the preset
    and what differs from it."""
    from apptest_util import page as open_page
    query = {"forecasting": {"tau": "8", "sigma": "0"}, "chapter": {"act": "5", "scale": "1.5"},
             "training": {"preset": "tiny", "lr": "0.05"}}[lab]
    at = open_page(lab, **query).run()
    assert not at.exception
    buttons = [b for b in at.get("download_button") if b.proto.label == "Download as notebook"]
    assert len(buttons) == 1
    said = buttons[0].proto.help.replace("\\", "")
    assert {"forecasting": "Window τ (tau) = 8, Noise σ (sigma) = 0" in said,
            "chapter": "Act = 5" in said and "= 1.5" in said,
            "training": "= tiny" in said and "= 0.05" in said}[lab], said


def test_the_command_refuses_what_the_page_refuses(tmp_path, capsys):
    """Issue 63: the RNN cell page refuses letter=z for 'machine', and python -m core notebook wrote a notebook
    with it (which then failed); a preset that does not exist was taken too. Both are refused in words now, and
    no file is written."""
    out = tmp_path / "nb.ipynb"
    assert cli.main(["rnn_cell", "--set", "letter=z", "--out", str(out)]) == 2
    assert "feeds in only the letters 'm', 'a', 'c', 'h', 'i', 'n'" in capsys.readouterr().err and not out.exists()
    assert cli.main(["training", "--set", "preset=nope", "--out", str(out)]) == 2 and not out.exists()
    assert cli.main(["rnn_cell", "--set", "letter=h", "--out", str(out)]) == 0 and out.exists()


@pytest.mark.parametrize("lab", [k for k in __import__("core.labs", fromlist=["TRANSLATED"]).TRANSLATED
                                 if k in cli.pages_with_notebooks()])
def test_a_translated_labs_notebook_runs_in_chinese_and_prints_the_same_numbers(lab, kernel, tmp_path):
    """Issue 66: `python -m core notebook LAB --lang zh` (and the page's download in Chinese) gives the notebook in
    Chinese: its texts, and the readings it prints as it runs; its numbers are the English page's."""
    import re
    from test_i18n import CJK, english_words
    out = tmp_path / "zh.ipynb"
    small = DEFAULTS.get(lab, {})      # the Training lab's: a tiny run, not the Book preset's minute
    chosen = [arg for k, v in small.items() for arg in ("--set", f"{k}={v}")]
    assert cli.main([lab, "--lang", "zh", *chosen, "--out", str(out)]) == 0
    nb = nbformat.reads(out.read_text(encoding="utf-8"), as_version=4)
    assert cli.file_name(lab, {}, "zh") == f"rnnlab-{lab}{'-act1' if lab == 'chapter' else ''}-zh.ipynb"
    texts = [re.sub(r"```.*?```|`[^`]*`", " ", c.source, flags=re.S) for c in nb.cells if c.cell_type == "markdown"]
    assert all(CJK.search(t) and not english_words(t) for t in texts if t.strip() and not t.startswith("$$")), texts
    run_notebook(nb, kernel)
    said = [o["data"]["text/markdown"] for c in nb.cells if c.cell_type == "code" for o in c.outputs
            if "text/markdown" in o.get("data", {})]
    assert said and all(CJK.search(t) for t in said), said
    numbers = nb.cells[-1 - len(exercise_cells(lab, 1 if lab == "chapter" else None))]   # the chapter: act 1's
    printed = json.loads("".join(o.get("text", "") for o in numbers.outputs).strip().splitlines()[-1])
    for name, value in expected(lab, settings_of(lab, small)).items():
        assert printed[name] == (pytest.approx(value, rel=1e-12, abs=1e-15) if isinstance(value, float) else value), name
    from core.labs import TRANSLATED
    for untranslated in [k for k in cli.pages_with_notebooks() if k not in TRANSLATED][:1]:
        assert cli.main([untranslated, "--lang", "zh", "--out", str(tmp_path / "s.ipynb")]) == 2   # not yet
