"""The message catalogs (issue 66): `python -m core catalog` extracts every marked string (_, N_, ngettext) from
core/, ui/, pages/ and app.py with Babel, writes the template core/i18n/locale/rnnlab.pot, and merges it into each
language's catalog (core/i18n/locale/LANG/LC_MESSAGES/rnnlab.po): a translation already there is kept, a new string
comes in empty, a string no longer in the code is dropped. It then lists what a catalog lacks; the tests
(tests/test_i18n.py) fail on the same list. `--check` only lists, writing nothing.

A translation must keep its message's placeholders ({name} and {name:.3f} alike, by name) and its Markdown
emphasis (the same number of ** pairs, each one that Markdown closes): a missing or extra one fails the check, as a
missing translation does."""
from __future__ import annotations

import argparse
import io
import re
import string
import sys

from core.i18n import BABEL_LOCALE, DEFAULT, DOMAIN, LANGS, LOCALE_DIR, catalog_path

ROOT = LOCALE_DIR.parents[2]
SOURCES = ("core", "ui", "pages", "app.py")
KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2)}
TEMPLATE = LOCALE_DIR / f"{DOMAIN}.pot"
# '**标题。**正文' shows its asterisks (and '*问题？*正文' its one): CommonMark closes an emphasis only where it is not
# punctuation followed by a letter; the same marks there open one, so only a closing mark is flagged
AFTER_MARK = r"[。，：；！？、）」]{}[\u3400-\u9fff]"


def unclosed_emphasis(text: str) -> bool:
    """Whether a bold (**) or italic (*) run closes right after a full-width mark and before a character."""
    italic = text.replace("**", "\0")
    return any(t[:m.start()].count(mark) % 2 for t, mark in ((text, "**"), (italic, "*"))
               for m in re.finditer(AFTER_MARK.format(re.escape(mark)), t))


def extract():
    """Every marked message in the sources, as a Babel catalog (with where each was found)."""
    from babel.messages.catalog import Catalog
    from babel.messages.extract import extract_from_file
    catalog = Catalog(project="RNN Lab", domain=DOMAIN, charset="utf-8")
    files = []
    for source in SOURCES:
        path = ROOT / source
        files += [path] if path.is_file() else sorted(path.rglob("*.py"))
    for path in files:
        rel = path.relative_to(ROOT).as_posix()
        for line, message, comments, context in extract_from_file("python", path, keywords=KEYWORDS,
                                                                   comment_tags=("Translators:",)):
            catalog.add(message, None, [(rel, line)], auto_comments=comments, context=context)
    for message in exercise_texts():
        catalog.add(message, None, [("core/exercises/bank.py", 0)])
    return catalog


def exercise_texts() -> list[str]:
    """What a learner reads of every exercise, from the bank itself (data, not code): a new exercise's question,
    hint, options, other setting and book citation (each edition's numbering) come into the catalog without
    marking."""
    from core.exercises.bank import BANK
    return [t for ex in BANK.values() for t in (ex.question, ex.hint, *ex.options, ex.other_label, ex.book) if t]


def read(lang: str):
    from babel.messages.pofile import read_po
    path = catalog_path(lang)
    if not path.is_file():
        from babel.messages.catalog import Catalog
        return Catalog(locale=BABEL_LOCALE[lang], domain=DOMAIN)
    with open(path, "rb") as f:
        return read_po(f, locale=BABEL_LOCALE[lang], domain=DOMAIN)


def fields(text: str) -> list[str]:
    """The names of a message's placeholders, sorted ('{k}-step' -> ['k'])."""
    try:
        return sorted(name for _, name, _, _ in string.Formatter().parse(text) if name is not None)
    except ValueError:
        return ["<unbalanced braces>"]


def problems(lang: str, template=None) -> list[str]:
    """What the language's catalog lacks against the code's messages: a missing, empty or fuzzy translation, a
    placeholder or a bold pair the translation drops or adds."""
    template = template or extract()
    catalog = read(lang)
    out = []
    for message in template:
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        found = catalog.get(message.id)
        strings = () if found is None else found.string if isinstance(found.string, tuple) else (found.string,)
        where = ", ".join(f"{f}:{n}" for f, n in message.locations[:2])
        if found is None or not all(strings) or found.fuzzy:
            out.append(f"{lang}: no translation for {ids[0]!r} ({where})")
            continue
        for text in strings:
            if fields(text) not in (fields(ids[0]), fields(ids[-1])):   # a plural's one form may be either's
                out.append(f"{lang}: {ids[0]!r} has placeholders {fields(ids[0])}, its translation {fields(text)}")
            if text.count("**") != ids[0].count("**"):
                out.append(f"{lang}: {ids[0]!r} and its translation differ in bold (**) marks")
            if unclosed_emphasis(text):
                out.append(f"{lang}: the translation of {ids[0]!r} ends a bold or italic run after a full-width "
                           "mark, right before a character: Markdown does not close it (put the mark after the *)")
    return out


def merge(lang: str, template) -> tuple[int, int]:
    """Write the language's catalog: the template's messages with the translations it already had. Returns
    (messages, translated)."""
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import write_po
    old = read(lang)
    new = Catalog(locale=BABEL_LOCALE[lang], domain=DOMAIN, project="RNN Lab", charset="utf-8", fuzzy=False,
                  header_comment=f"# RNN Lab's messages in {LANGS[lang]}: the project's own words (README, Languages).",
                  copyright_holder="the RNN Lab authors", last_translator="the RNN Lab authors",
                  language_team=f"RNN Lab {LANGS[lang]}", version=_version(), msgid_bugs_address="RNN Lab issues")
    done = 0
    for message in template:
        if not message.id:
            continue
        had = old.get(message.id)
        new.add(message.id, had.string if had else None, message.locations, auto_comments=message.auto_comments)
        done += bool(had and had.string and all(had.string if isinstance(had.string, tuple) else (had.string,)))
    path = catalog_path(lang)
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    write_po(buf, new, width=120, omit_header=False, sort_output=False, include_lineno=False)
    path.write_bytes(_stable(buf.getvalue()))
    return len([m for m in template if m.id]), done


def _version() -> str:
    from core import __version__
    return __version__


def _stable(po: bytes) -> bytes:
    """The catalog without the header lines that change on every write (dates), so a rerun changes nothing."""
    return re.sub(rb'"(POT-Creation-Date|PO-Revision-Date): [^"]*\\n"\n', b"", po)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m core catalog", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only list what the catalogs lack")
    args = parser.parse_args(argv)
    template = extract()
    if not args.check:
        from babel.messages.pofile import write_po
        buf = io.BytesIO()
        write_po(buf, template, width=120, include_lineno=False)
        TEMPLATE.parent.mkdir(parents=True, exist_ok=True)
        TEMPLATE.write_bytes(_stable(buf.getvalue()))
        for lang in LANGS:
            if lang != DEFAULT:
                total, done = merge(lang, template)
                print(f"{catalog_path(lang).relative_to(ROOT)}: {done} of {total} messages translated")
    found = [p for lang in LANGS if lang != DEFAULT for p in problems(lang, template)]
    for line in found:
        print(line, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
