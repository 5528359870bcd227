"""The labs' Exercises: answer first, then Check runs the real computation and grades the answer from it.

Every attempt is kept on the server under the learner's token (core.classroom, ui.learner: no accounts), and the
first attempt at an exercise is the one the score counts. Progress also downloads, and a restore regrades every
answer from the exercise's own computation. A teacher's assignment link (?ex=KEY, optionally &hide=NAME,...)
opens a lab with one exercise on top, the lab's figures held back until the learner has checked an answer, and
the named controls fixed at the link's values.
"""
from __future__ import annotations

import csv
import functools
import io
import json
import time

import pandas as pd
import streamlit as st

from core.exercises import types as core_ex
from core.exercises.bank import BANK, for_lab
from core.labs import Url, controls_of, query
from core.settings import short
from core import classroom
from core.exercises import cache as exercise_cache
from ui import learner, url_state
from ui.attempts import keep, progress, waiting
from core.figures import iso_time
from core.i18n import _, current
from ui.common import plain, time_left

MAX_PROGRESS_BYTES = 100_000


def hint(ex: core_ex.Exercise) -> None:
    """The hint behind a switch; opening it is recorded with the learner's next attempt."""
    if st.toggle(_("Show the hint"), key=f"ex.{ex.key}.hint"):
        st.markdown(plain(_(ex.hint), 400))
        if not st.session_state.get(f"ex.{ex.key}.hint_kept"):
            token = learner.ensure()
            try:
                if token is not None:
                    classroom.record_hint(token, ex.key)
                st.session_state[f"ex.{ex.key}.hint_kept"] = True
            except ValueError:
                pass


def solution(key: str, settings_json: str) -> core_ex.Solution:
    """An exercise run with these settings (the same settings give the same numbers: cached in this process, and
    on disk for every process of the server and after a restart, core.exercises.cache), explained in the page's
    language."""
    return _solution(key, settings_json, current())


@functools.lru_cache(maxsize=256)      # not st.cache_data: a training check draws its progress while it computes
def _solution(key: str, settings_json: str, lang: str) -> core_ex.Solution:
    return exercise_cache.solve(BANK[key], json.loads(settings_json))


@st.cache_resource
def _took() -> dict:
    """How long each exercise's computation took on this server, the last time it ran (not from the cache)."""
    return {}


CANCELLED = "_rnnlab_check_cancelled"   # the exercise whose computation the learner cancelled (the next run says so)


def _cancel(key: str, toggle: str | None) -> None:
    """Cancel's callback: the click itself reruns the page, which ends the computation at its next progress
    report (nothing is kept); a "try the other setting" toggle is switched off so that it does not start again."""
    st.session_state[CANCELLED] = key
    if toggle:
        st.session_state[toggle] = False


def _solve(ex: core_ex.Exercise, settings: dict | None = None, toggle: str | None = None) -> core_ex.Solution:
    key = json.dumps({**ex.settings, **(settings or {})}, sort_keys=True)
    last = _took().get((ex.key, key))
    with st.spinner(_("Running the lab's computation (it took {seconds:.0f} s the last time on this server) ...").format(
            seconds=last) if last and last >= 1 else _("Running the lab's computation ...")):
        t0, bar, stop = time.perf_counter(), st.empty(), st.empty()
        bar_shown: list = []   # the Cancel button is drawn with the first progress report, once

        def progress(p) -> None:   # an exercise that trains: how far, about how long is left, and a way out
            done = p.step / p.total_steps if p.total_steps else 0.0
            left = time_left(done, time.perf_counter() - t0)
            if not bar_shown:
                stop.button(_("Cancel"), key=f"ex.{ex.key}.cancel.{'other' if toggle else 'check'}",
                            icon=":material/cancel:", on_click=_cancel, args=(ex.key, toggle))
                bar_shown.append(True)
            bar.progress(min(done, 1.0), text=_("Training for this check: epoch {epoch}, {percent:.0f}%{left}").format(
                epoch=p.epoch, percent=100 * done, left=left))
        watching = core_ex.REPORT.set(progress)
        try:
            sol = solution(ex.key, key)
        finally:
            core_ex.REPORT.reset(watching)
            bar.empty()
            stop.empty()
        seconds = time.perf_counter() - t0
    if seconds > 0.05:                      # a real run, not the cache
        _took()[(ex.key, key)] = seconds
    return sol


# --- assignment links ------------------------------------------------------------------------------------

_OPENED_AS_ASSIGNMENT = "_rnnlab_assignments_opened"   # exercises this session opened from an assignment link


def assigned_quietly(lab: str) -> core_ex.Exercise | None:
    """The exercise this page's URL assigns (?ex=KEY), else one this session opened from an assignment link on this
    lab and has not answered yet (its figures stay held back whatever the address says later), or None."""
    opened = st.session_state.setdefault(_OPENED_AS_ASSIGNMENT, [])
    ex = BANK.get(st.query_params.get(Url.EXERCISE, ""))
    if ex is not None and ex.lab == lab:
        if ex.key not in opened:
            opened.append(ex.key)
        return ex
    if Url.EXERCISE not in st.query_params:
        done = progress()
        return next((BANK[k] for k in opened if BANK[k].lab == lab and k not in done), None)
    return None


def assigned(lab: str) -> core_ex.Exercise | None:
    """The same, saying so when the URL names an exercise this lab does not have."""
    ex = assigned_quietly(lab)
    if ex is None and Url.EXERCISE in st.query_params:
        st.warning(_("The link names an exercise {key} that this lab does not have (it may be from an older version): "
                     "showing the lab and all its exercises instead.").format(
                         key=plain(st.query_params[Url.EXERCISE], 40)),
                   icon=":material/warning:")
    return ex


def hold_figures(lab: str) -> None:
    """Stop the page here while an assigned exercise waits for its first answer (the figures would give it away)."""
    ex = assigned_quietly(lab)
    if ex is not None and ex.key not in progress():
        st.info(_("Answer the exercise above and press **Check** first: the lab's figures appear after that."),
                icon=":material/lock:")
        st.stop()


def assignment_query(ex: core_ex.Exercise) -> dict:
    """The URL settings that open an exercise as an assignment: the lab set up for it (its controls' URL keys
    and values, from their declarations), the exercise on top."""
    return query(ex.lab, ex.url, exercise=ex.key)


# Each exercise opened on its own (the card's button): its assignment's query and its lab's controls' URL keys,
# fixed by the bank and the registry, so worked out once here rather than on every card drawn.
OPEN_ON_ITS_OWN = {k: (assignment_query(ex), tuple(s.key for s in controls_of(ex.lab).values()))
                   for k, ex in BANK.items()}


def link(ex: core_ex.Exercise, hide: list[str] | tuple = ()) -> str:
    """The relative URL of an assignment, with the controls to hide."""
    from urllib.parse import urlencode
    return f"/{'' if ex.lab == 'chapter' else ex.lab}?{urlencode(query(ex.lab, ex.url, exercise=ex.key, hide=hide))}"


# --- one exercise ----------------------------------------------------------------------------------------

def _answer_widget(ex: core_ex.Exercise):
    key = f"ex.{ex.key}.answer"
    if ex.kind == core_ex.CHOICE:
        return st.radio(_("Your answer"), ex.options, index=None, key=key, format_func=_)
    return st.number_input(_("Your answer") + (f" ({ex.unit})" if ex.unit else ""), value=None, key=key,
                           format="%.6g", help=_("Graded {tolerance} of what the lab computes.").format(
                               tolerance=core_ex.tolerance_text(ex)))


def _show_solution(ex: core_ex.Exercise, sol: core_ex.Solution) -> None:
    st.markdown(plain(sol.explanation, 800))
    if sol.numbers:
        st.dataframe(pd.DataFrame({_("what the run measured"): list(sol.numbers),
                                   _("value"): [f"{v:.6g}" if isinstance(v, float) else str(v)
                                             for v in sol.numbers.values()]}), hide_index=True)


_SEEN = "_rnnlab_exercises_seen"   # (learner, exercise) whose first view this session has recorded


def seen(ex: core_ex.Exercise) -> None:
    """A learner of a class sees an exercise: the first time is kept (the teacher's time to answer runs from it)."""
    who = learner.current()
    done = st.session_state.setdefault(_SEEN, set())
    if who is None or who.class_id is None or (who.token, ex.key) in done:
        return
    done.add((who.token, ex.key))
    try:
        classroom.record_opened(who.token, ex.key)
    except ValueError:    # the records are busy or unreadable: the time to answer goes without this view
        pass


_CARD_AT = "_rnnlab_card_at"    # exercise -> when this session first drew its card (its time to answer runs from it)


def card(ex: core_ex.Exercise, where: str = "lab") -> None:
    """Question, answer, hint, Check; then the grade, the run's numbers and the contrast. where: the card's place
    (in the lab's list, or on top as an assignment), so its time to answer runs from this card's first drawing."""
    seen(ex)
    card_at = st.session_state.setdefault(_CARD_AT, {}).setdefault((ex.key, where, ex.lab), time.time())
    with st.container(border=True):
        st.markdown(f"**{plain(_(ex.question), 400)}**")
        answer = _answer_widget(ex)
        hint(ex)
        if assigned_quietly(ex.lab) is None:   # the card sits on its lab: the lab, set up for it, in this session
            st.button(_("Open it on its own: the lab set up for it, figures hidden until you check"),
                      key=f"ex.{ex.key}.open", icon=":material/open_in_new:", type="tertiary",
                      on_click=url_state.open_here, args=OPEN_ON_ITS_OWN[ex.key])
        if st.button(_("Check"), key=f"ex.{ex.key}.check", disabled=answer is None, type="primary"):
            try:
                sol = _solve(ex)
                graded = core_ex.grade(ex, answer, sol)
            except ValueError as exc:
                st.error(plain(exc, 400), icon=":material/error:")
                return
            held = assigned_quietly(ex.lab) is ex and ex.key not in progress()   # hold_figures stops the page
            keep(ex, graded.answer, graded.correct, sol.answer, figures_shown=not held,  # the answer as graded
                 card_at=card_at)
            st.rerun()  # redraw the page: an assignment's figures appear now
        if st.session_state.get(CANCELLED) == ex.key:
            del st.session_state[CANCELLED]
            st.info(_("Cancelled: the check's run was stopped and nothing was recorded. Check again when you like."),
                    icon=":material/info:")
        done = progress().get(ex.key)
        if done is None:
            return
        sol = _solve(ex)
        latest = done.get("latest", done["answer"])
        good = core_ex.grade(ex, latest, sol)
        (st.success if good.correct else st.error)(
            _("You answered {answer}. {grade}").format(answer=plain(_(latest) if isinstance(latest, str) else latest),
                                                       grade=good.message),
            icon=":material/check_circle:" if good.correct else ":material/cancel:")
        if (why := waiting(ex.key)) is not None:
            st.warning(_("Not saved on the server yet: {why} Your answer is kept in this tab and is saved as soon as the "
                         "records can take it: keep this tab open (the Exercises page also downloads your progress)."
                         ).format(why=plain(why, 500)), icon=":material/cloud_off:")
        if done.get("tries", 1) > 1:
            first = done["answer"]
            first = plain(_(first) if isinstance(first, str) else first)
            st.caption((_("Your first answer, the one your score counts: {answer} (right); {tries} tries in all.")
                        if done["correct"] else
                        _("Your first answer, the one your score counts: {answer} (not right); {tries} tries in all.")
                        ).format(answer=first, tries=done["tries"]))
        _show_solution(ex, sol)
        if ex.other and st.toggle(_("Try the other setting: {setting}").format(setting=_(ex.other_label)),
                                  key=f"ex.{ex.key}.other"):
            other = _solve(ex, ex.other, toggle=f"ex.{ex.key}.other")
            shown = _(other.answer) if ex.kind == core_ex.CHOICE else f"{other.answer:.4g}"
            st.markdown(_("With {setting} the answer is **{answer}**.").format(setting=plain(_(ex.other_label)),
                                                                                answer=plain(shown)))
            _show_solution(ex, other)


def section(lab: str, act: int | None = None) -> None:
    """The lab's Exercises (the assigned one, if any, is drawn at the top of the page instead); on the chapter,
    those of one act (each exercise's url names its act)."""
    assigned_ex = assigned_quietly(lab)
    exs = [ex for ex in for_lab(lab, act) if assigned_ex is None or ex.key != assigned_ex.key]
    if not exs:
        return
    st.header(_("Exercises"))
    st.caption(_("Answer first, then press Check: the lab runs the computation and grades your answer from its "
                 "numbers. Your answers are listed on the Exercises page."))
    for ex in exs:
        card(ex)


def assignment(lab: str) -> None:
    """At the top of a lab: the exercise a teacher's link assigns."""
    ex = assigned(lab)
    if ex is not None:
        st.subheader(_("Your exercise"))
        fixed = sorted(url_state.hidden_names())
        if fixed:
            st.caption(_("Your teacher's link fixes these controls: {controls}.").format(
                controls=plain(', '.join(fixed), 200)))
        card(ex, "assignment")


# --- progress files --------------------------------------------------------------------------------------

def progress_json() -> str:
    return json.dumps({"format": "rnnlab-exercises/1", "answers": progress()}, indent=1)


def progress_csv() -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["exercise", "lab", "question", "answer", "correct", "answered_at (UTC)"])
    for key, row in progress().items():
        ex = BANK[key]
        w.writerow([key, ex.lab, ex.question, row["answer"], row["correct"], iso_time(row["at"])])
    return buf.getvalue()


def read_progress(data: bytes) -> dict:
    """The answers of a downloaded progress file, checked field by field: key -> {"answer", "at"}. Any "correct"
    in the file is ignored (restore regrades). ValueError with what is wrong (an unknown exercise, a bad answer,
    not our file)."""
    if len(data) > MAX_PROGRESS_BYTES:
        raise ValueError(f"That file is {len(data):,} bytes; a progress file is far smaller (limit "
                         f"{MAX_PROGRESS_BYTES:,}).")
    try:
        doc = json.loads(data.decode("utf-8-sig"))   # a byte-order mark, as some editors write, is fine
    except (UnicodeDecodeError, ValueError, RecursionError):   # not JSON, a number too long, nesting too deep
        raise ValueError("That is not a progress file (RNN Lab writes plain JSON).") from None
    if not isinstance(doc, dict) or doc.get("format") != "rnnlab-exercises/1" or not isinstance(doc.get("answers"), dict):
        raise ValueError("That JSON is not an RNN Lab progress file.")
    found = {}
    for key, row in doc["answers"].items():
        if key not in BANK:
            raise ValueError(f"The file names an exercise {short(key)} this version does not have.")
        if not isinstance(row, dict):
            raise ValueError(f"The answer to {key} is damaged.")
        answer = core_ex.check_answer(BANK[key], row.get("answer"))
        try:
            at = int(row.get("at", 0) or 0)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"The answer to {key} is damaged (its time is not a number).") from None
        found[key] = {"answer": answer, "at": at}
    return found


def restore(data: bytes, into: dict | None = None) -> int:
    """Restore a progress file's answers, each regraded from its exercise's own computation (a file cannot raise a
    score); returns how many. Into the learner's records (as attempts marked 'restore', after any they already
    have: the first attempt still counts, and a restored answer is never a first attempt), or into the dict
    `into`."""
    found = read_progress(data)
    for n, (key, row) in enumerate(found.items()):
        ex = BANK[key]
        if into is None:
            st.progress(n / len(found), text=f"Regrading {n + 1} of {len(found)}: {ex.key} ...")
        sol = solution(ex.key, json.dumps(ex.settings, sort_keys=True))
        correct = core_ex.is_right(ex, row["answer"], sol.answer)
        if into is None:
            keep(ex, row["answer"], correct, sol.answer, source=classroom.RESTORE)
        else:
            classroom.fold(into, {"exercise": key, "answer": row["answer"], "correct": correct, "computed": sol.answer,
                                  "at": row["at"], "source": classroom.RESTORE})
    return len(found)
