"""The chapter's "Retrain live": the passage run trained by the server's job manager (outside the page's
script), and the stored run shown until then. Streamlit-side only; the run itself is core.lesson.passage."""
from __future__ import annotations

import streamlit as st

from core.i18n import _

from core.lesson import passage, store as passage_store
from core.runs.jobs import Job
from core.runs.record import HistoryRow
from ui.session import job_manager, session_id

_JOB = "chapter.passage_job"


@st.cache_resource(show_spinner=False)
def baked() -> passage_store.Baked:
    """The stored run in assets/ (loaded once per server process; ValueError says how to rebuild it)."""
    return passage_store.load_baked()


@st.cache_data(show_spinner=False, max_entries=8)
def teacher_forcing(epoch: int, text: str) -> passage.TeacherForcing:
    """The stored run's model after `epoch` epochs reading text both ways (once per text)."""
    return passage.teacher_forcing(baked().models[epoch], text)


def start(seed: int, raw_text: str) -> None:
    """Start the passage run with this seed (ValueError when the server is busy or the text too short)."""
    cfg = passage.config(seed)
    passage.passage(raw_text, cfg)  # a clear message now rather than an error inside the run
    job = job_manager().submit(cfg, raw_text, session_id(), name=_("passage, seed {seed}").format(seed=seed))
    st.session_state[_JOB] = job.id


def current() -> Job | None:
    """This session's latest passage run, if it still exists."""
    job_id = st.session_state.get(_JOB)
    if job_id is None:
        return None
    return next((j for j in job_manager().for_session(session_id()) if j.id == job_id), None)


def history(job: Job) -> list[HistoryRow]:
    if job.result is not None:
        return job.result.history
    return job.progress.history if job.progress is not None else []

