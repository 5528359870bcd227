"""Figures as data: the one plot style every lab figure uses (titles, palette, plain-number ticks, the legend
below), the lines and bands drawn on them, and a figure's numbers as CSV. Plotly only, no Streamlit: a lab's module
builds its figures here, and its page and its notebook show the same ones (ui.plots draws them on a page)."""
from __future__ import annotations

import csv
import datetime as dt
import io
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

@dataclass(frozen=True)
class Chart:
    """One figure of a lab as its page and its notebook show it: a key (the page's widget keys, the CSV's name),
    the figure, and its summary in words (under the chart, and its accessible label)."""

    key: str
    figure: go.Figure
    summary: str


@dataclass(frozen=True)
class Metric:
    """One number a lab shows large above its figures: its label, the value as text, and what it is."""

    label: str
    value: str
    help: str = ""
    delta: str = ""              # a change beside the value ("4.4× one-step"), or ""
    delta_color: str = "normal"  # "inverse" where a larger number is worse (an error)

    def __str__(self) -> str:
        return f"{self.label}: {self.value}"


# Okabe and Ito's palette: its colours differ in hue and in lightness, and stay apart for colour-blind readers.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")


def plain_number(v: float) -> str:
    """A tick label a learner reads without decoding: 0.001, 0.5, 20, 1,000, 100,000; beyond that 1e6, 1e-7."""
    if v == 0:
        return "0"
    if 1e-3 <= abs(v) < 1e6:
        text = f"{v:,.6f}".rstrip("0").rstrip(".")
        return text
    exp = int(np.floor(np.log10(abs(v)) + 1e-9))
    mant = v / 10 ** exp
    return f"1e{exp}" if abs(mant - 1) < 1e-9 else f"{mant:g}e{exp}"


FINE = (1, 1.5, 2, 3, 5, 7)   # steps for data within about a decade: three ticks show the axis is logarithmic


def log_ticks(lo: float, hi: float) -> list[float]:
    """Tick values for a log axis showing lo to hi: 1-2-5 steps over a short range, decades over a long one
    (every second or third decade when there are many). Data within a narrow range gets finer steps, so that
    at least three ticks fall beside it (with two, 10 and 20, a log axis reads as a linear one), and data
    within a few percent gets values between its ends."""
    anchor = int(np.floor(np.log10(lo)))           # the labelled decades count from the data's lowest one
    data = (lo, hi)
    lo, hi = lo / 2, hi * 2                         # the axis shows a little beyond the data
    lo_exp, hi_exp = int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi)))
    span = hi_exp - lo_exp
    mult = (1, 2, 5) if span <= 3 else (1, 3) if span <= 4 else (1,)   # labels stay apart on a phone too
    every = max(1, int(np.ceil(span / 8)))
    for steps in (mult, FINE) if span <= 3 else (mult,):
        ticks = [m * 10.0 ** e for e in range(lo_exp, hi_exp + 1) if (e - anchor) % every == 0 for m in steps]
        if sum(data[0] <= t <= data[1] for t in ticks) >= 3:
            break
    if sum(data[0] <= t <= data[1] for t in ticks) < 2 and data[0] < data[1]:
        return sorted({float(f"{v:.2g}") for v in np.geomspace(*data, 4)})
    return [t for t in ticks if lo <= t <= hi] or [lo, hi]


def _axis_values(fig: go.Figure, axis: str) -> np.ndarray:
    """The finite positive values the traces plot on the main x or y axis (to place log ticks)."""
    out = []
    for trace in fig.data:
        if axis == "y" and getattr(trace, "yaxis", None) not in (None, "y"):
            continue
        vals = getattr(trace, axis, None)
        if vals is None:
            continue
        arr = np.asarray(vals, dtype=object).ravel()
        nums = np.array([float(v) for v in arr if isinstance(v, (int, float, np.number)) and v is not None],
                        dtype=float)
        out.append(nums[np.isfinite(nums) & (nums > 0)])
    return np.concatenate(out) if out else np.array([])


def _plain_log_axis(fig: go.Figure, axis: str) -> None:
    vals = _axis_values(fig, axis)
    if vals.size == 0:
        return
    number_ticks(fig, axis, log_ticks(float(vals.min()), float(vals.max())))


def number_ticks(fig: go.Figure, axis: str, values) -> go.Figure:
    """Ticks at these values, each labelled with its own value as a plain number: the only way a page sets
    numeric ticks (values set alone would keep labels made for other values)."""
    values = [float(v) for v in values]
    fig.update_layout({f"{axis}axis": dict(tickvals=values, ticktext=[plain_number(v) for v in values])})
    return fig


AXIS_STYLE = dict(exponentformat="power", separatethousands=True)


def _axes(fig: go.Figure, letter: str) -> list[str]:
    """The figure's x (or y) axes by layout name: 'xaxis' and any 'xaxis2', 'xaxis3' ... of its subplots."""
    return [f"{letter}axis"] + sorted(p for p in fig.layout._subplotid_props if p.startswith(f"{letter}axis"))


def style(fig: go.Figure, title: str | None, x_title: str | None, y_title: str | None, height: int = 360,
          log_x: bool = False, log_y: bool = False, legend_below: bool = True) -> go.Figure:
    """Apply the lab's layout to fig and return it: titles, the palette, plain-number ticks (no SI prefixes
    such as µ or k on unitless values; log axes labelled with plain numbers at 1-2-5 steps or decades), and the
    legend below the plot (to its right, a legend leaves a phone's plot a third of the screen). One layout update
    (each of plotly's updates validates what it sets: on a page of many figures, per rerun, it adds up)."""
    layout = dict(title=title, height=height, margin=dict(t=50 if title else 20, b=40), colorway=PALETTE)
    for name in _axes(fig, "x") + _axes(fig, "y"):
        layout[name] = dict(AXIS_STYLE)
    layout["xaxis"]["title_text"], layout["yaxis"]["title_text"] = x_title, y_title
    if log_x:
        for name in _axes(fig, "x"):
            layout[name]["type"] = "log"
    if log_y:
        layout["yaxis"]["type"] = "log"  # the main y axis only (a second one keeps its own scale)
    if legend_below:   # below the tick labels, and below the axis title when there is one
        layout["legend"] = dict(orientation="h", yanchor="top", y=-0.3 if x_title else -0.15)
    fig.update_layout(layout)
    if log_x:
        _plain_log_axis(fig, "x")
    if log_y:
        _plain_log_axis(fig, "y")
    return fig


def hline(fig: go.Figure, y: float, text: str, dash: str = "dash", color: str | None = None,
          log_y: bool = False, above: bool = False) -> go.Figure:
    """A horizontal line across the plot, labelled at the left just under it (or above it) (what fig.add_hline
    draws, at a third of its cost: this runs on every rerun of every learner). On a log y axis (log_y) Plotly
    places a label by the logarithm of its y, a line by y itself."""
    fig.add_shape(type="line", xref="x domain", x0=0, x1=1, yref="y", y0=y, y1=y,
                  line=dict(dash=dash, **({"color": color} if color else {})))
    fig.add_annotation(text=text, showarrow=False, xref="x domain", x=0, xanchor="left", yref="y",
                       y=float(np.log10(y)) if log_y else y, yanchor="bottom" if above else "top")
    return fig


def x_band(fig: go.Figure, x0: float, x1: float, text: str, color: str = "#4c78a8") -> go.Figure:
    """A lightly shaded range of x labelled at its top left (fig.add_vrect's drawing, at a third of its cost)."""
    fig.add_shape(type="rect", xref="x", x0=x0, x1=x1, yref="y domain", y0=0, y1=1, fillcolor=color,
                  opacity=0.06, line=dict(width=0))
    fig.add_annotation(text=text, showarrow=False, xref="x", x=x0, xanchor="left", yref="y domain", y=1,
                       yanchor="top")
    return fig


def _cells(values) -> list:
    if values is None:
        return []
    return [v.item() if isinstance(v, np.generic) else v for v in np.asarray(values, dtype=object).ravel()]


def figure_csv(fig: go.Figure) -> str:
    """Every trace's numbers as rows: trace, x, y (and z for heatmaps, one row per cell). Labels that start like a
    spreadsheet formula (a learner's name, a typed text) are written as text (csv_cell)."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["trace", "x", "y", "z"])
    for i, trace in enumerate(fig.data):
        name = getattr(trace, "name", None) or f"trace {i + 1}"
        z = getattr(trace, "z", None)
        if z is not None:
            z = np.asarray(z)
            xs = _cells(trace.x) or list(range(z.shape[1]))
            ys = _cells(trace.y) or list(range(z.shape[0]))
            for r, yv in enumerate(ys):
                for c, xv in enumerate(xs):
                    w.writerow([csv_cell(name), csv_cell(xv), csv_cell(yv), z[r, c]])
            continue
        xs, ys = _cells(getattr(trace, "x", None)), _cells(getattr(trace, "y", None))
        for xv, yv in zip(xs or range(len(ys)), ys):
            w.writerow([csv_cell(name), csv_cell(xv), csv_cell(yv), ""])
    return buf.getvalue()


def csv_cell(value) -> object:
    """A value for a CSV a spreadsheet may open: text that starts like a formula ('=HYPERLINK(...)', '@SUM(...)',
    a learner's name or a stored label) gets a leading apostrophe, so it shows as text and never runs. Numbers stay
    numbers."""
    if not isinstance(value, str) or value[:1] not in ("=", "+", "-", "@", "\t", "\r"):
        return value
    try:
        float(value)
        return value
    except ValueError:
        return "'" + value


def chart_text(text: object, limit: int = 80) -> str:
    """A user's or a stored file's value as chart text: Plotly renders a few HTML tags in its labels (<a href>
    among them), so the angle brackets become look-alikes that are only text."""
    text = str(text)
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return text.replace("<", "‹").replace(">", "›")


def iso_time(seconds: float) -> str:
    """A Unix time as ISO 8601 in UTC (2026-12-03T10:27:55Z), as spreadsheets and gradebooks read it."""
    return dt.datetime.fromtimestamp(float(seconds), dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
