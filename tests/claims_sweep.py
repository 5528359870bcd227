"""The claims sweep's machinery (issue 41, issue 62): the values each declared control is walked over, and the check
of a lab built as one module at one setting, by the rule book in its own test file, tests/test_lab_<key>.py (each
defines holds(claim, result), complete(claims, result) and NAMED, the settings the issues named)."""
from __future__ import annotations

import dataclasses
import importlib

from core.claims import Claim
from core.labs import LABS, SETTINGS_OF, controls_of
from core.settings import Setting


def values_of(s: Setting) -> list:
    """The values the sweep tries for one control: its choices, both truth values, or its ends and default."""
    if s.choices:
        return list(s.choices)
    if s.kind is bool:
        return [False, True]
    if s.kind in (int, float) and s.lo is not None and s.hi is not None:
        lo = s.lo if not s.lo_open else s.lo + (s.step or 0.1)
        return sorted({s.kind(lo), s.default, s.kind(s.hi)})
    return [s.default]


def walk(page: str, names: list[str], base=None) -> list:
    """The page's settings dataclass at each value of each named control, the others at their defaults."""
    cls = SETTINGS_OF[page]
    base = base or cls()
    controls = controls_of(page)
    return [dataclasses.replace(base, **{n: v}) for n in names for v in values_of(controls[n])]


def sweep_points(page) -> list:
    """The settings a lab's claims are checked at: each control walked over its range from the rule book's BASE (or
    the defaults), then the settings the issues named; each setting once (every control's walk passes the base)."""
    book = rule_book(page.key)
    points = walk(page.key, list(controls_of(page.key)), getattr(book, "BASE", None)) + \
        [page.settings(**v) for v in book.NAMED]
    return list({repr(s): s for s in points}.values())


def module_labs() -> list:
    """The labs built as one module (core/labs/<key>.py), from the registry, that the sweep walks: all but those
    whose computation is a training run (TRAINS) and whose rule book names no cheap BASE to walk each control from
    (Training: its readings are checked on any history instead)."""
    return [p for p in LABS if p.module and (not getattr(p.module, "TRAINS", False)
                                             or hasattr(rule_book(p.key), "BASE"))]


def rule_book(key: str):
    """The lab's test file, tests/test_lab_<key>.py: its holds, complete and NAMED."""
    return importlib.import_module(f"test_lab_{key}")


def check_module_lab(page, s) -> list[Claim] | None:
    """Each claim of the lab at settings s checked by its rule; None where the lab refuses the settings with a
    message (ValueError: a training range too short for the window), as its page does."""
    lab, book = page.module, rule_book(page.key)
    try:
        r = lab.compute(s)
    except ValueError:
        return None
    claims = lab.readings(r)
    for c in claims:
        assert c.kind and c.text, (page.key, s, c)
        try:
            ok = book.holds(c, r)
        except KeyError:
            raise AssertionError(f"{page.key}: no rule for the claim kind {c.kind!r}; write one in "
                                 f"tests/test_lab_{page.key}.py") from None
        assert ok, (s, c.kind, c.text)
    book.complete(claims, r)
    return claims
