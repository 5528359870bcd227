"""How a queued run is shown, the same in the Training lab and in the chapter's Act 4."""
from __future__ import annotations

import streamlit as st

from ui.session import job_manager


def queued_notice(job) -> None:
    position = job_manager().position(job)
    if position == 0:   # queued in another web process (opened from the run store): it starts there
        st.info(f"Queued on the {job.device.upper()} by another of this site's servers; it starts by itself.",
                icon=":material/hourglass_top:")
        return
    ahead, eta, others = position - 1, job_manager().eta(job), job_manager().companions(job)
    start = f" It should start in about {minutes(eta)}." if eta is not None else ""
    if others and not ahead:   # the next to start: with the runs it trains with, as one group
        st.info(f"Your run starts together with {together(others)} as soon as the run in progress ends, in one "
                f"computation on the {job.device.upper()}; each keeps its own weights, settings, curve and Stop."
                + start + " You can leave this page and come back to its address.", icon=":material/group:")
        return
    st.info(f"Queued on the {job.device.upper()}, number {position} in line: the server is training other "
            "learners' runs" + (f", and {ahead} more turn{'s come' if ahead != 1 else ' comes'} before yours" if ahead
                                else "")
            + (f". Yours will train together with {together(others)}, in one computation" if others else "")
            + "." + start + " It starts by itself; you can leave this page and come back to its address.",
            icon=":material/hourglass_top:")


def minutes(seconds: float) -> str:
    return f"{max(1, round(seconds / 60))} min" if seconds >= 90 else f"{max(5, round(seconds / 5) * 5)} s"


def together(others: int) -> str:
    return f"{others} other{'s' if others != 1 else ''}"


def group_line(job) -> None:
    """A run training in one computation with others (core.runs.group) says so."""
    others = job_manager().companions(job)
    if others and job.active:
        st.caption(f"Training together with {together(others)} in one computation: each run keeps its own "
                   "weights, settings, curve and Stop.")
