"""The one way a figure is shown on a page: the chart without a toolbar (no keyboard trap), its text summary under
it and as its accessible label, and a CSV of what it plots. The figures themselves are built in core (core.figures
styles them), so a notebook shows the same ones."""
from __future__ import annotations

import re

import plotly.graph_objects as go
import streamlit as st

from core.figures import Chart, figure_csv
from core.i18n import _

# Plotly's toolbar puts eight Tab stops on every chart; a learner needs none of them (zoom is a drag, reset a
# double click), so it is off everywhere.
CONFIG = {"displayModeBar": False, "responsive": True}


def frozen(fig: go.Figure) -> go.Figure:
    """For a figure that is cached and drawn for many learners: its plain dict is made once and handed to every
    draw, instead of a fresh deep copy of every trace's numbers per draw (st.plotly_chart asks the figure for
    it). Nothing may change the figure after this."""
    plain_dict = fig.to_dict()
    object.__setattr__(fig, "to_dict", lambda: plain_dict)   # plotly's own __setattr__ allows only its properties
    return fig


def show(fig: go.Figure, summary: str, key: str, where=None) -> None:
    """Draw fig with its summary (under it, and as the chart's alternative text) and a CSV of its numbers."""
    from ui.common import plain
    where = where if where is not None else st
    where.plotly_chart(fig, width="stretch", config=CONFIG, alt=summary, key=f"chart.{key}")
    where.caption(plain(summary, 1200))
    # deferred: the CSV is written only when a learner clicks, not on every rerun
    where.download_button(_("Data (.csv)"), lambda f=fig: figure_csv(f), file_name=f"{re.sub(r'[^a-z0-9_-]+', '-', key.lower())}.csv",
                          mime="text/csv", key=f"csv.{key}", on_click="ignore", type="tertiary",
                          icon=":material/download:")


def frozen_chart(chart: Chart) -> Chart:
    """A lab's chart whose figure is cached for many learners (frozen)."""
    frozen(chart.figure)
    return chart


def show_chart(chart: Chart, where=None) -> None:
    """Draw a lab's chart (core.figures.Chart): its figure, its summary and its CSV, under its key."""
    show(chart.figure, chart.summary, chart.key, where)
