"""Models the Sampling lab can use: the shipped pretrained one (loaded once per process) and the ones the
learner trained in this session (handed over by the Training lab)."""
from __future__ import annotations

import streamlit as st

from core.i18n import N_, _
from core.runs.saved import load_pretrained
from ui.common import busy

SESSION_MODELS = "_rnnlab_session_models"
PRETRAINED = "pretrained"


@st.cache_resource(show_spinner=False)
def _pretrained():
    return load_pretrained()


def pretrained():
    """Loaded lazily on first use, then shared by every session of this server process."""
    return busy(N_("Loading the pretrained model ..."), _pretrained)


def session_models() -> dict:
    return st.session_state.setdefault(SESSION_MODELS, {})


def add_session_model(name: str, lm) -> None:
    session_models()[name] = lm


def available() -> list[str]:
    return [PRETRAINED, *session_models()]


def get(name: str):
    if name == PRETRAINED:
        return pretrained()
    models = session_models()
    if name not in models:
        raise ValueError(_("No model called {name} in this session: train one in the Training lab first.").format(
            name=repr(name)))
    return models[name]
