"""Class: a teacher starts a class and gets a join link for learners and a private teacher link; learners join with
a display name; the teacher link opens the class's view (who answered what, first attempts against the runs'
values, opened hints, the class's training runs on one chart, CSV of it all). Records: core.classroom."""
from __future__ import annotations

import csv
import io
import statistics

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core import classroom
from core.exercises import types as core_ex
from core.exercises.bank import BANK
from core.labs import Url, controls_of, url_query
from core.runs import store
from ui import learner, url_state
from ui.common import chart_text, csv_cell, iso_time, plain
from ui.plots import show, style

CONTROLS = controls_of("classroom")
REFRESH_S = 20


def base_url() -> str:
    url = str(st.context.url or "").split("?")[0].rstrip("/")
    return url.rsplit("/", 1)[0] if url.endswith("/classroom") else url


# --- figures (data in, figure out) ------------------------------------------------------------------------

def answers_figure(ex: core_ex.Exercise, firsts: list[dict]) -> go.Figure:
    """The class's first answers to one exercise against the value its run computed."""
    computed = firsts[0]["computed"] if firsts else None
    if ex.kind == core_ex.CHOICE:
        counts = [sum(a["answer"] == o for a in firsts) for o in ex.options]
        colours = ["#009E73" if o == computed else "#9aa5b1" for o in ex.options]
        fig = go.Figure(go.Bar(x=[chart_text(o) for o in ex.options], y=counts, marker_color=colours))
        fig = style(fig, None, "first answer (green: what the run computed)", "learners", height=320)
        # whole learners: ticks at whole numbers from 0 (no "1.5 learners")
        return fig.update_yaxes(rangemode="tozero", tickformat=",d", dtick=1 if max(counts) <= 10 else None)
    values = [float(a["answer"]) for a in firsts]
    fig = go.Figure(go.Scatter(x=values, y=[chart_text(a["name"]) for a in firsts], mode="markers",
                               marker=dict(size=11, color=["#009E73" if a["correct"] else "#D55E00" for a in firsts]),
                               name="first answers"))
    if computed is not None:
        fig.add_vline(x=float(computed), line_dash="dash", line_color="#0072B2")
    return style(fig, None, f"first answer{' (' + ex.unit + ')' if ex.unit else ''}; dashed: the run's value",
                 "learner", height=max(260, 40 + 28 * len(firsts)))


def answers_summary(ex: core_ex.Exercise, firsts: list[dict], learners: int, hinted: int) -> str:
    if not firsts:
        return f"No one of the {learners} learners has answered this one yet."
    right = sum(a["correct"] for a in firsts)
    text = (f"{len(firsts)} of {learners} learners answered; {right} right on their first attempt; "
            f"{hinted} opened the hint.")
    computed = firsts[0]["computed"]
    if ex.kind == core_ex.NUMBER:
        mid = statistics.median(float(a["answer"]) for a in firsts)
        text += f" The run computed {float(computed):.4g}; the median prediction was {mid:.4g}."
    else:
        text += f" The run's answer: {computed}."
    return text


def runs_figure(runs: list[classroom.ClassRun]) -> go.Figure:
    """Every class run's validation perplexity by epoch, one line per run."""
    fig = go.Figure()
    for r in runs:
        fig.add_trace(go.Scatter(x=[row.epoch for row in r.history], y=[row.val_ppl for row in r.history],
                                 mode="lines+markers", name=chart_text(f"{r.learner}: {r.name}", 60)))
    return style(fig, None, "epoch", "validation perplexity", height=380, log_y=True)


# --- the teacher's view -----------------------------------------------------------------------------------

def run_histories(info: classroom.ClassInfo) -> list[classroom.ClassRun]:
    """The class's runs with their curves: from the run store while it has them (copied into the class records
    when finished, so they outlast the store's cleaning), else from the copy."""
    runs = classroom.class_runs(info.id)
    for r in runs:
        try:
            live = store.read_live(r.run_key)
        except ValueError:
            live = None
        if live is not None and live.progress is not None:
            r.history, r.status = list(live.progress.history), str(live.status)
            if not live.status.active:
                classroom.keep_history(r.run_key, r.history)
    return runs


def differs(a: dict) -> dict:
    """Where the page a learner checked from differed from the exercise's own setup: control -> (page, exercise).
    Grading always runs the exercise's own settings; a difference means the learner looked at another setting."""
    ex = BANK.get(a["exercise"])
    if ex is None or not a.get("settings"):
        return {}
    own = url_query(ex.lab, ex.url)
    return {k: (v, own[k]) for k, v in a["settings"].items() if k in own and v and v != own[k]}


def roster_table(info: classroom.ClassInfo, attempts: list[dict], hints: list, runs: list[dict]) -> pd.DataFrame:
    """A row per learner. Answers from a restored progress file are counted apart ('restored only'): they are
    never first attempts, so never in the score."""
    rows, first = [], classroom.first_attempts(attempts)
    for who in classroom.roster(info.id):
        mine = [a for a in attempts if a["name"] == who.name]
        firsts = {ex: a for (name, ex), a in first.items() if name == who.name}
        restored = {a["exercise"] for a in mine if a["source"] == classroom.RESTORE} - set(firsts)
        right = sum(a["correct"] for a in firsts.values())
        rows.append({"learner": who.name, "answered": len(firsts), "right first time": right,
                     "score": f"{100 * right / len(BANK):.0f}%", "restored only": len(restored),
                     "attempts": len(mine),
                     "hints opened": sum(n == who.name for n, _ in hints),
                     "runs": sum(r.learner == who.name for r in runs),
                     "other settings": sum(bool(differs(a)) for a in firsts.values())})
    return pd.DataFrame(rows, columns=["learner", "answered", "right first time", "score", "restored only", "attempts",
                                       "hints opened", "runs", "other settings"])


def export_csv(attempts: list[dict], runs: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["learner", "exercise", "lab", "answer", "correct", "run's value", "hint opened", "after seeing the "
                "solution", "source", "at (UTC)", "first attempt", "settings differing from the exercise's"])
    firsts = {id(a) for a in classroom.first_attempts(attempts).values()}
    for a in attempts:
        first = id(a) in firsts
        ex = BANK.get(a["exercise"])
        w.writerow([csv_cell(a["name"]), a["exercise"], ex.lab if ex else "", csv_cell(a["answer"]), a["correct"],
                    a["computed"],
                    a["hint_seen"], a["after_solution"], a["source"], iso_time(a["at"]), first,
                    "; ".join(f"{k}={v}" for k, (v, _) in differs(a).items())])
    w.writerow([])
    w.writerow(["learner", "run", "epoch", "train perplexity", "validation perplexity"])
    for r in runs:
        for row in r.history:
            w.writerow([csv_cell(r.learner), csv_cell(r.name), row.epoch, row.train_ppl, row.val_ppl])
    return buf.getvalue()


PICKED = "classroom.picked"   # this session's teacher chose an exercise: the chart stays on it


def follow_the_class(attempts: list[dict], counts: dict) -> str:
    """The exercise the chart shows until the teacher picks one: the one answered last. A chart left on an
    exercise nobody has answered (the page opened before the class began, or a bookmarked link) moves to it as
    answers arrive; once the teacher picks, it stays."""
    latest = max(attempts, key=lambda a: a["at"])["exercise"] if attempts else list(BANK)[-1]
    shown = CONTROLS["shown"]
    if not st.session_state.get(PICKED) and counts.get(url_state.current(shown), 0) == 0 and counts.get(latest):
        url_state.move_to(shown, latest)
    return latest


def exercise_answers(info: classroom.ClassInfo, attempts: list[dict], hints: list, learners: int) -> None:
    first = classroom.first_attempts(attempts)           # restored answers are never in the class's answers
    counts = {k: sum(exercise == k for _, exercise in first) for k in BANK}
    latest = follow_the_class([a for a in attempts if a["source"] != classroom.RESTORE], counts)
    key = url_state.draw(CONTROLS["shown"], choices=list(BANK), default=latest,
                         format_func=lambda k: f"{counts[k]} answered · {BANK[k].question[:70]}",
                         on_change=lambda: st.session_state.update({PICKED: True}))
    ex = BANK[key]
    firsts = {name: a for (name, exercise), a in first.items() if exercise == key}
    hinted = sum(e == key for _, e in hints)
    summary = answers_summary(ex, list(firsts.values()), learners, hinted)
    other = {a["name"]: differs(a) for a in firsts.values() if differs(a)}
    if other:
        summary += " Checked with other settings than the exercise's own (the grade used the exercise's): " + \
            "; ".join(f"{name}: " + ", ".join(f"{k}={v} (exercise: {own})" for k, (v, own) in d.items())
                      for name, d in other.items()) + "."
    st.markdown(f"**{plain(ex.question, 400)}**")
    if firsts:
        show(answers_figure(ex, list(firsts.values())), summary, f"class.{key}")
    else:
        st.caption(summary)


def teacher_view(info: classroom.ClassInfo) -> None:
    st.header(f"Your class: {plain(info.name, 60)}")
    st.markdown(f"Learners join with this link, or by typing the code **{info.join_code}** on the Class page:")
    st.code(f"{base_url()}/classroom?{Url.JOIN}={info.join_code}", language=None, wrap_lines=True)
    st.caption("Keep this page's own address to yourself: it is the teacher's key to the class.")

    @st.fragment(run_every=REFRESH_S)
    def live() -> None:
        attempts, hints = classroom.class_attempts(info.id), classroom.class_hints(info.id)
        runs = run_histories(info)
        table = roster_table(info, attempts, hints, runs)
        st.subheader("Roster")
        st.caption(f"Scores count each learner's first attempt at each exercise, of {len(BANK)}. 'Restored only': "
                   "exercises whose only answers came from an uploaded progress file (regraded, but never a first "
                   "attempt, so not in the score nor in the class's answers). 'Other settings': "
                   "first attempts checked while the lab showed other settings than the exercise's own, so the "
                   "learner was looking at another view (the grade always uses the exercise's own settings). "
                   f"Refreshes every {REFRESH_S} s while this page is open.")
        st.dataframe(table, hide_index=True, width="stretch")
        st.subheader("How the class answered")
        exercise_answers(info, attempts, hints, len(table))
        st.subheader("The class's training runs")
        shown = [r for r in runs if r.history]
        if shown:
            show(runs_figure(shown), f"{len(shown)} run{'s' if len(shown) != 1 else ''}: " + "; ".join(
                f"{r.learner} {r.name} at {r.history[-1].val_ppl:.2f} after epoch {r.history[-1].epoch}"
                for r in shown), "class.runs")
        else:
            st.caption("No runs yet: runs a learner trains in the Training lab appear here.")
        st.download_button("Download everything (.csv)", export_csv(attempts, runs), "rnnlab-class.csv", "text/csv",
                           icon=":material/download:")

    live()


# --- starting and joining -----------------------------------------------------------------------------------

def start_class() -> None:
    st.subheader("Teachers: start a class")
    with st.form("classroom.start"):
        name = st.text_input("Class name", max_chars=classroom.NAME_MAX, placeholder="e.g. Year 12, Tuesday")
        if st.form_submit_button("Start the class", icon=":material/groups:"):
            try:
                info = classroom.create_class(name)
            except ValueError as exc:
                st.error(plain(exc, 300), icon=":material/error:")
                return
            st.query_params.clear()
            st.query_params[Url.TEACHER] = info.teacher_token
            st.rerun()


def join_form(code: str) -> None:
    info = classroom.class_by_code(code)
    if info is None:
        st.error("No class has that code: check it with your teacher (8 letters and digits).", icon=":material/error:")
        return
    who = learner.current()
    if who is not None and who.class_id == info.id:
        st.success(f"You are in {plain(info.name, 60)} as {plain(who.name, 60)}: your answers reach your teacher.",
                   icon=":material/check_circle:")
        return
    st.subheader(f"Join {plain(info.name, 60)}")
    with st.form("classroom.join"):
        name = st.text_input("Your name, as your teacher knows you", max_chars=classroom.NAME_MAX)
        if st.form_submit_button("Join", icon=":material/login:"):
            try:
                token = classroom.join(info.join_code, name, token=who.token if who else None)
            except ValueError as exc:
                st.error(plain(exc, 300), icon=":material/error:")
                return
            learner.become(token)
            st.rerun()


def main() -> None:
    url_state.page("classroom")
    st.title("Class")
    teacher, code = st.query_params.get(Url.TEACHER), st.query_params.get(Url.JOIN)
    if teacher:
        info = classroom.class_by_teacher(teacher)
        if info is None:
            st.error("That teacher link does not open a class on this server.", icon=":material/error:")
        else:
            teacher_view(info)
        return
    st.markdown("A class needs no accounts. A teacher starts one here and gets two links: a **join link** for the "
                "learners and a private **teacher link** that shows who answered what, how their predictions "
                "compared with the runs, and the class's training runs together. A learner joins with a name; "
                "their answers and runs then reach the teacher. Nobody else sees them.")
    if code:
        join_form(code)
    else:
        typed = st.text_input("Learners: your class code", max_chars=12, key="classroom.code")
        if typed:
            join_form(typed)
    start_class()


if __name__ == "__main__":
    main()
