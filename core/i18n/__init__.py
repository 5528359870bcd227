"""Languages (issue 66): English, the language every string is written in, and Chinese (zh), through gettext
catalogs that Babel writes and reads: core/i18n/locale/zh/LC_MESSAGES/rnnlab.po, extracted from the code with pybabel
(README, "Languages").

A string a learner reads is marked where it is written: _("Forecasting"). A sentence with numbers is one template
with named placeholders, _("climbs to {err:.3f}").format(err=e), translated whole, never English pieces glued
together; a count that changes the words goes through ngettext. N_("...") marks a string kept in data (a control's
label, a page's title) for the catalog; the code that shows it translates it then, with _(text).

The language in force is a context variable: the page's script sets it from the address (lang=zh), a notebook from
its settings, the command line from --lang; English by default. A catalog is read once per process. Numbers keep
one format in both languages: Chinese (zh_CN) writes digits, the decimal point and the thousands separator as
English does (tests/test_i18n.py checks this against Babel's locale data).
"""
from __future__ import annotations

import functools
import gettext
import io
import re
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Iterator

LANGS = {"en": "English", "zh": "中文"}   # code -> the language's own name (the switch shows these)
DEFAULT = "en"
DOMAIN = "rnnlab"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
BABEL_LOCALE = {"en": "en", "zh": "zh_Hans_CN"}

_LANG: ContextVar[str] = ContextVar("rnnlab_lang", default=DEFAULT)


def check_lang(lang) -> str:
    """The language's code, or ValueError naming the ones there are."""
    if lang not in LANGS:
        raise ValueError(f"No language {lang!r}: choose one of {', '.join(LANGS)}.")
    return lang


def current() -> str:
    """The language in force here (this thread's, or the block's that `speaking` opened)."""
    return _LANG.get()


def set_language(lang: str) -> None:
    """Use this language from here on in this thread (a page's script sets it at the top of every run)."""
    _LANG.set(check_lang(lang))


@contextmanager
def speaking(lang: str) -> Iterator[None]:
    """Within the block, strings come in this language; the one before comes back after it."""
    token = _LANG.set(check_lang(lang))
    try:
        yield
    finally:
        _LANG.reset(token)


def catalog_path(lang: str) -> Path:
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


@functools.cache
def translations(lang: str) -> gettext.NullTranslations:
    """The language's catalog, read by Babel from its .po file and compiled in memory (fuzzy entries left out, so
    an entry marked for review shows the English until it is checked); English: the strings as written."""
    if check_lang(lang) == DEFAULT:
        return gettext.NullTranslations()
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po
    with open(catalog_path(lang), "rb") as f:
        catalog = read_po(f, locale=BABEL_LOCALE[lang], domain=DOMAIN)
    compiled = io.BytesIO()
    write_mo(compiled, catalog, use_fuzzy=False)
    compiled.seek(0)
    return gettext.GNUTranslations(compiled)


def _(message: str) -> str:
    """The message in the language in force (the message itself where the catalog lacks it)."""
    return translations(current()).gettext(message) if message else message


def ngettext(singular: str, plural: str, n: int) -> str:
    """The form of the message for the count n, in the language in force (its catalog's plural rule)."""
    return translations(current()).ngettext(singular, plural, n)


def N_(message: str) -> str:
    """Marks a string kept in data for the catalog; it is translated where it is shown, with _()."""
    return message


def is_chinese() -> bool:
    return current() == "zh"


SENTENCE_GAP = {"en": " ", "zh": ""}    # Chinese writes sentences one after another, with no space between
LIST_GAP = {"en": ", ", "zh": "，"}


def sentences(*parts) -> str:
    """Sentences (strings or claims; empty ones and None left out) one after another, as the language writes them."""
    return SENTENCE_GAP[current()].join(str(p) for p in parts if p)


def listing(parts) -> str:
    """Items of a list in a sentence: 'a, b, c' in English, 'a，b，c' in Chinese."""
    return LIST_GAP[current()].join(str(p) for p in parts)


@functools.cache
def _template_pattern(template: str) -> re.Pattern:
    parts = re.split(r"\{(\w+)\}", template)
    return re.compile("^" + "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>.+?)" for i, p in enumerate(parts)) + "$",
                      re.S)


def reword(text: str, templates, part=lambda name, value: value) -> str | None:
    """A text written in English from one of `templates` (filled in with str.format's plain {name} fields), said
    again in the language in force: its template's translation, each field's value passed through part(name, value).
    None when no template wrote it."""
    for template in templates:
        found = _template_pattern(template).match(text or "")
        if found:
            return _(template).format(**{k: part(k, v) for k, v in found.groupdict().items()})
    return None
