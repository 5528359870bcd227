"""Lab 5, Gradient flow: draws what core.labs.gradient_flow computes (settings, figures, readings all there)."""
from __future__ import annotations

import streamlit as st

from core.i18n import N_, current
from core.labs import controls_of, gradient_flow as lab
from ui import exercises, url_state
from ui.common import deeper
from ui.lab import lab_body, lab_intro, metric_row
from ui.plots import frozen_chart, show_chart

REGIME_COLOURS = {"vanishing": "blue", "stable": "green", "exploding": "red"}
CONTROLS = controls_of(lab.KEY)


def controls() -> lab.Settings:
    return lab.Settings(**{name: url_state.draw(s, **({"horizontal": True} if name == "kind" else {}))
                           for name, s in CONTROLS.items()})


@st.cache_resource(show_spinner=False, max_entries=64)
def computed(s: lab.Settings, lang: str) -> tuple:
    """The result and its charts for these settings, built once for every learner who sets them (a class told
    "now set T to 48" asks for the same ones at the same instant). Shared, so nothing changes them after. lang: the
    language their words are in."""
    r = lab.compute(s)
    return r, {c.key: frozen_chart(c) for c in lab.charts(r)}


def view(s: lab.Settings) -> None:
    """Everything the controls move: the metrics, the three figures and the notes."""
    exercises.hold_figures(lab.KEY)
    r, charts = computed(s, current())
    metric_row(lab.metrics(r))
    regime, word = lab.regime(r), lab.regime_word(r)       # the regime's word comes first in its sentence
    colour = REGIME_COLOURS[r.analysis.regime]
    st.markdown(regime.text.replace(word, f":{colour}[**{word}**]", 1))
    damped = lab.damping(r)
    if damped:
        st.info(damped.text)
    show_chart(charts["norms"])
    c1, c2 = st.columns(2)
    show_chart(charts["eigenvalues"], c1)
    show_chart(charts["clipping"], c2)
    st.markdown(lab.notes(r))
    deeper("gates", N_("The remedy, trained live: a plain RNN forgets across a delay, a GRU and an LSTM remember"))


def main() -> None:
    url_state.page("gradient_flow")
    lab_intro(lab)
    exercises.assignment(lab.KEY)
    lab_body(lab, controls, view)
    exercises.section(lab.KEY)


if __name__ == "__main__":
    main()
