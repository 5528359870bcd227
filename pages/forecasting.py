"""Lab 1, Forecasting: draws what core.labs.forecasting computes (settings, figures, readings all there)."""
from __future__ import annotations

import streamlit as st

from core.i18n import _, current
from core.labs import controls_of, forecasting as lab
from ui import exercises, url_state
from ui.lab import lab_body, lab_intro, metric_row
from ui.plots import frozen_chart, show_chart

CONTROLS = controls_of(lab.KEY)


def controls() -> lab.Settings:
    T = url_state.draw(CONTROLS["T"])
    return lab.Settings(T=T, n_train=url_state.draw(CONTROLS["n_train"], hi=T - 1),
                        **{name: url_state.draw(CONTROLS[name]) for name in ("tau", "k", "sigma", "seed")})


@st.cache_resource(show_spinner=False, max_entries=32)
def computed(s: lab.Settings, lang: str) -> tuple:
    """The result and its charts for these settings, built once for every learner who sets them: a class told "now
    set tau to 8" asks for the same ones at the same instant, and the first learner's run builds them while the
    others wait for it. Shared, so nothing changes them after. lang: the language their words are in."""
    r = lab.compute(s)
    return r, [frozen_chart(c) for c in lab.charts(r)]


def view(s: lab.Settings) -> None:
    """Everything the controls move: the metrics, both figures, the reading and the fitted weights."""
    exercises.hold_figures(lab.KEY)
    r, charts = computed(s, current())
    metric_row(lab.metrics(r))
    for chart in charts:
        show_chart(chart)
    st.markdown(lab.notes(r))
    with st.expander(_("Fitted weights")):
        st.write(lab.weights(r))


def main() -> None:
    url_state.page("forecasting")
    lab_intro(lab)
    exercises.assignment(lab.KEY)
    lab_body(lab, controls, view)
    exercises.section(lab.KEY)


if __name__ == "__main__":
    main()
