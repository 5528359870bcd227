"""Every learner: each chart has a text summary (under it and as its alternative text) and a CSV of its numbers,
no chart toolbar, and no emoji in the UI code."""
import json
import math
import pathlib
import re

import pytest

from apptest_util import ROOT, page
from conftest import corpus_path
from registry import chart_pages, labs

PAGES = chart_pages()
CORPUS_CHARTS = {lab.key for lab in labs() if lab.corpus_charts} | {"chapter2"}   # Act 2 counts the corpus


def charts(at):
    return at.get("plotly_chart")


@pytest.mark.parametrize("name,query", PAGES, ids=[f"{n}{q.get('act', '')}" for n, q in PAGES])
def test_every_chart_has_a_summary_a_label_and_its_data(name, query):
    if f"{name}{query.get('act', '')}" in CORPUS_CHARTS and corpus_path() is None:
        pytest.skip("these charts are drawn from the corpus")
    at = page(name, **query).run()
    assert not at.exception
    shown = charts(at)
    assert shown, "each of these pages draws at least one chart"
    data = [b for b in at.get("download_button") if b.label == "Data (.csv)"]
    assert len(data) == len(shown)
    for chart in shown:
        alt = chart.proto.alt
        assert len(alt) > 40 and re.search(r"\d", alt), alt      # words with the chart's numbers
        assert '"displayModeBar": false' in chart.proto.config.replace(" ", "").replace(":", ": ")
    captions = " ".join(c.value for c in at.caption)
    for chart in shown:
        assert chart.proto.alt.split(" ")[0].strip(":,.") in captions.replace("\\", "")


def tick_mismatches(spec: dict) -> list[str]:
    """Axes whose numeric tick labels do not say the value they stand at (a label that is not a number, such as
    a character under a heatmap column, is not checked)."""
    out = []
    for name, axis in spec.get("layout", {}).items():
        if not name.startswith(("xaxis", "yaxis")) or not isinstance(axis, dict):
            continue
        values, texts = axis.get("tickvals"), axis.get("ticktext")
        if values is None or texts is None:
            continue
        if len(values) != len(texts):
            out.append(f"{name}: {len(values)} values, {len(texts)} labels")
        for v, t in zip(values, texts):
            try:
                said = float(str(t).split("<br>")[0].replace(",", ""))
            except ValueError:
                continue
            if not math.isclose(said, float(v), rel_tol=1e-6, abs_tol=1e-12):
                out.append(f"{name}: label {t!r} at {v}")
    return out


@pytest.mark.parametrize("name,query", PAGES, ids=[f"{n}{q.get('act', '')}" for n, q in PAGES])
def test_every_tick_label_says_the_value_it_stands_at(name, query):
    if f"{name}{query.get('act', '')}" in CORPUS_CHARTS and corpus_path() is None:
        pytest.skip("these charts are drawn from the corpus")
    at = page(name, **query).run()
    for chart in charts(at):
        spec = json.loads(chart.proto.spec)
        assert tick_mismatches(spec) == [], (spec.get("layout", {}).get("title"), tick_mismatches(spec))


@pytest.mark.parametrize("name,query", PAGES, ids=[f"{n}{q.get('act', '')}" for n, q in PAGES])
def test_every_legend_sits_below_its_chart(name, query):
    """Issue 30: to the right of a chart, a legend leaves a phone's plot a third of the screen."""
    if f"{name}{query.get('act', '')}" in CORPUS_CHARTS and corpus_path() is None:
        pytest.skip("these charts are drawn from the corpus")
    for chart in charts(page(name, **query).run()):
        spec = json.loads(chart.proto.spec)
        shown = [t for t in spec["data"] if t.get("showlegend", True) is not False and t.get("name")]
        if len(shown) > 1 and spec["layout"].get("showlegend", True):
            assert spec["layout"].get("legend", {}).get("orientation") == "h", spec["layout"].get("title")


def test_the_tick_check_sees_labels_made_for_other_values():
    import plotly.graph_objects as go
    from core.figures import style
    fig = style(go.Figure(go.Scatter(x=[1, 2, 3], y=[4.0, 10.0, 20.0])), "t", "x", "y", log_y=True)
    assert tick_mismatches(json.loads(fig.to_json())) == []
    fig.update_yaxes(tickvals=[1, 2, 3, 4, 5, 7, 10, 15, 20, 30])   # the fault issue 30 found: values alone
    assert tick_mismatches(json.loads(fig.to_json()))


def test_no_page_draws_a_chart_any_other_way():
    for path in list((ROOT / "pages").glob("*.py")) + list((ROOT / "ui").glob("*.py")):
        if path.name != "plots.py":
            assert ".plotly_chart(" not in path.read_text(), path.name


EMOJI = re.compile("[\U0001F300-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\uFE0F]")


def test_no_emoji_in_the_ui_code():
    """Emoji show as empty boxes without an emoji font (Debian's chromium): Material icons instead."""
    for path in [ROOT / "app.py", *(ROOT / "pages").glob("*.py"), *(ROOT / "ui").glob("*.py")]:
        text = path.read_text()
        text = re.sub(r'page_icon="[^"]*"', "", text)   # the browser tab's icon is the one exception
        assert not EMOJI.search(text), (path.name, EMOJI.search(text).group())


def test_figure_csv_holds_what_the_chart_plots():
    import plotly.graph_objects as go
    from core.figures import figure_csv
    fig = go.Figure([go.Scatter(x=[1, 2], y=[0.5, 0.25], name="norm"), go.Heatmap(z=[[1, 2]], x=["a", "b"], y=["h"])])
    rows = figure_csv(fig).strip().splitlines()
    assert rows == ["trace,x,y,z", "norm,1,0.5,", "norm,2,0.25,", "trace 2,a,h,1", "trace 2,b,h,2"]


def _tick_texts(fig, axis="yaxis"):
    return list(getattr(fig.layout, axis).ticktext or [])


def test_log_axes_read_as_plain_numbers():
    import numpy as np
    from core.sequences import forecast
    from core.nn import gradflow
    from core.labs import forecasting, gradient_flow, rnn_cell
    from core.figures import log_ticks, plain_number
    figs = [gradient_flow.norms_figure(gradflow.analyse()), rnn_cell.memory_figure(28, 256)]
    x = forecast.make_series(1000, 0.2, 0)
    s = forecasting.Settings(T=1000, n_train=600, tau=4, k=16, sigma=0.2, seed=0)
    figs.append(forecasting.horizon_figure(s, forecast.analyse(x, 4, 600, 16)))
    for fig in figs:
        texts = _tick_texts(fig)
        assert texts and fig.layout.yaxis.type == "log"
        assert not any(re.search(r"[µmkMGB]$", t) for t in texts), texts   # no SI prefixes
        assert fig.layout.yaxis.title.text and fig.layout.xaxis.title.text
    assert [plain_number(v) for v in (0.001, 0.5, 20, 1000, 1e-7, 3e9)] == ["0.001", "0.5", "20", "1,000", "1e-7",
                                                                          "3e9"]
    assert [plain_number(t) for t in log_ticks(1.2, 28)] == ["1", "2", "5", "10", "20", "50"]
    assert len(log_ticks(1e-7, 1e15)) <= 9                                  # decades thinned, never a wall
    assert np.all(np.diff(log_ticks(1e-7, 1.0)) > 0)
    # data within a narrow range: at least three ticks beside it, so the axis cannot pass for a linear one
    for lo, hi in ((6.48, 27.9), (0.04, 0.27), (3.9, 4.1), (7.2, 7.6)):
        beside = [t for t in log_ticks(lo, hi) if lo <= t <= hi]
        assert len(beside) >= 3 and np.all(np.diff(beside) > 0), (lo, hi, beside)
    assert [plain_number(t) for t in log_ticks(6.48, 27.9) if 6.48 <= t <= 27.9] == ["7", "10", "15", "20"]


def test_every_figure_uses_the_colour_blind_safe_palette_and_titles_its_axes():
    from core.sequences import forecast
    from core.nn import gradflow
    from core.labs import forecasting, gradient_flow
    from core.figures import PALETTE
    x = forecast.make_series(1000, 0.2, 0)
    s = forecasting.Settings(T=1000, n_train=600, tau=4, k=16, sigma=0.2, seed=0)
    a = forecast.analyse(x, 4, 600, 16)
    for fig in (forecasting.forecasts_figure(s, x, a), gradient_flow.clipping_figure(gradflow.analyse(), 1.0)):
        assert tuple(fig.layout.colorway) == PALETTE
        assert fig.layout.xaxis.title.text and fig.layout.yaxis.title.text
    assert len(set(PALETTE)) == len(PALETTE)


def test_the_sampled_characters_probabilities_are_readable_without_hovering():
    at = page("sampling").run()
    table = next(df.value for df in at.dataframe if "probability (T = 1)" in df.value.columns)
    assert len(table) == 300 and table["probability (T = 1)"].between(0, 1).all()
    assert (table["surprisal (bits)"] >= 0).all()


def test_a_line_label_sits_by_its_line_on_a_log_axis():
    """Plotly places an annotation on a log axis by log10 of its y, a shape by y itself: the helper converts,
    so the horizon chart's variance label is next to its dashed line (not far above the plot)."""
    import math

    from core.sequences import forecast
    from core.labs.forecasting import Settings, horizon_figure
    a = forecast.analyse(forecast.make_series(1000, 0.2, 0), 4, 600, 16)
    fig = horizon_figure(Settings(1000, 600, 4, 16, 0.2, 0), a)
    (line,), (label,) = fig.layout.shapes, fig.layout.annotations
    assert fig.layout.yaxis.type == "log" and line.y0 == a.test_variance
    assert label.y == math.log10(a.test_variance) and label.yanchor == "top"
