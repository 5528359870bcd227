"""'Download as notebook' (issue 44): the page, or the chapter's act, at its current settings as a Jupyter notebook,
the same file as `python -m core notebook` writes. Built only when clicked (a callable for st.download_button)."""
from __future__ import annotations

import streamlit as st

from core.i18n import DEFAULT, _, current, listing
from core.labs import TRANSLATED
from core.labs import controls_of
from core.notebooks import build
from ui import url_state
from ui.common import plain

FIXED = {"sampling": {"model": "pretrained"},   # a session's own model stays on the server: notebooks use the shipped
         "tokens": {"source": "timemachine"}}   # an upload stays on the server too


def training_values() -> dict:
    """The Training lab's preset and, from its form, the settings that differ from that preset's (a notebook
    trains the preset with those changes)."""
    from core.runs.config import FORM_SETTINGS, PRESETS
    preset_setting = controls_of("training")["preset"]
    raw = url_state.current(preset_setting)
    preset = raw if raw in PRESETS else preset_setting.default
    base = PRESETS[preset].config
    changed = {}
    for name in FORM_SETTINGS:
        value = st.session_state.get(f"tr.{preset}.{name}", getattr(base, name))   # the form's key: pages/training
        if value != getattr(base, name):
            changed[name] = value
    return {"preset": preset, **changed}


def current_values(page: str) -> dict:
    """Every control's value as the page shows it now (the widget's, else the URL's, else its default)."""
    if page == "training":
        return training_values()
    values = {}
    for name, s in controls_of(page).items():
        raw = url_state.current(s)            # the widget's value, the URL's text, or None
        try:
            text = isinstance(raw, str) and s.kind is not str
            values[name] = s.default if raw is None else s.parse(raw) if text else s.check(raw)
        except ValueError:                    # a bad URL value: the page shows its default, and so does the notebook
            values[name] = s.default
    return {**values, **FIXED.get(page, {})}


def download_button(page: str, where=None) -> None:
    """This page at its current settings as a notebook (.ipynb): in the sidebar, or where (e.g. under a lab's
    controls, in the fragment that redraws them)."""
    values = current_values(page)
    lang = current() if page in TRANSLATED else DEFAULT   # a page shown in English gives its English notebook
    try:
        name = build.file_name(page, values, lang)
    except ValueError:
        values, name = {}, build.file_name(page, lang=lang)
    controls = controls_of(page)
    changed = listing(f"{_(controls[n].label)} = {_(controls[n].word(v))}" for n, v in values.items()
                        if (v != controls[n].default or page == "training") and n not in FIXED.get(page, {}))
    (where or st.sidebar).download_button(
        _("Download as notebook"), data=lambda: build.dumps(build.build(page, values, lang)), file_name=name,
        mime="application/x-ipynb+json", icon=":material/download:", on_click="ignore", key=f"notebook.{page}",
        help=_("This page at its current settings as a Jupyter notebook: the same computations, figures, readings "
               "and exercises, to change and run in Jupyter (needs pip install -e . in a clone of RNN Lab). Settings "
               "other than the defaults: {changed}.").format(changed=plain(changed or _("none"), 400)))
