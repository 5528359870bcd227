"""A learner opens a teacher's sweep link (?sweep=lr:0.1,0.3,1): this browser's learner is handed the next value in
turn among their class (kept, so a reload or another device gives the same one), the control is set to it and
fixed (not drawn, as a hidden control), and a line says which value and why. core.classroom.sweep parses the link."""
from __future__ import annotations

import streamlit as st

from core import classroom
from core.i18n import _
from core.labs import Url
from core.settings import Setting
from ui import learner
from ui.common import plain


_FIXED = "_rnnlab_sweep_fixed"   # (the address's sweep text, the URL key of the control it fixes), once checked


def fixed_key() -> str | None:
    """The URL key of the control the address's sweep fixes, once take_part has checked it on a page that takes
    sweeps (elsewhere a sweep in the address fixes nothing)."""
    raw = st.query_params.get(Url.SWEEP)
    kept = st.session_state.get(_FIXED)
    return kept[1] if raw and kept and kept[0] == raw else None


def take_part(settings: dict[str, Setting]) -> str | None:
    """Hand this learner their value of the address's sweep and put it in the address; returns it (None: no
    sweep, or a link this lab cannot use, said in a warning)."""
    raw = st.query_params.get(Url.SWEEP)
    if not raw:
        return None
    try:
        sweep = classroom.sweep.parse(raw, settings)
    except ValueError as exc:
        st.warning(_("This link's sweep cannot be used: {why}").format(why=plain(exc, 300)), icon=":material/warning:")
        return None
    listed = ", ".join(sweep.values)
    label = _(sweep.setting.label)
    what = plain(label[:1].lower() + label[1:], 60)
    who = learner.current()
    if who is None or who.class_id is None:
        value = sweep.values[0]
        st.info(_("This link hands out the values {values} of the {what} in turn to the learners of a class. You are not "
                  "in a class here, so you get the first, {value}: join with your teacher's link first to get your "
                  "own.").format(values=plain(listed, 200), what=what, value=plain(value)), icon=":material/tune:")
    else:
        try:
            value, place = classroom.hand_out(who.token, sweep.text(), list(sweep.values))
        except ValueError as exc:
            st.warning(plain(exc, 300), icon=":material/warning:")
            return None
        st.info(_("Your teacher hands out values of the {what} in turn ({values}): you were learner {place} to open "
                  "this link, so yours is **{value}**. Train with it, and the class's chart puts your run beside the "
                  "others'.").format(what=what, values=plain(listed, 200), place=place, value=plain(value)),
                icon=":material/tune:")
    if st.query_params.get(sweep.setting.key) != value:
        st.query_params[sweep.setting.key] = value
    st.session_state[_FIXED] = (raw, sweep.setting.key)
    return value
