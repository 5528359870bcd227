"""How a queued run is shown, the same in the Training lab and in the chapter's Act 4, and a run's status in words."""
from __future__ import annotations

import streamlit as st

from core.i18n import _, ngettext, sentences
from core.runs.record import status_word
from ui.session import job_manager

__all__ = ["group_line", "minutes", "queued_notice", "status_word", "together"]


def queued_notice(job) -> None:
    position = job_manager().position(job)
    device = job.device.upper()
    if position == 0:   # queued in another web process (opened from the run store): it starts there
        st.info(_("Queued on the {device} by another of this site's servers; it starts by itself.").format(
            device=device), icon=":material/hourglass_top:")
        return
    ahead, eta, others = position - 1, job_manager().eta(job), job_manager().companions(job)
    start = _("It should start in about {time}.").format(time=minutes(eta)) if eta is not None else ""
    leave = _("You can leave this page and come back to its address.")
    if others and not ahead:   # the next to start: with the runs it trains with, as one group
        st.info(sentences(_("Your run starts together with {others} as soon as the run in progress ends, in one "
                            "computation on the {device}; each keeps its own weights, settings, curve and Stop.").format(
            others=together(others), device=device), start, leave), icon=":material/group:")
        return
    line = (ngettext("Queued on the {device}, number {position} in line: the server is training other learners' runs, "
                     "and {ahead} more turn comes before yours.",
                     "Queued on the {device}, number {position} in line: the server is training other learners' runs, "
                     "and {ahead} more turns come before yours.", ahead) if ahead else
            _("Queued on the {device}, number {position} in line: the server is training other learners' runs."))
    group = _("Yours will train together with {others}, in one computation.").format(others=together(others)) \
        if others else ""
    st.info(sentences(line.format(device=device, position=position, ahead=ahead), group, start,
                      _("It starts by itself; you can leave this page and come back to its address.")),
            icon=":material/hourglass_top:")


def minutes(seconds: float) -> str:
    return (_("{n} min").format(n=max(1, round(seconds / 60))) if seconds >= 90 else
            _("{n} s").format(n=max(5, round(seconds / 5) * 5)))


def together(others: int) -> str:
    return ngettext("{n} other", "{n} others", others).format(n=others)


def group_line(job) -> None:
    """A run training in one computation with others (core.runs.group) says so."""
    others = job_manager().companions(job)
    if others and job.active:
        st.caption(_("Training together with {others} in one computation: each run keeps its own weights, settings, "
                     "curve and Stop.").format(others=together(others)))
