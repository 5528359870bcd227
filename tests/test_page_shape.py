"""Every lab page has the shape the README describes, every link names controls that exist, and a lab or a cell
added by the README's recipe is covered by the tests without editing a list (tests/registry.py)."""
import ast
import importlib
import textwrap

import numpy as np
import plotly.graph_objects as go
import pytest
import torch
from torch import nn

from apptest_util import ROOT
from core.sequences import forecast
from core.nn import gradflow
from core.exercises.bank import BANK
from core.labs import SETTINGS_OF, controls_of, url_query
from registry import cells, chart_pages, labs, page_params, page_paths


LAB_MODULE_NAMES = ("KEY", "TITLE", "ICON", "BLURB", "SECTION", "Settings", "compute", "metrics", "charts",
                    "readings", "numbers", "INTRO", "notes", "SOURCE")


def shape_problems(key: str, source: str, draws_charts: bool, module=None) -> list[str]:
    """What a lab page's source lacks of the README's shape (an empty list when it has it all). A lab built as one
    module (core/labs/<key>.py) has every name the registry's docstring lists, and its page builds no figure."""
    tree = ast.parse(source)
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    problems = []
    if "main" not in functions:
        problems.append("no main()")
    if 'if __name__ == "__main__":\n    main()' not in source.rstrip()[-40:]:
        problems.append("does not end with: if __name__ == '__main__': main()")
    header = ("header(lab.KEY)", "lab_intro(lab)") if module else (f'header("{key}")',)
    if not any(h in source for h in header) or f'url_state.page("{key}")' not in source:
        problems.append("main() does not call header(key) and url_state.page(key)")   # key: its language, its widgets
    if module:
        problems += [f"its module lacks {name}" for name in LAB_MODULE_NAMES if not hasattr(module, name)]
        problems += [f"the page builds a figure ({f})" for f in sorted(functions) if f.endswith("_figure")]
    elif draws_charts and not any(f.endswith("_figure") for f in functions):
        problems.append("no figure function (NAME_figure)")
    module_calls = [n for n in tree.body if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)]
    if module_calls:
        problems.append("calls something at import")
    if key not in SETTINGS_OF:
        problems.append("its controls are not declared in core.labs")
    return problems


@pytest.mark.parametrize("lab", labs(), ids=lambda lab: lab.key)
def test_every_lab_page_has_the_shape_the_readme_describes(lab):
    module = importlib.import_module(f"pages.{lab.key}")   # importing draws nothing
    assert callable(module.main)
    assert shape_problems(lab.key, (ROOT / lab.path).read_text(), lab.charts, lab.module) == []


def test_every_page_declares_its_controls_and_nothing_else_does():
    assert set(SETTINGS_OF) == {lab.key for lab in labs()} | {"chapter", "exercises", "classroom"}
    assert {p.stem for p in (ROOT / "pages").glob("*.py")} == set(SETTINGS_OF)   # pages/ holds pages only


def test_every_exercise_and_claim_names_controls_its_page_has():
    """A renamed control breaks this test, not a link: exercises, assignment links and the chapter's claims
    name controls by their declared names, checked against the declarations."""
    from ui.chapter_after import CLAIMS
    for ex in BANK.values():
        query = url_query(ex.lab, ex.url)    # ValueError for a name the page does not have, or a bad value
        assert set(query) <= set(page_params()[ex.lab]), ex.key
    for _, lab_key, _, controls in CLAIMS:
        assert url_query(lab_key, controls)
    with pytest.raises(ValueError, match="has no control 'temp'"):
        url_query("sampling", {"temp": 0.5})   # the URL key is not the control's name
    assert url_query("sampling", {"temperature": 0.5}) == {"temp": "0.5"}


def test_the_benches_move_controls_that_exist():
    """A control's widget key is its page's registry key and its URL key (url_state.page(key))."""
    for bench, key in [("load.py", "forecasting.tau"), ("page_reruns.py", "gradient_flow.scale"),
                       ("page_reruns.py", "sampling.temp")]:
        assert key in (ROOT / "bench" / bench).read_text()
    widget_keys = {f"{page}.{s.key}" for page in ("forecasting", "gradient_flow", "sampling")
                   for s in controls_of(page).values()}
    assert {"forecasting.tau", "gradient_flow.scale", "sampling.temp", "gradient_flow.T"} <= widget_keys


THROWAWAY_MODULE = textwrap.dedent('''
    """A throwaway lab, written by the README's recipe: in the app it is core/labs/throwaway.py."""
    from __future__ import annotations

    from dataclasses import dataclass

    import plotly.graph_objects as go

    from core.claims import Claim, claim
    from core.figures import Chart, Metric, style
    from core.settings import setting

    KEY, TITLE, ICON = "throwaway", "Throwaway", ":material/science:"
    BLURB = "A lab made by the recipe."
    SECTION = "9.1 Working with Sequences"


    @dataclass(frozen=True)
    class Settings:
        a: int = setting(2, "Slope a", lo=1, hi=10)
        n: int = setting(5, "Points n", lo=2, hi=50)


    @dataclass(frozen=True)
    class Result:
        settings: Settings
        ys: list


    def compute(s: Settings) -> Result:
        return Result(s, [s.a * i for i in range(s.n)])


    def metrics(r: Result) -> list[Metric]:
        return [Metric("Last value", f"{r.ys[-1]}")]


    def line_figure(r: Result) -> go.Figure:
        return style(go.Figure(go.Scatter(y=r.ys)), "A line", "i", "a·i")


    def charts(r: Result) -> list[Chart]:
        return [Chart("line", line_figure(r), f"A line from 0 to {r.ys[-1]}.")]


    def rises(r: Result) -> Claim:
        return claim("throwaway.rises", f"The line rises by {r.settings.a} a step.", step=r.settings.a)


    def readings(r: Result) -> list[Claim]:
        return [rises(r)]


    def numbers(r: Result) -> dict:
        return {"last": r.ys[-1]}


    INTRO, FORMULA, NOTATION = "A straight line.", "y = a i", ""


    def notes(r: Result) -> str:
        return rises(r).text


    SOURCE = (compute,)
''')

THROWAWAY_PAGE = textwrap.dedent('''
    """A throwaway lab's page, written by the README's recipe: it draws what its module computes."""
    from __future__ import annotations

    import streamlit as st

    import throwaway_lab as lab        # in the app: from core.labs import throwaway as lab
    from core.labs import controls_of
    from ui import url_state
    from ui.common import cite, header, show_source
    from ui.lab import lab_fragment, metric_row
    from ui.plots import show_chart

    CONTROLS = controls_of(lab.KEY)


    def controls() -> lab.Settings:
        return lab.Settings(**{name: url_state.draw(s) for name, s in CONTROLS.items()})


    def view(s: lab.Settings) -> None:
        r = lab.compute(s)
        metric_row(lab.metrics(r))
        for chart in lab.charts(r):
            show_chart(chart)
        st.markdown(lab.notes(r))


    def main() -> None:
        url_state.page("throwaway")
        header(lab.KEY)
        st.markdown(lab.INTRO)
        cite(lab.SECTION)
        lab_fragment(lab.KEY, controls, view)
        show_source(*lab.SOURCE)


    if __name__ == "__main__":
        main()
''')

THROWAWAY_RULES = textwrap.dedent('''
    """The throwaway lab's rules: in the app, tests/test_lab_throwaway.py."""
    NAMED = [dict(a=10, n=50)]


    def holds(c, r):
        rules = {"throwaway.rises": lambda: all(b - a == r.settings.a for a, b in zip(r.ys, r.ys[1:]))}
        return rules[c.kind]()


    def complete(claims, r):
        assert claims
''')


def test_a_lab_added_by_the_recipe_is_covered_without_editing_a_list(tmp_path, monkeypatch):
    """The README's recipe: the lab's module, one Page.of entry, its page and its rules file (its exercises are
    optional). The registry's lists, the page shape, the claims sweep, the notebook and a hostile URL all take it
    up with no list in a test edited."""
    import importlib
    from core import labs
    from core.notebooks import cli as notebook_cli
    for name, text in (("throwaway_lab.py", THROWAWAY_MODULE), ("throwaway.py", THROWAWAY_PAGE),
                       ("test_lab_throwaway.py", THROWAWAY_RULES)):
        (tmp_path / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("throwaway_lab")
    lab = labs.Page.of(module)
    monkeypatch.setitem(labs.PAGES, "throwaway", lab)                         # step 2: one Page.of entry
    monkeypatch.setitem(labs.SETTINGS_OF, "throwaway", module.Settings)      # (derived from PAGES at import)
    assert ("throwaway", {}) in chart_pages() and "/throwaway" in page_paths()
    assert page_params()["throwaway"][:2] == ["a", "n"]
    assert shape_problems("throwaway", THROWAWAY_PAGE, True, module) == []
    broken = THROWAWAY_PAGE.replace("def main() -> None:",
                                    "def line_figure(r):\n    return None\n\n\ndef main() -> None:")
    assert shape_problems("throwaway", broken, True, module) == ["the page builds a figure (line_figure)"]
    from test_claims_sweep import test_every_module_lab_over_every_control
    test_every_module_lab_over_every_control(lab)                            # the sweep walks it, by its rules
    nb = notebook_cli.build("throwaway", {"a": 3})
    assert any("from core.labs import throwaway as lab" in c.source for c in nb.cells)
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(str(tmp_path / "throwaway.py"), default_timeout=60)
    at.query_params["a"] = "nan"
    at.run()
    assert not at.exception and any("Ignored the URL value a" in w.value for w in at.warning)
    assert "The line rises by 2 a step." in " ".join(m.value for m in at.markdown)


def test_a_cell_added_by_the_recipe_is_covered_without_editing_a_list(monkeypatch):
    from core.nn import cells as registry_of_cells
    from core.nn import verify
    from core.nn.models import ModelSpec, RNNLM
    cell = registry_of_cells.Cell("elman", "Elman RNN (test)", lambda n_in, h, layers, dropout: nn.RNN(
        n_in, h, num_layers=layers, batch_first=True))
    monkeypatch.setitem(registry_of_cells.CELLS, "elman", cell)                  # step 1: one Cell entry
    assert "elman" in cells()
    model = RNNLM(ModelSpec(9, 6, "elman", 4)).double()
    loss, _ = model.loss(torch.randint(0, 9, (2, 5)), torch.randint(0, 9, (2, 5)))
    loss.backward()
    assert torch.isfinite(loss) and all(p.grad is not None for p in model.parameters())
    checked = [r.name for r in verify.truncation_checks()]
    assert any("(elman)" in name for name in checked)


def test_figure_functions_are_reusable_from_another_page():
    fc = importlib.import_module("core.labs.forecasting")
    x = forecast.make_series(300, 0.2, 0)
    s = fc.Settings(T=300, n_train=200, tau=4, k=8, sigma=0.2, seed=0)
    a = forecast.analyse(x, s.tau, s.n_train, s.k)
    fig = fc.forecasts_figure(s, x, a)
    assert isinstance(fig, go.Figure) and {t.name for t in fig.data} >= {"data", "1-step", "8-step"}
    assert fc.horizon_figure(s, a).layout.yaxis.type == "log"
    gf = importlib.import_module("core.labs.gradient_flow")
    fig = gf.norms_figure(gradflow.analyse(T=10))
    assert len(fig.data[0].x) == 11 and np.isfinite(fig.data[0].y).all()


def test_forecast_analysis_matches_its_parts():
    x = forecast.make_series(400, 0.2, 1)
    a = forecast.analyse(x, 4, 300, 16)
    assert (a.train_mse, a.test_mse) == forecast.one_step_mse(a.model, x, 300)
    k16 = forecast.predict_k_step(a.model, x, 16)[300:]
    assert a.k_mse == pytest.approx(float(np.mean((k16 - x[300:]) ** 2)), rel=1e-12)   # every point from 300 has one
    assert np.array_equal(a.horizon, forecast.mse_by_horizon(a.model, x, 64, start=300))
    assert set(a.forecasts) == {1, 4, 16, 64}
