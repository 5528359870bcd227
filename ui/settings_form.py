"""Form widgets drawn from setting declarations (core.settings.Setting): the widget, its label, help, range
and choices all come from the declaration, so the form can never offer what the engine refuses."""
from __future__ import annotations

from typing import Callable, Sequence

import streamlit as st

from core.i18n import _
from core.settings import Setting, allowed


def widget(col, s: Setting, key: str, reason: str = "") -> None:
    """The widget for one setting, in a column, bound to session-state key; greyed with `reason` in its help
    when it has no effect. A number field's help says its range."""
    help_text = " ".join(t for t in (reason, _(s.help) if s.help else "", "" if s.choices else allowed(s)) if t)
    common = dict(key=key, help=help_text or None, disabled=bool(reason))
    label, word = _(s.label), lambda choice: _(s.word(choice))
    if s.choices:
        if s.widget == "select":
            col.selectbox(label, s.choices, format_func=word, **common)
        else:
            col.radio(label, s.choices, format_func=word, **common)
    # No min/max on the field: a browser field with bounds refuses an out-of-range value without a word; here
    # the value reaches the page, which names the setting and its range (pages.training.out_of_range).
    elif s.kind is int:
        col.number_input(label, step=int(s.step or 1), **common)
    elif s.kind is float:
        col.number_input(label, step=s.step, format="%g", **common)
    else:
        col.text_input(label, max_chars=int(s.hi) if s.hi else None, **common)


def not_used(s: Setting, lookup: dict[str, Setting]) -> str:
    """Why a setting does nothing with the others as they are ("" when it does something)."""
    other, values = s.only_when
    o = lookup[other]
    choices = _(" or ").join(_(o.word(v)) for v in values)
    return _("Not used: only with {setting} set to {choices}.").format(setting=_(o.label).lower(), choices=choices)


def section(title: str, settings: Sequence[Setting], prefix: str, lead: Sequence[Callable] = (),
            per_row: int = 4, lookup: dict[str, Setting] | None = None,
            off: dict[str, str] | None = None) -> None:
    """A titled block of the form: `lead` widgets (callables taking a column) first, then one widget per
    setting, `per_row` to a row. A setting that has no effect with the current values of the others (its
    only_when) is greyed, and its help says why; `off` greys others with a reason of the page's own."""
    st.markdown(f"**{_(title)}**")
    values = {n: st.session_state.get(f"{prefix}.{n}") for n in (lookup or {})}
    reasons = dict(off or {})
    for s in settings:
        if lookup and not s.applies(values):
            reasons[s.name] = not_used(s, lookup)
    cells: list[Callable] = list(lead) + [lambda col, s=s: widget(col, s, f"{prefix}.{s.name}",
                                                                  reason=reasons.get(s.name, ""))
                                          for s in settings]
    for start in range(0, len(cells), per_row):
        row = cells[start: start + per_row]
        for draw, col in zip(row, st.columns(per_row)):
            draw(col)
