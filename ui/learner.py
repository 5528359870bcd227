"""Who is answering: a learner's token (core.classroom), kept in this session and in a cookie of this site, so a
reload, another lab or the next assignment link opened in the same browser find the learner's progress again.
There are no accounts: the token is the key, so it never travels in an address or a link (whoever was sent one
could answer as its owner). Another device is reached by typing the learner's resume code; "Not you?" forgets the
learner here.
"""
from __future__ import annotations

import streamlit as st

from core import classroom
from core.i18n import _
from core.labs import Url
from ui.common import plain

OLD_ADDRESS = Url.LEARNER          # an address from before: its learner code is dropped, never read
COOKIE = "rnnlab_me"
WRONG_CODES = 10                   # resume codes a session may get wrong before it must ask the teacher
_SESSION = "_rnnlab_learner"
_WHO = "_rnnlab_learner_record"     # the learner's record, read once per session (not on every rerun)
_COOKIE_SET = "_rnnlab_cookie_set"
_FORGOTTEN = "_rnnlab_forgotten"    # this session forgot its learner: the cookie it arrived with counts no more
_CLEAR_COOKIE = "_rnnlab_clear_cookie"   # the cookie is cleared on the next run (a rerun drops this run's frame)
_DROPPED = "_rnnlab_dropped_code"   # this session arrived at an address carrying a learner code, now dropped
_WRONG = "_rnnlab_wrong_codes"


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


def arrive() -> None:
    """Every page calls this first (url_state.page): the learner is this session's, else the one this browser's
    cookie names. A learner code in the address (an address copied before codes left addresses) is dropped
    unread, and the page says how to go on with one's own answers here."""
    if st.session_state.pop(_CLEAR_COOKIE, False):
        remember(None)
    known = st.session_state.get(_SESSION)
    if known is None and (cookie := _cookie_learner()) is not None:
        st.session_state[_SESSION] = st.session_state[_COOKIE_SET] = known = cookie
    if OLD_ADDRESS in st.query_params:
        del st.query_params[OLD_ADDRESS]
        st.session_state[_DROPPED] = True
    if known and st.session_state.get(_COOKIE_SET) != known:
        remember(known)
    if st.session_state.get(_DROPPED):
        st.info("This address carried a learner code. Addresses no longer carry one: whoever is sent an address "
                "could answer as its owner. It was ignored. " + (
                    "Your answers here count for you, as before." if known else
                    "To go on with your own answers on this device, type your resume code in the sidebar "
                    "(‘Go on from another device’)."), icon=":material/shield_person:")


def remember(token: str | None) -> None:
    """Set (or, with None, clear) this site's cookie with the learner's token."""
    if token is not None and not classroom.is_token(token):
        return
    write_cookie(COOKIE, token)
    st.session_state[_COOKIE_SET] = token


def write_cookie(name: str, token: str | None) -> None:
    """Set (None: clear) a cookie of this site to a token (letters, digits, - and _ only: checked by the caller),
    from a tiny script in an invisible frame (Streamlit can read cookies but not write them)."""
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
    st.session_state.pop(_DROPPED, None)
    st.session_state[_SESSION] = token


def forget() -> None:
    """'Not you?': this browser forgets the learner (their answers stay on the server under their code): the
    session and, on the run that follows, the cookie (the next person at this computer is greeted by nobody, in
    this tab or a new one)."""
    st.session_state.pop(_SESSION, None)
    st.session_state.pop(_WHO, None)
    st.session_state[_FORGOTTEN] = st.session_state[_CLEAR_COOKIE] = True


def _resume_code(who: classroom.Learner) -> str | None:
    """The learner's resume code as shown (given now to a learner from before codes), None when the records
    cannot be written."""
    if not who.resume:
        try:
            classroom.resume_code(who.token)
        except ValueError:
            return None
        st.session_state.pop(_WHO, None)
        who = current() or who
    return classroom.resume.shown(who.resume) if who.resume else None


def _go_on(code: str) -> None:
    """The resume form's Go on: become the learner whose code this is (typed by the learner: never a link)."""
    wrong = st.session_state.get(_WRONG, 0)
    if wrong >= WRONG_CODES:
        st.error(_("Too many codes that fit no one: ask your teacher for yours."), icon=":material/error:")
        return
    try:
        token = classroom.by_resume(code)
    except ValueError as exc:
        st.error(plain(exc, 300), icon=":material/error:")
        return
    if token is None:
        st.session_state[_WRONG] = wrong + 1
        st.error(_("No learner has that resume code: check it (8 letters and digits, as your sidebar showed it on the "
                   "other device), or ask your teacher."), icon=":material/error:")
        return
    st.session_state.pop(_FORGOTTEN, None)
    become(token)      # the cookie follows on the next run (arrive): this run's frame goes with the rerun
    st.rerun()


def badge() -> None:
    """In the sidebar: who is answering with their resume code, a way in from another device, and a way out on a
    shared computer."""
    who = current()
    with st.sidebar:
        if who is not None:
            if who.class_id is not None:
                st.caption(_("Answering as **{name}** in class {group}.").format(name=plain(who.name, 60),
                                                                                  group=plain(who.class_name, 60)))
            else:
                st.caption(_("Your answers are kept on this server, found again by this browser."))
            if code := _resume_code(who):
                st.caption(_("Your resume code: **{code}**. Type it on another device to go on with your answers "
                             "there; keep it to yourself.").format(code=code))
        with st.expander(_("Go on from another device"), icon=":material/devices:"):
            with st.form("learner.resume", border=False):
                code = st.text_input(_("Your resume code"), max_chars=12, placeholder="ABCD-EFGH", key="learner.code")
                if st.form_submit_button(_("Go on as that learner"), icon=":material/login:"):
                    _go_on(code)
        if who is not None and st.button(_("Not you? Forget me here"), key="learner.forget",
                                         icon=":material/logout:"):
            forget()
            st.rerun()
