"""Lab controls that live in the URL (st.query_params) as well as in the widgets.

Each control starts from, in this order: the URL (when it carries a valid value), the value the learner
last chose on this page in this session, the default. A bad URL value shows a warning and falls back.
After the widget is drawn its value is written back to the URL, so a copied address reproduces the view.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import streamlit as st

from core.settings import Setting
from ui.common import plain

_KEEP = "_rnnlab_kept_params"


def page(namespace: str) -> None:
    """Call once at the top of a page: widget keys become 'namespace.name', so pages never share state."""
    _ensure_navigation()
    st.session_state["_rnnlab_ns"] = namespace


def _ensure_navigation() -> None:
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


def _kept() -> dict:
    return st.session_state.setdefault(_KEEP, {})


def _ns(name: str) -> str:
    return f"{st.session_state.get('_rnnlab_ns', 'app')}.{name}"


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _init(name: str, default: Any, parse: Callable[[str], Any]) -> str:
    """Make sure the widget key holds a starting value; return the key."""
    key = _ns(name)
    st.session_state.setdefault("_rnnlab_written", {})
    raw = st.query_params.get(name)
    kept = _kept()
    written = st.session_state.setdefault("_rnnlab_written", {})
    if key in st.session_state and (raw is None or raw == written.get(key)):
        return key  # the URL holds what this page wrote last: the widget is the source of truth
    value = kept.get(key, default)
    if raw is not None:
        try:
            value = parse(raw)
        except ValueError as exc:
            st.warning(f"Ignored the URL value {plain(name, 40)}={plain(repr(raw), 40)}: {plain(exc, 200)} "
                       f"Using {plain(_fmt(value))} instead.", icon=":material/warning:")
    st.session_state[key] = value
    return key


def hidden_names() -> set[str]:
    """Controls a teacher's link fixes (?hide=tau,k): kept at their URL value and not drawn."""
    raw = st.query_params.get("hide") or ""
    return {n.strip() for n in raw.split(",") if n.strip()}


def _draw(name: str) -> bool:
    return name not in hidden_names()


def _done(name: str, key: str) -> Any:
    value = st.session_state[key]
    if value is None:  # a control the learner cleared (e.g. a deselected segmented control)
        return None
    _kept()[key] = value
    text = _fmt(value)
    st.session_state["_rnnlab_written"][key] = text
    if st.query_params.get(name) != text:   # each write sends the browser a message: only on a change
        st.query_params[name] = text
    return value


def _parser(name: str, kind: type, lo: float | None = None, hi: float | None = None) -> Callable[[str], Any]:
    """The URL text of a number, flag or text control parsed and checked as a declared setting is."""
    return Setting(name, kind, None, lo, hi).parse


def _choice_parser(options: Sequence[Any]) -> Callable[[str], Any]:
    by_text = {_fmt(o): o for o in options}

    def parse(raw: str) -> Any:
        if raw not in by_text:
            raise ValueError(f"not one of {', '.join(by_text)}.")
        return by_text[raw]
    return parse


def int_slider(label: str, name: str, default: int, lo: int, hi: int, step: int = 1, **kw) -> int:
    key = _init(name, default, _parser(name, int, lo, hi))
    if not lo <= st.session_state[key] <= hi:  # bounds that depend on other controls moved
        st.session_state[key] = min(max(st.session_state[key], lo), hi)
    if _draw(name):
        st.slider(label, lo, hi, step=step, key=key, **kw)
    return int(_done(name, key))


def float_slider(label: str, name: str, default: float, lo: float, hi: float, step: float, **kw) -> float:
    key = _init(name, default, _parser(name, float, lo, hi))
    st.session_state[key] = float(min(max(st.session_state[key], lo), hi))
    if _draw(name):
        st.slider(label, float(lo), float(hi), step=float(step), key=key, **kw)
    return float(_done(name, key))


def int_input(label: str, name: str, default: int, lo: int, hi: int, step: int = 1, **kw) -> int:
    key = _init(name, default, _parser(name, int, lo, hi))
    st.session_state[key] = int(min(max(st.session_state[key], lo), hi))
    if _draw(name):
        st.number_input(label, min_value=lo, max_value=hi, step=step, key=key, **kw)
    return int(_done(name, key))


def select_slider(label: str, name: str, default: Any, options: Sequence[Any], **kw) -> Any:
    key = _init(name, default, _choice_parser(options))
    if st.session_state[key] not in options:
        st.session_state[key] = default
    if _draw(name):
        st.select_slider(label, options=list(options), key=key, **kw)
    return _done(name, key)


def choice(label: str, name: str, default: Any, options: Sequence[Any], widget: str = "selectbox", **kw) -> Any:
    key = _init(name, default, _choice_parser(options))
    if st.session_state[key] not in options:
        st.session_state[key] = default
    if _draw(name):
        getattr(st, widget)(label, options=list(options), key=key, **kw)
    return _done(name, key)


def toggle(label: str, name: str, default: bool, **kw) -> bool:
    key = _init(name, default, _parser(name, bool))
    if _draw(name):
        st.toggle(label, key=key, **kw)
    return bool(_done(name, key))


def text(label: str, name: str, default: str, max_chars: int, **kw) -> str:
    key = _init(name, default, _parser(name, str, 0, max_chars))
    if _draw(name):
        st.text_input(label, max_chars=max_chars, key=key, **kw)
    return str(_done(name, key))


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
        st.warning(f"Ignored a URL setting: {plain(problem, 300)}", icon=":material/warning:")
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
