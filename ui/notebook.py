"""'Download as notebook' (issue 44): the page, or the chapter's act, at its current settings as a Jupyter notebook,
the same file as `python -m core notebook` writes. Built only when clicked (a callable for st.download_button)."""
from __future__ import annotations

import streamlit as st

from core.labs import controls_of
from core.notebooks import cells, cli
from ui import url_state
from ui.common import plain

FIXED = {"sampling": {"model": "pretrained"},   # a session's own model stays on the server; notebooks use the shipped one
         "tokens": {"source": "timemachine"}}   # an upload stays on the server too


def current_values(page: str) -> dict:
    """Every control's value as the page shows it now (the widget's, else the URL's, else its default)."""
    values = {}
    for name, s in controls_of(page).items():
        raw = url_state.current(s)
        try:
            values[name] = s.default if raw is None else s.parse(raw) if isinstance(raw, str) and s.kind is not str \
                else s.check(raw)
        except ValueError:
            values[name] = s.default
    return {**values, **FIXED.get(page, {})}


def download_button(page: str) -> None:
    """In the sidebar: this page at its current settings as a notebook (.ipynb)."""
    values = current_values(page)
    try:
        name = cli.file_name(page, values)
    except ValueError:
        values, name = {}, cli.file_name(page)
    controls = controls_of(page)
    changed = ", ".join(f"{controls[n].label} = {controls[n].word(v)}" for n, v in values.items()
                        if v != controls[n].default and n not in FIXED.get(page, {}))
    st.sidebar.download_button(
        "Download as notebook", data=lambda: cells.dumps(cli.build(page, values)), file_name=name,
        mime="application/x-ipynb+json", icon=":material/download:", on_click="ignore", key=f"notebook.{page}",
        help="This page at its current settings as a Jupyter notebook: the same computations, figures, readings "
             "and exercises, to change and run in Jupyter (needs pip install -e . in a clone of RNN Lab). Settings "
             f"other than the defaults: {plain(changed or 'none', 400)}.")
