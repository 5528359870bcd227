"""The browser session behind a script run, and the server's shared job manager.

The only module that reaches into Streamlit's runtime: which session is running this script, whether a
session is still connected, and whether this run is a fragment refreshing on its own.
"""
from __future__ import annotations

import streamlit as st

from core.runs.jobs import JobManager


def session_id() -> str:
    from streamlit.runtime.scriptrunner import get_script_run_ctx
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx else "local"


def session_alive(sid: str) -> bool:
    try:
        from streamlit.runtime import Runtime
        return not Runtime.exists() or Runtime.instance().is_active_session(sid)
    except Exception:
        return True


def fragment_only_run() -> bool:
    """True while a fragment reruns on its own (a full-page run draws everything anyway)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx
    ctx = get_script_run_ctx()
    return bool(ctx and getattr(ctx, "fragment_ids_this_run", None))


@st.cache_resource
def job_manager() -> JobManager:
    """One job manager per server process, shared by every session; training processes start warm (a spare worker
    has imported torch before the first Train press: core.runs.launchers.POOL)."""
    manager = JobManager(session_alive=session_alive)
    if manager.mode == "process":
        from core.runs.launchers import POOL
        POOL.fill()
    return manager


def ensure_navigation() -> None:
    """Make a deep link (e.g. /forecasting?tau=8) opened first after server start go through app.py.

    Streamlit treats an app with a pages/ folder as a folder-based app until app.py has called
    st.navigation once in this process; a first visit straight to a page would then skip app.py
    (no page config, no sidebar). Clearing that flag and rerunning routes the visit through app.py.
    """
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # a future Streamlit without the flag
        return
    if getattr(PagesManager, "uses_pages_directory", False):
        PagesManager.uses_pages_directory = False
        st.rerun()
