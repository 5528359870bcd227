"""Lab controls that live in the URL (st.query_params) as well as in the widgets.

Every control is declared once (core.labs: name, type, default, range or choices, label, help, widget,
URL key) and drawn here with draw(). Each starts from, in this order: the URL (when it carries a valid value,
read with the declaration's own parser), the value the learner last chose on this page in this session, the
default. A bad URL value shows a warning and falls back. After the widget is drawn its value is written back to
the URL with the one encoder (core.settings.as_text), so a copied address reproduces the view.
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Callable, Sequence

import streamlit as st

from core.i18n import _
from core.labs import Url
from core.settings import Setting, as_text
from ui.common import plain
from ui.session import ensure_navigation

_KEEP = "_rnnlab_kept_params"
_WRITTEN_KEY = "_rnnlab_written"   # widget key -> the URL text this page wrote for it last


def page(namespace: str) -> None:
    """Call once at the top of a page, with the page's key in the registry (core.labs.PAGES): widget keys become
    'namespace.name', so pages never share state; the page's language is set (ui.lang); the learner is found again
    from this browser (ui.learner), never from the address."""
    from ui import learner
    ensure_navigation()
    from ui import lang
    st.session_state["_rnnlab_ns"] = namespace
    lang.arrive()
    learner.arrive()
    learner.badge()
    lang.untranslated(namespace)


def _kept() -> dict:
    return st.session_state.setdefault(_KEEP, {})


def _ns(name: str) -> str:
    return f"{st.session_state.get('_rnnlab_ns', 'app')}.{name}"


_SENT = "_rnnlab_sent"   # (address as a query dict, when): the addresses this session's writes gave the browser
ECHO_SECONDS = 10.0     # a rerun sent before the browser took in the page's last writes arrives within this


def _echo() -> bool:
    """Whether this rerun's address is one the browser showed a moment ago, before this session's latest
    writes reached it. Two quick moves of a slider send the second before the browser has put the first one's
    value in its address bar, so the rerun carries the older address; read as a new link, it set the slider
    back to the older value. A link the learner follows carries an address this session did not just write."""
    now, query = time.monotonic(), st.query_params.to_dict()
    return any(q == query and now - at < ECHO_SECONDS for q, at in st.session_state.get(_SENT, ()))


def _note_sent(before: dict) -> None:
    """Keep the address before and after a write (the browser may send either back) for _echo."""
    now, sent = time.monotonic(), st.session_state.setdefault(_SENT, [])
    sent[:] = [(q, at) for q, at in sent if now - at < ECHO_SECONDS][-8:] + [(before, now),
                                                                            (st.query_params.to_dict(), now)]


def _init(s: Setting) -> str:
    """Make sure the widget key holds a starting value; return the key."""
    key = _ns(s.key)
    raw = st.query_params.get(s.key)
    kept = _kept()
    written = st.session_state.setdefault(_WRITTEN_KEY, {})
    if key in st.session_state and (raw is None or raw == written.get(key) or _echo()):
        return key  # the URL holds what this page wrote (lately): the widget is the source of truth
    value = kept.get(key, s.default)
    if raw is not None:
        try:
            value = s.parse(raw)
        except ValueError as exc:
            st.warning(_("Ignored the URL value {key}={raw}: {why} Using {value} instead.").format(
                key=plain(s.key, 40), raw=plain(repr(raw), 40), why=plain(exc, 200), value=plain(as_text(value))),
                icon=":material/warning:")
    st.session_state[key] = value
    return key


def current(s: Setting) -> Any:
    """The control's value before it is drawn in this run: the widget's, else the URL's text (None if neither)."""
    return st.session_state.get(_ns(s.key), st.query_params.get(s.key))


def move_to(s: Setting, value: Any) -> None:
    """Set a control that is not drawn yet in this run, widget and URL, as if the user had chosen value."""
    st.session_state[_ns(s.key)] = value
    st.query_params[s.key] = as_text(value)


def open_here(query: dict[str, str], keys) -> None:
    """A button's on_click: open the page the learner is on at another address, in the same session (Streamlit's
    link to the page one is already on changes nothing). The address becomes query and the controls with these URL
    keys forget their values, so that the run the click starts takes the address's."""
    st.query_params.from_dict(query)
    for url_key in keys:
        key = _ns(url_key)
        st.session_state.pop(key, None)
        _kept().pop(key, None)
        st.session_state.get(_WRITTEN_KEY, {}).pop(key, None)


def hidden_names() -> set[str]:
    """Controls a teacher's link fixes (?hide=tau,k, and a sweep's control): kept at their URL value, not drawn."""
    from ui.sweep import fixed_key
    raw = st.query_params.get(Url.HIDE) or ""
    return {n.strip() for n in raw.split(",") if n.strip()} | ({fixed_key()} - {None})


def _done(s: Setting, key: str) -> Any:
    value = st.session_state[key]
    if value is None:  # a control the learner cleared (e.g. a deselected segmented control)
        return None
    _kept()[key] = value
    text = as_text(value)
    st.session_state[_WRITTEN_KEY][key] = text
    if st.query_params.get(s.key) != text:   # each write sends the browser a message: only on a change
        before = st.query_params.to_dict()
        st.query_params[s.key] = text
        _note_sent(before)
    return value


def _in_range(s: Setting, value: Any) -> Any:
    """The value kept within what the control offers now (its range or choices may depend on other controls)."""
    if s.choices:
        return value if value in s.choices else (s.default if s.default in s.choices else s.choices[0])
    if s.kind in (int, float) and value is not None:
        lo = s.lo if s.lo is not None else value
        hi = s.hi if s.hi is not None else value
        return s.kind(min(max(value, lo), hi))
    return value


def _widget(s: Setting) -> str:
    if s.widget:
        return s.widget
    if s.choices:
        return "radio"
    return {bool: "toggle", str: "text"}.get(s.kind, "slider")


def _number(s: Setting, x):
    return None if x is None else s.kind(x)


WIDGETS: dict[str, Callable] = {
    "slider": lambda s, key, kw: st.slider(s.label, _number(s, s.lo), _number(s, s.hi),
                                           step=_number(s, s.step or 1), key=key, **kw),
    "input": lambda s, key, kw: st.number_input(s.label, min_value=_number(s, s.lo), max_value=_number(s, s.hi),
                                                step=_number(s, s.step or 1), key=key, **kw),
    "select_slider": lambda s, key, kw: st.select_slider(s.label, options=list(s.choices), key=key, **kw),
    "radio": lambda s, key, kw: st.radio(s.label, options=list(s.choices), key=key, **kw),
    "select": lambda s, key, kw: st.selectbox(s.label, options=list(s.choices), key=key, **kw),
    "segmented": lambda s, key, kw: st.segmented_control(s.label, options=list(s.choices), key=key, **kw),
    "toggle": lambda s, key, kw: st.toggle(s.label, key=key, **kw),
    "text": lambda s, key, kw: st.text_input(s.label, max_chars=int(s.hi) if s.hi else None, key=key, **kw),
}


def draw(s: Setting, *, lo: float | None = None, hi: float | None = None, choices: Sequence | None = None,
         default: Any = None, **widget_options) -> Any:
    """Draw a declared control (core.labs), bound to the URL under its key, and return its value.

    lo, hi, choices and default narrow the declaration where they depend on something only the page knows
    (another control, the session's models); widget_options go to the Streamlit widget (format_func, disabled,
    horizontal, label_visibility ...). A control named in the URL's hide= list is not drawn: it keeps the
    link's value."""
    change = {k: v for k, v in dict(lo=lo, hi=hi, default=default).items() if v is not None}
    if choices is not None:
        change["choices"] = tuple(choices)
    s = replace(s, **change) if change else s
    key = _init(s)
    st.session_state[key] = _in_range(s, st.session_state[key])
    if s.key not in hidden_names():
        widget_options.setdefault("help", _(s.help) if s.help else None)
        s = replace(s, label=_(s.label))
        if s.words and "format_func" not in widget_options:
            widget_options["format_func"] = lambda choice, s=s: _(s.word(choice))
        WIDGETS[_widget(s)](s, key, widget_options)
    value = _done(s, key)
    return value if value is None or s.kind not in (int, float, bool) or s.choices else s.kind(value)


_FORMS = "_rnnlab_form_urls"


def seed_form(prefix: str, names: Sequence[str], parse: Callable[[dict[str, str]], tuple[dict, list[str]]]) -> None:
    """Fill a form's widget keys ('prefix.name') from the URL: once when the form is first drawn, and again
    whenever the URL's values for names change (a pasted link). parse turns the URL's NAME -> text into a value
    for every name plus messages about the ones it could not use. In between, the widgets keep what the learner
    typed, submitted or not."""
    url = {n: st.query_params[n] for n in names if n in st.query_params}
    seen = st.session_state.setdefault(_FORMS, {})
    if seen.get(prefix) == url and all(f"{prefix}.{n}" in st.session_state for n in names):
        return
    values, problems = parse(url)
    for problem in problems:
        st.warning(_("Ignored a URL setting: {why}").format(why=plain(problem, 300)), icon=":material/warning:")
    for n in names:
        st.session_state[f"{prefix}.{n}"] = values[n]
    seen[prefix] = url


def write_form(prefix: str, names: Sequence[str], values: dict[str, str]) -> None:
    """Put a submitted form's settings in the URL (values: only those that differ from the defaults)."""
    for n in names:
        if n in values:
            st.query_params[n] = values[n]
        elif n in st.query_params:
            del st.query_params[n]
    st.session_state.setdefault(_FORMS, {})[prefix] = {n: values[n] for n in names if n in values}


def clear_form(names: Sequence[str]) -> None:
    """Drop a form's settings from the URL (e.g. when the learner picks another preset)."""
    for n in names:
        if n in st.query_params:
            del st.query_params[n]
