"""Form widgets drawn from setting declarations (core.settings.Setting): the widget, its label, help, range
and choices all come from the declaration, so the form can never offer what the engine refuses."""
from __future__ import annotations

from typing import Callable, Sequence

import streamlit as st

from core.settings import Setting


def allowed(s: Setting) -> str:
    """A number setting's range in words, for its help: the field keeps values inside it."""
    if s.kind is int:
        return f"Allowed: {int(s.lo):,} to {int(s.hi):,}."
    if s.kind is float:
        return f"Allowed: {s.lo:g} to {s.hi:g}" + (" (not 0)" if s.lo_open else "") + "."
    return ""


def widget(col, s: Setting, key: str, disabled: bool = False) -> None:
    """The widget for one setting, in a column, bound to session-state key. A number field's help says its
    range, so a value typed outside it (which the field brings back inside) is never a silent surprise."""
    help_text = " ".join(t for t in (s.help, allowed(s)) if t) if not s.choices else s.help
    common = dict(key=key, help=help_text or None, disabled=disabled)
    if s.choices:
        if s.widget == "select":
            col.selectbox(s.label, s.choices, format_func=s.word, **common)
        else:
            col.radio(s.label, s.choices, format_func=s.word, **common)
    # No min/max on the field: a browser field with bounds refuses an out-of-range value without a word; here
    # the value reaches the page, which names the setting and its range (pages.training.out_of_range).
    elif s.kind is int:
        col.number_input(s.label, step=int(s.step or 1), **common)
    elif s.kind is float:
        col.number_input(s.label, step=s.step, format="%g", **common)
    else:
        col.text_input(s.label, max_chars=int(s.hi) if s.hi else None, **common)


def section(title: str, settings: Sequence[Setting], prefix: str, lead: Sequence[Callable] = (),
            per_row: int = 4) -> None:
    """A titled block of the form: `lead` widgets (callables taking a column) first, then one widget per
    setting, `per_row` to a row."""
    st.markdown(f"**{title}**")
    cells: list[Callable] = list(lead) + [lambda col, s=s: widget(col, s, f"{prefix}.{s.name}") for s in settings]
    for start in range(0, len(cells), per_row):
        row = cells[start: start + per_row]
        for draw, col in zip(row, st.columns(per_row)):
            draw(col)
