"""The one plot style every lab figure uses, and the one way a figure is shown: the chart without a toolbar
(no keyboard trap), its text summary under it and as its accessible label, and a CSV of what it plots."""
from __future__ import annotations

import csv
import io
import re

import numpy as np
import plotly.graph_objects as go
import streamlit as st

# Plotly's toolbar puts eight Tab stops on every chart; a learner needs none of them (zoom is a drag, reset a
# double click), so it is off everywhere.
CONFIG = {"displayModeBar": False, "responsive": True}


def style(fig: go.Figure, title: str | None, x_title: str | None, y_title: str | None, height: int = 360,
          log_x: bool = False, log_y: bool = False, legend_below: bool = False) -> go.Figure:
    """Apply the lab's layout to fig and return it."""
    fig.update_layout(title=title, xaxis_title=x_title, yaxis_title=y_title, height=height,
                      margin=dict(t=50 if title else 20, b=40))
    if log_x:
        fig.update_xaxes(type="log")
    if log_y:
        fig.update_layout(yaxis_type="log")  # the main y axis only (a second one keeps its own scale)
    if legend_below:
        fig.update_layout(legend=dict(orientation="h", y=-0.2))
    return fig


def _cells(values) -> list:
    if values is None:
        return []
    return [v.item() if isinstance(v, np.generic) else v for v in np.asarray(values, dtype=object).ravel()]


def figure_csv(fig: go.Figure) -> str:
    """Every trace's numbers as rows: trace, x, y (and z for heatmaps, one row per cell)."""
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
                    w.writerow([name, xv, yv, z[r, c]])
            continue
        xs, ys = _cells(getattr(trace, "x", None)), _cells(getattr(trace, "y", None))
        for xv, yv in zip(xs or range(len(ys)), ys):
            w.writerow([name, xv, yv, ""])
    return buf.getvalue()


def show(fig: go.Figure, summary: str, key: str, where=None) -> None:
    """Draw fig with its summary (under it, and as the chart's alternative text) and a CSV of its numbers."""
    from ui.common import plain
    where = where if where is not None else st
    where.plotly_chart(fig, width="stretch", config=CONFIG, alt=summary, key=f"chart.{key}")
    where.caption(plain(summary, 1200))
    where.download_button("Data (.csv)", figure_csv(fig), file_name=f"{re.sub(r'[^a-z0-9_-]+', '-', key.lower())}.csv",
                          mime="text/csv", key=f"csv.{key}", on_click="ignore", type="tertiary",
                          icon=":material/download:")
