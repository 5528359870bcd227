"""A learner's attempts, kept: on the server under their token (core.classroom), else in this tab, and read back
as their progress by the one rule of first attempts (core.classroom.fold). An attempt the records cannot take
just now (a full disk, a read-only or damaged file, records too busy) waits in the tab, is shown as the learner's,
and is saved in the order it was made once they can take it."""
from __future__ import annotations

import time

import streamlit as st

from core import classroom
from core.exercises import types as core_ex
from core.exercises.bank import BANK
from core.labs import url_query
from ui import learner

PROGRESS = "_rnnlab_exercise_progress"


_READ = "_rnnlab_progress_read"   # (learner token, their progress) as last read from the records this session


def progress(fresh: bool = False) -> dict:
    """exercise key -> the first attempt {"answer", "correct", "at", "tries", "latest", "latest_correct"}: from the
    server's records for a known learner (read once, and again after each attempt this session keeps, or when
    fresh) with the attempts they could not take yet on top, else from this tab (when the records cannot be
    read)."""
    flush()
    who = learner.current()
    if who is not None:
        read = st.session_state.get(_READ)
        if fresh or read is None or read[0] != who.token:
            try:
                read = st.session_state[_READ] = (who.token, classroom.progress(who.token))
            except ValueError:
                read = None
        if read is not None:
            waiting = [a for a in st.session_state.get(PENDING, []) if a["token"] == who.token]
            if not waiting:
                return read[1]
            shown = {k: dict(v) for k, v in read[1].items()}
            for a in waiting:
                classroom.fold(shown, _attempt(a))
            return shown
    return st.session_state.setdefault(PROGRESS, {})


PENDING = "_rnnlab_pending_attempts"   # attempts the records could not take (a full disk, ...): kept in the tab
FAULT = "_rnnlab_storage_fault"        # why, in words, while any wait
_FLUSHED = "_rnnlab_pending_tried"     # when they were last tried again
RETRY_S = 5.0


def flush() -> None:
    """Try the waiting attempts again, oldest first (at most every RETRY_S), each with the time it was made."""
    waiting = st.session_state.get(PENDING)
    if not waiting or time.monotonic() - st.session_state.get(_FLUSHED, -RETRY_S) < RETRY_S:
        return
    st.session_state[_FLUSHED] = time.monotonic()
    while waiting:
        a = waiting[0]
        try:
            classroom.record_attempt(a["token"], a["exercise"], a["answer"], a["correct"], a["computed"],
                                     a["source"], at=a["at"], settings=a["settings"],
                                     figures_shown=a["figures_shown"], card_at=a["card_at"])
        except ValueError as exc:
            st.session_state[FAULT] = str(exc)
            return
        waiting.pop(0)
        st.session_state.pop(_READ, None)
    st.session_state.pop(FAULT, None)
    st.toast("Your answers kept in this tab are now saved.", icon=":material/cloud_done:")


def waiting(ex_key: str) -> str | None:
    """Why this exercise's latest attempt is not saved on the server yet (None when it is)."""
    if any(a["exercise"] == ex_key for a in st.session_state.get(PENDING, [])):
        return st.session_state.get(FAULT, "")
    if learner.current() is None and ex_key in st.session_state.get(PROGRESS, {}):
        return "the class records cannot be written just now, so this tab has no learner code yet."
    return None


def class_assignment() -> set[str]:
    """The exercises this learner's class was assigned (empty: none, or not in a class)."""
    who = learner.current()
    if who is None or who.class_id is None:
        return set()
    try:
        return classroom.assigned(who.class_id)
    except ValueError:
        return set()


# Each exercise's own setup as its lab's address writes it (URL key -> text): fixed by the bank, worked out once.
SETUP = {k: url_query(ex.lab, ex.url) for k, ex in BANK.items()}


def page_settings(ex: core_ex.Exercise) -> dict:
    """The page's values (as the URL carries them) of the controls the exercise sets up."""
    return {key: st.query_params.get(key, "") for key in SETUP[ex.key]}


def keep(ex: core_ex.Exercise, answer, correct: bool, computed, source: str = "check",
         figures_shown: bool | None = None, card_at: float | None = None) -> None:
    """One attempt, on the server under the learner's token (made now for a learner alone), else in the tab; an
    attempt the records cannot take just now (a full disk, a read-only or damaged file) waits in the tab, is shown
    as the learner's, and is saved when they can take it (flush), in the order it was made."""
    token = learner.ensure()
    a = {"token": token, "exercise": ex.key, "answer": answer, "correct": correct, "computed": computed,
         "source": source, "at": time.time(), "settings": page_settings(ex) if source == "check" else None,
         "figures_shown": figures_shown, "card_at": card_at}
    if token is not None:
        st.session_state[_FLUSHED] = -RETRY_S
        flush()
        if not st.session_state.get(PENDING):
            try:
                classroom.record_attempt(token, ex.key, answer, correct, computed, source, at=a["at"],
                                         settings=a["settings"], figures_shown=figures_shown, card_at=card_at)
                st.session_state.pop(_READ, None)
                return
            except ValueError as exc:    # a StorageFault, or records busy for longer than a write waits
                st.session_state[FAULT] = str(exc)
        st.session_state.setdefault(PENDING, []).append(a)
    classroom.fold(st.session_state.setdefault(PROGRESS, {}), _attempt(a))


def _attempt(a: dict) -> dict:
    """An attempt as progress folds it (no token: progress downloads)."""
    return {k: v for k, v in a.items() if k not in ("token", "settings", "figures_shown", "card_at")}
