"""A lab's controls and the view they move, drawn as one fragment (Forecasting, Sampling, Gradient flow), the page
around them drawn from the lab's module (lab_intro, lab_body), and its metrics."""
from __future__ import annotations

from typing import Callable, TypeVar

import streamlit as st

from core.i18n import _
from ui import lang
from ui.common import cite, controls_beside_view, header, learner_errors, show_source
from ui.notebook import download_button

T = TypeVar("T")


def lab_fragment(page: str, controls: Callable[[], T], view: Callable[[T], None]) -> None:
    """The lab's controls beside what they move, as one fragment: moving a control reruns this part only, not the
    page's text, code and exercises around it (20 learners moving Forecasting's tau at the same instant: a median
    answer of 0.42 s instead of 0.72 s, docs/performance.md). 'Download as notebook' sits under the controls,
    inside the fragment (a fragment cannot draw in the sidebar), so it always carries the settings on screen.
    view(settings) draws the view column."""
    def lab() -> None:
        lang.apply()             # a fragment's own rerun does not pass through the page's top
        with learner_errors():   # a fragment's own reruns do not pass through the page's
            settings, where = controls_beside_view(controls, below=lambda: download_button(page, where=st))
            with where:
                view(settings)
    lab.__qualname__ = f"lab_fragment.{page}"   # the fragment's identity: one per lab
    st.fragment(lab)()


def metric_row(metrics: list) -> None:
    """A lab's metrics (core.figures.Metric) side by side, large."""
    for column, m in zip(st.columns(len(metrics)), metrics):
        column.metric(m.label, m.value, help=m.help or None, delta=m.delta or None, delta_color=m.delta_color)


def lab_intro(lab) -> None:
    """A lab whose module (core.labs) holds it: its title, text and formula, and the book's section. The page draws
    an assignment's card under it (ui.exercises), then lab_body."""
    header(lab.KEY)
    st.markdown(_(lab.INTRO))
    if lab.FORMULA:
        st.latex(lab.FORMULA)
    if lab.NOTATION:
        st.caption(_(lab.NOTATION))
    cite(lab.SECTION)


def lab_body(lab, controls: Callable[[], T], view: Callable[[T], None]) -> None:
    """The lab's controls beside its view as one fragment, then the code it shows. The page draws its exercises
    under it (ui.exercises): each of the page's parts takes the lab's key from the page, none from another part."""
    lab_fragment(lab.KEY, controls, view)
    show_source(*lab.SOURCE)
