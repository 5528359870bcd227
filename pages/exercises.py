"""Exercises: every lab's exercises with this session's answers, a score, progress to download and restore, and
assignment links for teachers."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from core import classroom
from core.exercises.bank import BANK
from core.labs import controls_of, url_query
from ui import attempts, exercises, url_state
from core.labs import LABS
from core.i18n import N_, _, ngettext
from ui.common import plain

LAB_TITLES = {**{lab.key: lab.title for lab in LABS}, "chapter": N_("The chapter (Act 4)")}   # translated as shown


def overview_table() -> pd.DataFrame:
    done = attempts.progress()
    assigned = attempts.class_assignment()
    rows, c = [], {k: _(v) for k, v in COLUMNS.items()}
    for key, ex in BANK.items():
        row = done.get(key)
        # the link and the question first: a phone shows the first columns (issue 41: it showed lab and source)
        result = _("not tried") if row is None else (
            (_("right (restored)") if row["correct"] else _("wrong (restored)")) if row.get("restored") else
            (_("right") if row["correct"] else _("wrong")))
        answer = "" if row is None else row["answer"]
        rows.append({c["open"]: exercises.link(ex), c["question"]: _(ex.question), c["result"]: result,
                     c["your answer"]: _(answer) if isinstance(answer, str) else str(answer),
                     c["tries"]: 0 if row is None else row.get("tries", 1),
                     **({c["assigned"]: _("yes") if key in assigned else ""} if assigned else {}),
                     c["lab"]: _(LAB_TITLES[ex.lab]),
                     c["from"]: _("the book: {exercise}").format(exercise=_(ex.book)) if ex.book else "RNN Lab"})
    return pd.DataFrame(rows)


# The table's columns, as a learner reads them (the CSV download keeps its own, for programs)
COLUMNS = {"open": N_("open"), "question": N_("question"), "result": N_("result"), "your answer": N_("your answer"),
           "tries": N_("tries"), "assigned": N_("assigned"), "lab": N_("lab"), "from": N_("from")}



def score() -> None:
    done = attempts.progress(fresh=True)   # drawn first: reads the records again (answers from other tabs too)
    firsts = {k: r for k, r in done.items() if not r.get("restored")}
    assigned = attempts.class_assignment()
    score = classroom.summary.score(firsts, list(BANK), assigned)
    c1, c2, c3 = st.columns(3)
    c1.metric(_("Answered"), _("{done} of {all}").format(done=len(done), all=len(BANK)))
    c2.metric(_("Right first time"), f"{sum(r['correct'] for r in firsts.values())}", help=_(
        "Each exercise's first attempt counts; answers restored from a file are never first attempts."))
    c3.metric(_("Score"), score.text(), help=(
        _("Right first time at the {n} exercises your class was assigned.") if assigned else
        _("Right first time, out of all {n} exercises.")).format(n=score.out_of))
    if assigned:
        n = len(assigned)
        st.caption(ngettext("Your class was assigned {n} exercise (marked in the table's 'assigned' column): your "
                            "score is the {right} of them you got right first time.",
                            "Your class was assigned {n} exercises (marked in the table's 'assigned' column): your "
                            "score is the {right} of them you got right first time.", n).format(n=n, right=score.right))
    st.caption(_("Teachers: start a class on the Class page to see your learners' answers and runs together."))


def save_and_restore() -> None:
    st.subheader(_("Keep your progress"))
    st.caption(_("There are no accounts: your answers are kept on this server, and this browser finds them again, so "
                 "a reload or another lab keeps them. On another device, type the resume code the sidebar shows. "
                 "Addresses never carry your answers' key, so a link you share gives nobody your answers. Download "
                 "them to keep a copy, and upload the JSON file later to carry on: every answer in it is graded again "
                 "by its exercise's own run, and the first attempt at each exercise is the one the score counts."))
    d1, d2 = st.columns(2)
    d1.download_button(_("Download progress (.json)"), exercises.progress_json(), "rnnlab-progress.json",
                       "application/json", icon=":material/download:")
    d2.download_button(_("Download as a table (.csv)"), exercises.progress_csv(), "rnnlab-progress.csv", "text/csv",
                       icon=":material/table:")
    up = st.file_uploader(_("Restore progress from a .json file"), type=["json"], key="exercises.restore")
    if up is not None and st.session_state.get("exercises.restored") != up.file_id:
        try:
            n = exercises.restore(up.getvalue())
            st.session_state["exercises.restored"] = up.file_id
            st.success(ngettext("Restored {n} answer.", "Restored {n} answers.", n).format(n=n),
                       icon=":material/check_circle:")
            st.rerun()
        except ValueError as exc:
            st.error(plain(exc, 300), icon=":material/error:")


def assignment_builder() -> None:
    st.subheader(_("For teachers: one link per question"))
    st.caption(_("The link opens the lab with the exercise's settings and the exercise on top; the lab's figures "
                 "stay hidden until the learner has checked an answer. Hidden controls stay at the link's values."))
    key = url_state.draw(controls_of("exercises")["assign"], choices=list(BANK), default=next(iter(BANK)),
                         format_func=lambda k: f"{_(LAB_TITLES[BANK[k].lab])}: {_(BANK[k].question)[:80]}")
    ex = BANK[key]
    names = list(url_query(ex.lab, ex.url))   # the URL keys of the controls the exercise sets
    hide = st.multiselect(_("Controls to hide"), names, default=names, key=f"exercises.hide.{ex.key}",
                          help=_("The settings this question depends on: hiding them stops learners from simply "
                                 "moving the slider to read the answer."))
    base = str(st.context.url or "").split("?")[0].rstrip("/")
    base = base.rsplit("/", 1)[0] if base.endswith("/exercises") else base
    st.code(base + exercises.link(ex, hide), language=None, wrap_lines=True)


def main() -> None:
    url_state.page("exercises")
    st.title(_("Exercises"))
    st.markdown(_("Every lab has exercises that check themselves: you commit to an answer, the lab runs the real "
                  "computation, and your answer is graded from the numbers it produced. Here are all of them with "
                  "your answers so far. Open one from the **{open}** column, or find them at the bottom of each "
                  "lab.").format(open=_("open")))
    score()
    st.dataframe(overview_table(), hide_index=True, width="stretch",
                 column_config={_("open"): st.column_config.LinkColumn(_("open"), display_text=_("open")),
                                _("question"): st.column_config.TextColumn(width="large")})
    book = sum(bool(ex.book) for ex in BANK.values())
    st.caption(_("{n} exercises; {book} of them ('the book: ...') are the book's own end-of-section exercises, asked "
                 "in the book's terms and graded by a run. A number is graded within the tolerance shown beside its "
                 "answer box.").format(n=len(BANK), book=book))
    save_and_restore()
    assignment_builder()


if __name__ == "__main__":
    main()
