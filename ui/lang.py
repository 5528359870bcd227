"""The page's language (issue 66): lang=zh in the address, kept by every page as its other settings are; a switch
in the sidebar (English / 中文), remembered for the session and by a cookie; English by default. The language is
set for core (core.i18n) at the top of every run of a page, and of every rerun of a lab's fragment.

Pages whose strings are all in the catalog are listed in core.labs.TRANSLATED; another page, asked for in
Chinese, says in Chinese that it is shown in English for now."""
from __future__ import annotations

import streamlit as st

from core.i18n import DEFAULT, LANGS, _, current, listing, set_language
from core.labs import PAGES, TRANSLATED

PARAM = "lang"                      # the address's key
COOKIE = "rnnlab_lang"
_CHOSEN = "_rnnlab_lang"            # this session's language
_WRITTEN = "_rnnlab_lang_cookie"    # the language this session last wrote into the cookie
HTML_LANG = {"en": "en", "zh": "zh-Hans"}


def arrive() -> str:
    """The language of this run, from (in this order) the address, this session's choice, the cookie, the default;
    set for core, and written back into the address where it is not English, so a copied link keeps it."""
    raw = st.query_params.get(PARAM)
    cookie = (st.context.cookies or {}).get(COOKIE)
    lang = (raw if raw in LANGS else st.session_state.get(_CHOSEN)
            or (cookie if cookie in LANGS else DEFAULT))
    st.session_state[_CHOSEN] = lang
    set_language(lang)
    if lang != DEFAULT and raw != lang:
        st.query_params[PARAM] = lang
    elif lang == DEFAULT and raw is not None:
        del st.query_params[PARAM]
    return lang


def apply() -> None:
    """Set this session's language for core again (a fragment's own rerun does not pass through arrive)."""
    set_language(st.session_state.get(_CHOSEN, DEFAULT))


def _switched() -> None:
    lang = st.session_state["lang.switch"] or DEFAULT
    st.session_state[_CHOSEN] = lang
    st.query_params[PARAM] = lang


def switch() -> None:
    """The sidebar's switch between the languages, each named in its own words; the cookie follows the choice, and
    the page's <html lang> says which language it is in (for screen readers and the browser's fonts)."""
    from ui.learner import write_cookie
    lang = current()
    with st.sidebar:
        st.session_state["lang.switch"] = lang
        st.segmented_control(_("Language"), list(LANGS), format_func=LANGS.get, key="lang.switch",
                             on_change=_switched, label_visibility="collapsed")
        if st.session_state.get(_WRITTEN, DEFAULT) != lang and (st.context.cookies or {}).get(COOKIE) != lang:
            write_cookie(COOKIE, lang)
            st.session_state[_WRITTEN] = lang
    if lang != DEFAULT:
        st.iframe(f"<script>window.parent.document.documentElement.lang = '{HTML_LANG[lang]}';</script>", height=1)


def untranslated(page: str) -> None:
    """On a page not yet in the catalog, asked for in another language than English: say so, in that language."""
    if current() != DEFAULT and page not in TRANSLATED:
        st.info(_("This page is not translated yet: it is shown in English. Translated so far: {pages}.").format(
            pages=listing(_(PAGES[k].title) for k in TRANSLATED)), icon=":material/translate:")


def streamlit_words() -> None:
    """Streamlit's own words in its file uploader ("Upload", "5MB per file • TXT") have no setting
    (streamlit/streamlit#13500): on a page in another language than English, a style puts the language's words in
    their place. The limit is the server's own (server.maxUploadSize); the file types, each uploader's."""
    if current() == DEFAULT:
        return
    limit = st.get_option("server.maxUploadSize")
    rules = [_style("[data-testid='stFileUploaderDropzone'] button [data-testid='stMarkdownContainer'] p", _("Upload"),
                    "0.9rem")]
    for key, kind in (("tokens_upload", "TXT"), ("training_upload", "TXT"), ("exercises.restore", "JSON")):
        rules.append(_style(f".st-key-{key.replace('.', '-')} [data-testid='stFileUploaderDropzoneInstructions'] span",
                            _("at most {n} MB a file · {kind}").format(n=limit, kind=kind), "0.75rem"))
    hide = "[data-testid='stElementContainer']:has(#rnnlab-words) { display: none; }"   # its own box takes no room
    st.markdown(f"<style id='rnnlab-words'>{hide}{''.join(rules)}</style>", unsafe_allow_html=True)


def _style(selector: str, words: str, size: str) -> str:
    """A rule that hides an element's own text and shows `words` (our catalog's, quoted for CSS) in its place."""
    quoted = words.replace("\\", "\\\\").replace("'", "\\'")
    return f"{selector} {{ font-size: 0; }} {selector}::after {{ content: '{quoted}'; font-size: {size}; }}"
