"""Small helpers every lab page shares (Streamlit side only; no maths here)."""
from __future__ import annotations

import functools
import inspect
import re
from contextlib import contextmanager
from typing import Callable, TypeVar

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.delta_generator import DeltaGenerator

from core.i18n import _
from core.labs import BOOK as BOOK_EDITION, CHAPTERS, PAGES, Page, citation

T = TypeVar("T")

BOOK = BOOK_EDITION + ", chapter 9, Recurrent Neural Networks"
BOOK_URL = CHAPTERS[9][1]


_MARKDOWN_SPECIAL = set("\\`*_{}[]()<>#+-.!|~$:=^&\"'")
MAX_SHOWN = 80


WORD_JOINER = "\u2060"   # invisible; breaks an autolink where it stands
# Where Markdown's autolinks start (GitHub-flavoured: http://, https://, mailto:, xmpp:, www. and name@host):
# only there does a joiner go, so ordinary text ("allowed: 1 to 10") stays as it is.
_AUTOLINK_TRIGGER = re.compile(r"(?<=https)(?=:)|(?<=http)(?=:)|(?<=mailto)(?=:)|(?<=xmpp)(?=:)|(?<=www)(?=\.)"
                               r"|(?<=[-.\w+])(?=@[-\w])", re.IGNORECASE)


def plain(text: object, limit: int = MAX_SHOWN) -> str:
    """Anything a learner typed, uploaded or put in a URL, or read from a stored file, made safe to show inside
    Markdown: cut to `limit` characters and every Markdown, HTML, LaTeX and Streamlit directive character
    escaped, so it shows as the text it is (never as a link, an image, a colour or a formula). Escapes do not stop
    Markdown's autolinks (https://..., www...., name@host, which are found in the text after escaping), so an
    invisible word joiner also stands where one would start: after http, https, mailto, xmpp and www, and before
    the @ of an e-mail address. Use it for every such value in
    st.markdown, st.caption, st.warning, st.error, st.info, st.success, st.subheader and st.toast."""
    text = str(text)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    text = _AUTOLINK_TRIGGER.sub(WORD_JOINER, text.replace("\r", " ").replace("\n", " "))
    return "".join("\\" + ch if ch in _MARKDOWN_SPECIAL else ch for ch in text)


def time_left(done: float, spent: float) -> str:
    """', about N s left' for a progress text, from the share done and the seconds spent; '' until a tenth is done
    (an estimate from the first moments would mislead)."""
    return _(", about {seconds:.0f} s left").format(seconds=spent * (1 - done) / done) if done > 0.1 else ""


def header(key: str) -> Page:
    """The top of a page: its title and icon from the registry, core.labs.PAGES (written nowhere else)."""
    entry = PAGES[key]
    st.title(f"{entry.icon} {_(entry.title)}")
    return entry


def controls_beside_view(controls: Callable[[], T],
                         below: Callable[[], None] | None = None) -> tuple[T, DeltaGenerator]:
    """The labs' layout: a narrow column of controls (controls() draws them and returns the settings) beside a
    wide view column. Returns the settings and the view column. below() draws under the controls."""
    left, view = st.columns([1, 3], gap="large")
    with left, st.container(key="lab-controls"):   # on a phone: a scrolling panel right above the view (app.py)
        st.subheader(_("Controls"))
        settings = controls()
        if below is not None:
            below()
    return settings, view


def lab_link(lab: Page | str, label: str, query: dict | None = None, icon: str | None = None) -> None:
    """A link to a page of the app (a Page, or a page path) with URL settings; plain text when the page runs
    without app.py's navigation (tests run pages on their own)."""
    from streamlit.errors import StreamlitAPIException
    path = lab.path if isinstance(lab, Page) else lab
    try:
        st.page_link(path, label=label, icon=icon or (lab.icon if isinstance(lab, Page) else None),
                     query_params={k: str(v) for k, v in (query or {}).items()} or None)
    except StreamlitAPIException:
        st.caption(label)


def deeper(lab_key: str, text: str, **controls) -> None:
    """A door into a lab, with its controls (by their declared names, core.labs) set to show the point
    ("text: the X lab")."""
    from core.labs import url_query
    entry = PAGES[lab_key]
    lab_link(entry, _("{text}: the {lab} lab").format(text=_(text), lab=_(entry.title)), url_query(lab_key, controls))


def show_source(*objects, title: str = "") -> None:
    """An expander with the real source of the core functions the page calls."""
    with st.expander(title or _("The code behind this figure")):
        for obj in objects:
            st.code(_source(obj), language="python", wrap_lines=True)   # a phone wraps long lines, never cuts them


@functools.lru_cache(maxsize=256)
def _source(obj) -> str:
    """inspect.getsource reads and parses the file: once per function per server, not on every rerun."""
    return inspect.getsource(obj)


@contextmanager
def learner_errors():
    """Show a core ValueError as a message on the page instead of a traceback."""
    try:
        yield
    except ValueError as exc:
        st.error(plain(exc, limit=600), icon=":material/error:")
        st.stop()


def cite(section: str) -> None:
    words, url = citation(section)
    st.caption(_("Follows {words} ([{site}]({url})). Explanations here are our own.").format(
        words=words, site=url.split("/")[2], url=url))


def busy(message: str, compute, *args):
    """compute(*args) under a spinner that says message in the page's language (Streamlit shows it only after half a
    second, so a cached answer does not flash it); without a page (a warm-up thread), just compute."""
    if get_script_run_ctx() is None:
        return compute(*args)
    with st.spinner(_(message)):
        return compute(*args)
