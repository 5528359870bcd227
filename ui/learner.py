"""Who is answering: a learner's token (core.classroom), kept in the address (?me=, as ?run= keeps a run) and in
a cookie of this site, so a reload, another lab, or the next assignment link opened in the same browser all find
the learner's progress again. There are no accounts: the token is the key, and "Not you?" forgets it here.
"""
from __future__ import annotations

import streamlit as st

from core import classroom
from core.labs import Url
from ui.common import plain

ME = Url.LEARNER
COOKIE = "rnnlab_me"
_SESSION = "_rnnlab_learner"
_WHO = "_rnnlab_learner_record"     # the learner's record, read once per session (not on every rerun)
_COOKIE_SET = "_rnnlab_cookie_set"
_FORGOTTEN = "_rnnlab_forgotten"    # this session forgot its learner: the cookie it arrived with counts no more
_CLEAR_COOKIE = "_rnnlab_clear_cookie"   # the cookie is cleared on the next run (a rerun drops this run's frame)
_OTHER = "_rnnlab_other_learner"    # another learner's code from the address: asked about, never taken silently


def _lookup(token: str) -> classroom.Learner | None:
    try:
        return classroom.learner(token)
    except ValueError:   # the records cannot be opened: the app goes on without them (progress in the tab)
        return None


def _cookie_learner() -> str | None:
    """The learner this browser's cookie names (as the session arrived: the cookies never change during it, so
    after "Not you?" they are stale and not read)."""
    if st.session_state.get(_FORGOTTEN) or not st.context.cookies:
        return None
    cookie = st.context.cookies.get(COOKIE)
    return cookie if cookie and _lookup(cookie) is not None else None


def keep_in_url() -> None:
    """Every page calls this first (url_state.page): the address carries this browser's learner token (from this
    session, else the cookie). A learner code in the address that is not this browser's (copied from someone's
    address bar, or the learner's own on a new computer) is asked about, never taken silently."""
    if st.session_state.pop(_CLEAR_COOKIE, False):
        remember(None)
    known = st.session_state.get(_SESSION)
    if known is None and (cookie := _cookie_learner()) is not None:
        st.session_state[_SESSION] = st.session_state[_COOKIE_SET] = known = cookie
    token = st.query_params.get(ME)
    if token and token != known:
        if _lookup(token) is None:
            st.warning("This address carries a learner code this server does not know (it may be from another "
                       "server, or mistyped): your answers here start afresh.", icon=":material/warning:")
            del st.query_params[ME]
        else:
            st.session_state[_OTHER] = token
    if known and st.query_params.get(ME) != known:
        st.query_params[ME] = known
    if known and st.session_state.get(_COOKIE_SET) != known:
        remember(known)
    _ask_whose()


def _called(who: classroom.Learner) -> str:
    return plain(who.name, 40) if who.name else "a learner without a class"


def _ask_whose() -> None:
    """The address carried a learner code that is not this browser's: say whose, and let the learner choose. Until
    then the answers count for this browser's learner, as before the link (a browser without one makes a new
    code at its first answer): a wrong answer never becomes someone else's first attempt."""
    other = st.session_state.get(_OTHER)
    them, me = (_lookup(other) if other else None), current()
    if them is None or (me is not None and them.token == me.token):
        st.session_state.pop(_OTHER, None)
        return
    with st.container(border=True, key="learner-whose"):
        if me is None:
            st.warning(f"This link carries the learner code of **{_called(them)}**. Is that you? Until you say, "
                       "your answers here count for nobody else.", icon=":material/person_alert:")
        else:
            st.warning(f"This link carries the learner code of **{_called(them)}**, but this browser answers as "
                       f"**{_called(me)}**. Your answers count for {_called(me)} until you choose.",
                       icon=":material/person_alert:")
        keep, switch = st.columns(2)
        keep.button(f"Continue as {_called(me)}" if me else "No: start afresh", key="learner.keep",
                    on_click=_choose, args=(me.token if me else None,))
        switch.button(f"Switch to {_called(them)}" if me else f"Yes, I am {_called(them)}", key="learner.switch",
                      on_click=_choose, args=(them.token,))


def _choose(token: str | None) -> None:
    """The learner's answer to _ask_whose: this token (None: nobody yet, and the address loses the other code)."""
    st.session_state.pop(_OTHER, None)
    if token is None:
        if ME in st.query_params:
            del st.query_params[ME]
    elif token != st.session_state.get(_SESSION):
        become(token)


def remember(token: str | None) -> None:
    """Set (or, with None, clear) this site's cookie with the learner's token, from a tiny script in an invisible
    frame (Streamlit can read cookies but not write them)."""
    if token is not None and not classroom.is_token(token):
        return
    write_cookie(COOKIE, token)
    st.session_state[_COOKIE_SET] = token


def write_cookie(name: str, token: str | None) -> None:
    """Set (None: clear) a cookie of this site to a token (letters, digits, - and _ only: checked by the caller),
    from a tiny script in an invisible frame."""
    value, age = (token, 365 * 24 * 3600) if token else ("", 0)
    st.iframe(f"<script>document.cookie = '{name}={value}; path=/; max-age={age}; SameSite=Strict';</script>",
              height=1)


def current() -> classroom.Learner | None:
    token = st.session_state.get(_SESSION)
    if not token:
        return None
    who = st.session_state.get(_WHO)
    if who is None or who.token != token:
        who = st.session_state[_WHO] = _lookup(token)
    return who


def ensure() -> str | None:
    """This learner's token, made now for a learner alone if they have none (None when the records cannot be
    written: progress then stays in the tab)."""
    token = st.session_state.get(_SESSION)
    if token:
        return token
    try:
        token = classroom.learner_alone()
    except ValueError:
        return None
    become(token)
    return token


def become(token: str) -> None:
    st.session_state.pop(_WHO, None)     # read again: joining a class changes the record
    st.session_state[_SESSION] = token
    st.query_params[ME] = token


def forget() -> None:
    """'Not you?': this browser forgets the learner (their answers stay on the server under their code): the
    session, the address and, on the run that follows, the cookie (the next person at this computer is greeted
    by nobody, in this tab or a new one)."""
    st.session_state.pop(_SESSION, None)
    st.session_state.pop(_WHO, None)
    st.session_state[_FORGOTTEN] = st.session_state[_CLEAR_COOKIE] = True
    if ME in st.query_params:
        del st.query_params[ME]


def badge() -> None:
    """In the sidebar: who is answering, and a way out on a shared computer."""
    who = current()
    if who is None:
        return
    with st.sidebar:
        if who.class_id is not None:
            st.caption(f"Answering as **{plain(who.name, 60)}** in class {plain(who.class_name, 60)}.")
        else:
            st.caption("Your answers are kept under the code in this page's address (`me=`).")
        if st.button("Not you? Forget me here", key="learner.forget", icon=":material/logout:"):
            forget()
            st.rerun()
