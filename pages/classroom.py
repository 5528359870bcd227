"""Class: a teacher starts a class and gets a join link for learners and a private teacher link; learners join with
a display name; the teacher's view (live: it redraws within about a second of an answer) shows who answered what,
scores out of the assigned exercises, each exercise's overview, first attempts against the runs' values, the
class's training runs and a sweep's chart, with CSV and gradebook exports and the tools to run the class; a
projector view shows one exercise's answers with no names. Records and their numbers: core.classroom."""
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
from core.runs.record import Status
from ui import class_tools, learner, url_state
from core.figures import chart_text, csv_cell, style
from ui.common import iso_time, lab_title, plain
from ui.plots import show

CONTROLS = controls_of("classroom")
RUNS_REFRESH_S = 3     # the runs' chart while a learner's run trains (the rest redraws on a change: class_tools.watch)
summary = classroom.summary
ACTIVE = {str(s) for s in Status if s.active}   # a run still training: its chart redraws every RUNS_REFRESH_S


def base_url() -> str:
    url = str(st.context.url or "").split("?")[0].rstrip("/")
    return url.rsplit("/", 1)[0] if url.endswith("/classroom") else url


# --- figures (data in, figure out) ------------------------------------------------------------------------

GREEN, RED, BLUE, GREY = "#009E73", "#D55E00", "#0072B2", "#9aa5b1"


def choice_figure(ex: core_ex.Exercise, firsts: list[dict], height: int = 320) -> go.Figure:
    """How many learners gave each option first; the run's answer in green."""
    computed = firsts[0]["computed"] if firsts else None
    counts = [sum(a["answer"] == o for a in firsts) for o in ex.options]
    fig = go.Figure(go.Bar(x=[chart_text(o) for o in ex.options], y=counts,
                           marker_color=[GREEN if o == computed else GREY for o in ex.options]))
    fig = style(fig, None, "first answer (green: what the run computed)", "learners", height=height)
    # whole learners: ticks at whole numbers from 0 (no "1.5 learners")
    return fig.update_yaxes(rangemode="tozero", tickformat=",d", dtick=1 if max(counts, default=0) <= 10 else None)


def _unit(ex: core_ex.Exercise) -> str:
    return f" ({ex.unit})" if ex.unit else ""


def drawable(firsts: list[dict]) -> tuple[list[dict], list[dict]]:
    """The numeric first answers split into those drawn and those too far out to draw (listed in words)."""
    values = [a["answer"] for a in firsts]
    far = set(summary.far_answers(values, firsts[0]["computed"] if firsts else None))
    return [a for i, a in enumerate(firsts) if i not in far], [a for i, a in enumerate(firsts) if i in far]


def answers_figure(ex: core_ex.Exercise, firsts: list[dict]) -> go.Figure:
    """The class's first answers to one exercise against the value its run computed, one marker per learner."""
    if ex.kind == core_ex.CHOICE:
        return choice_figure(ex, firsts)
    shown, _ = drawable(firsts)
    fig = go.Figure(go.Scatter(x=[float(a["answer"]) for a in shown], y=[chart_text(a["name"]) for a in shown],
                               mode="markers", name="first answers",
                               marker=dict(size=11, color=[GREEN if a["correct"] else RED for a in shown])))
    if firsts:
        fig.add_vline(x=float(firsts[0]["computed"]), line_dash="dash", line_color=BLUE)
    return style(fig, None, f"first answer{_unit(ex)}; dashed: the run's value", "learner",
                 height=max(260, 40 + 28 * len(shown)))


def spread_figure(ex: core_ex.Exercise, firsts: list[dict]) -> go.Figure:
    """For the projector: the same answers with no names (a histogram of numbers, a bar per option), large."""
    if ex.kind == core_ex.CHOICE:
        return large(choice_figure(ex, firsts, height=520))
    shown, _ = drawable(firsts)
    values = [float(a["answer"]) for a in shown] + ([float(firsts[0]["computed"])] if firsts else [])
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    bins = dict(start=lo, end=hi + (hi - lo) / 20 if hi > lo else lo + 1, size=(hi - lo) / 20 if hi > lo else 1)
    fig = go.Figure([go.Histogram(x=[float(a["answer"]) for a in shown if bool(a["correct"]) == ok], name=name,
                                  marker_color=colour, xbins=bins)
                     for ok, name, colour in ((True, "right", GREEN), (False, "not right", RED))])
    if firsts:
        fig.add_vline(x=float(firsts[0]["computed"]), line_dash="dash", line_color=BLUE, line_width=3)
    fig = style(fig, None, f"first answer{_unit(ex)}; dashed: the run's value", "learners", height=520)
    fig.update_layout(barmode="stack")
    return large(fig.update_yaxes(tickformat=",d", dtick=1 if len(shown) <= 10 else None, rangemode="tozero"))


def large(fig: go.Figure, size: int = 20) -> go.Figure:
    """Text readable from the back of a room."""
    fig.update_layout(font=dict(size=size), legend=dict(font=dict(size=size)))
    fig.update_xaxes(tickfont=dict(size=size), title_font=dict(size=size))
    return fig.update_yaxes(tickfont=dict(size=size), title_font=dict(size=size))


def answers_summary(ex: core_ex.Exercise, firsts: list[dict], learners: int, hinted: int, names: bool = True) -> str:
    if not firsts:
        return f"No one of the {learners} learners has answered this one yet."
    right = sum(a["correct"] for a in firsts)
    text = (f"{len(firsts)} of {learners} learners answered; {right} right on their first attempt; "
            f"{hinted} opened the hint.")
    computed = firsts[0]["computed"]
    if ex.kind == core_ex.NUMBER:
        mid = statistics.median(float(a["answer"]) for a in firsts)
        text += f" The run computed {float(computed):.4g}; the median prediction was {mid:.4g}."
        _, far = drawable(firsts)
        if far:
            text += (f" Too far out to draw ({len(far)}): " + "; ".join(
                (f"{a['name']} " if names else "") + f"{float(a['answer']):.4g}" for a in far) + ".")
    else:
        text += f" The run's answer: {computed}."
    return text


def run_label(r: classroom.ClassRun, keys: list[str]) -> str:
    """A run in the legend: the learner and the settings in which the class's runs differ (else the run's name)."""
    return f"{r.learner}: {summary.settings_text(r.config, keys) if keys else r.name}"


def runs_figure(runs: list[classroom.ClassRun]) -> go.Figure:
    """Every class run's validation perplexity by epoch, one line per run, named by what differs between runs."""
    keys = summary.varying([r.config for r in runs])
    fig = go.Figure()
    for r in runs:
        fig.add_trace(go.Scatter(x=[row.epoch for row in r.history], y=[row.val_ppl for row in r.history],
                                 mode="lines+markers", name=chart_text(run_label(r, keys), 60)))
    fig = style(fig, None, "epoch", "validation perplexity", height=380, log_y=True)
    return fig.update_xaxes(dtick=1) if max((len(r.history) for r in runs), default=0) <= 12 else fig


def sweep_figure(points: list[tuple[str, float, float]], key: str) -> go.Figure:
    """Final validation perplexity against the swept setting, one point per learner (their latest run)."""
    fig = go.Figure(go.Scatter(x=[p[1] for p in points], y=[p[2] for p in points], mode="markers+text",
                               text=[chart_text(p[0], 20) for p in points], textposition="top center",
                               marker=dict(size=12, color=BLUE), name="final perplexity"))
    values = [p[1] for p in points]
    log_x = min(values) > 0 and max(values) / min(values) >= 10
    return style(fig, None, key, "final validation perplexity", height=380, log_y=True, log_x=log_x)


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
            kept = len(r.history)
            r.history, r.status = list(live.progress.history), str(live.status)
            if not live.status.active and kept != len(r.history):   # copied once, not on every rerun
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


def roster_table(info: classroom.ClassInfo, attempts: list[dict], hints: list, runs: list,
                 assigned: set[str] = frozenset()) -> pd.DataFrame:
    """A row per learner, scored out of the assigned exercises (else all). Answers from a restored progress file
    are counted apart ('restored only'): they are never first attempts, so never in the score."""
    rows, first = [], classroom.first_attempts(attempts)
    for who in classroom.roster(info.id):
        mine = [a for a in attempts if a["name"] == who.name]
        firsts = {ex: a for (name, ex), a in first.items() if name == who.name}
        restored = {a["exercise"] for a in mine if a["source"] == classroom.RESTORE} - set(firsts)
        score = summary.score(firsts, list(BANK), assigned)
        rows.append({"learner": who.name, "answered": len(firsts), "right first time": score.right,
                     "out of": score.out_of, "score": score.text(), "restored only": len(restored),
                     "attempts": len(mine), "hints opened": sum(n == who.name for n, _ in hints),
                     "runs": sum(r.learner == who.name for r in runs),
                     "other settings": sum(bool(differs(a)) for a in firsts.values())})
    return pd.DataFrame(rows, columns=["learner", "answered", "right first time", "out of", "score", "restored only",
                                       "attempts", "hints opened", "runs", "other settings"])


def overview_table(info: classroom.ClassInfo, attempts: list[dict], hints: list, learners: int,
                   assigned: set[str]) -> pd.DataFrame:
    """A row per exercise (the assigned ones, else all): answered, right first time, the share who opened the
    hint, the median time from first seeing it to the first Check."""
    keys = [k for k in BANK if k in assigned] if assigned else list(BANK)
    rows = summary.overview(keys, classroom.first_attempts(attempts), hints, classroom.class_opened(info.id),
                            learners)
    return pd.DataFrame([{"exercise": BANK[r["exercise"]].question[:80], "lab": lab_title(BANK[r["exercise"]].lab),
                          "answered": r["answered"], "right first time": r["right first time"],
                          "opened the hint": f"{100 * r['hint opened']:.0f}%",
                          "median time to answer": "" if r["median seconds"] is None else
                          f"{r['median seconds'] / 60:.1f} min" if r["median seconds"] >= 90 else
                          f"{r['median seconds']:.0f} s"} for r in rows])


def export_csv(attempts: list[dict], runs: list) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["learner", "exercise", "lab", "answer", "correct", "run's value", "hint opened", "after seeing the "
                "solution", "source", "at (UTC)", "first attempt", "settings differing from the exercise's"])
    firsts = {id(a) for a in classroom.first_attempts(attempts).values()}
    for a in attempts:
        ex = BANK.get(a["exercise"])
        w.writerow([csv_cell(a["name"]), a["exercise"], ex.lab if ex else "", csv_cell(a["answer"]), a["correct"],
                    a["computed"], a["hint_seen"], a["after_solution"], a["source"], iso_time(a["at"]),
                    id(a) in firsts, "; ".join(f"{k}={v}" for k, (v, _) in differs(a).items())])
    w.writerow([])
    keys = summary.varying([r.config for r in runs])
    w.writerow(["learner", "run", "epoch", "train perplexity", "validation perplexity", *keys, "settings"])
    for r in runs:
        every = "; ".join(f"{k}={v}" for k, v in r.config.items())
        for row in r.history:
            w.writerow([csv_cell(r.learner), csv_cell(r.name), row.epoch, row.train_ppl, row.val_ppl,
                        *(csv_cell(r.config.get(k)) for k in keys), csv_cell(every)])
    return buf.getvalue()


def gradebook_csv(info: classroom.ClassInfo, attempts: list[dict], assigned: set[str]) -> str:
    """A row per learner, a column per exercise (the assigned ones, else all): 1 right first time, 0 wrong, empty
    not answered; then the total and what it is out of, as a learning platform imports a gradebook."""
    keys = [k for k in BANK if k in assigned] if assigned else list(BANK)
    names = [who.name for who in classroom.roster(info.id)]
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["learner", *keys, "total", "out of"])
    for row in summary.gradebook(names, keys, classroom.first_attempts(attempts)):
        w.writerow([csv_cell(row["learner"]), *("" if row[k] is None else row[k] for k in keys), row["total"],
                    row["out of"]])
    return buf.getvalue()


PICKED = "classroom.picked"   # this session's teacher chose an exercise: the chart stays on it


def follow_the_class(attempts: list[dict], counts: dict) -> str:
    """The exercise the chart shows until the teacher picks one: the one answered last, followed as answers
    arrive. An exercise in the address that has answers counts as picked; one nobody has answered (a page opened
    before the class began) is left for the latest."""
    latest = max(attempts, key=lambda a: a["at"])["exercise"] if attempts else list(BANK)[-1]
    shown = CONTROLS["shown"]
    now = url_state.current(shown)
    if PICKED not in st.session_state:
        st.session_state[PICKED] = bool(now) and counts.get(now, 0) > 0
    if not st.session_state[PICKED] and counts.get(latest) and now != latest:
        url_state.move_to(shown, latest)
    return latest


def exercise_answers(attempts: list[dict], hints: list, learners: int, names: bool = True) -> None:
    first = classroom.first_attempts(attempts)           # restored answers are never in the class's answers
    counts = {k: sum(exercise == k for _, exercise in first) for k in BANK}
    latest = follow_the_class([a for a in attempts if a["source"] != classroom.RESTORE], counts)
    pick, follow = st.columns([3, 1], vertical_alignment="bottom")
    with pick:
        key = url_state.draw(CONTROLS["shown"], choices=list(BANK), default=latest,
                             format_func=lambda k: f"{counts[k]} answered · {BANK[k].question[:70]}",
                             on_change=lambda: st.session_state.update({PICKED: True}))
    follow.button("Follow the class", key="class.follow", icon=":material/my_location:",
                  disabled=not st.session_state.get(PICKED), on_click=lambda: st.session_state.update({PICKED: False}),
                  help="Show whichever exercise was answered last, as answers arrive.")
    ex = BANK[key]
    firsts = [a for (name, exercise), a in first.items() if exercise == key]
    summary_text = answers_summary(ex, firsts, learners, sum(e == key for _, e in hints), names)
    other = {a["name"]: d for a in firsts if (d := differs(a))}
    if other and names:
        summary_text += " Checked with other settings than the exercise's own (the grade used the exercise's): " + \
            "; ".join(f"{name}: " + ", ".join(f"{k}={v} (exercise: {own})" for k, (v, own) in d.items())
                      for name, d in other.items()) + "."
    if names:
        st.markdown(f"**{plain(ex.question, 400)}**")
    else:
        st.subheader(plain(ex.question, 400), anchor=False)
    if firsts and not names:
        headline(ex, firsts, learners)
    figure = answers_figure if names else spread_figure   # drawn empty too: the first answer then shows at once
    show(figure(ex, firsts), summary_text, f"class.{key}")


def headline(ex: core_ex.Exercise, firsts: list[dict], learners: int) -> None:
    """The projector's numbers, large: how many answered, how many right first time, the run's answer."""
    a, b, c = st.columns(3)
    a.metric("Answered", f"{len(firsts)} of {learners}")
    b.metric("Right first time", f"{sum(x['correct'] for x in firsts)}")
    computed = firsts[0]["computed"]
    c.metric("The run's answer", f"{float(computed):.4g}{' ' + ex.unit if ex.unit else ''}"
             if ex.kind == core_ex.NUMBER else chart_text(computed, 40))


def live_runs(info: classroom.ClassInfo) -> None:
    """class_runs, read again on each of its fragment's reruns (while a learner's run trains)."""
    class_runs(run_histories(info))


def class_runs(runs: list[classroom.ClassRun]) -> None:
    """The class's runs on one chart, and a sweep's chart: final perplexity against each setting that differs."""
    shown = [r for r in runs if r.history]
    if not shown:
        st.caption("No runs yet: runs a learner trains in the Training lab appear here.")
        return
    keys = summary.varying([r.config for r in shown])
    show(runs_figure(shown), f"{len(shown)} run{'s' if len(shown) != 1 else ''}: " + "; ".join(
        f"{run_label(r, keys)} at {r.history[-1].val_ppl:.2f} after epoch {r.history[-1].epoch}" for r in shown),
        "class.runs")
    swept = [k for k in keys if summary.sweep_points(shown, k)]
    if swept:
        key = st.radio("Against", swept, horizontal=True, key="class.sweep.key") if len(swept) > 1 else swept[0]
        points = summary.sweep_points(shown, key)
        st.markdown(f"**Final validation perplexity against {plain(key, 40)}**: one point per learner (their latest "
                    "run); lower is better.")
        show(sweep_figure(points, key), f"Final validation perplexity against {key}, each learner's latest run: " +
             "; ".join(f"{name} {value:g}: {ppl:.2f}" for name, value, ppl in points) + ".", "class.sweep")


def teacher_view(info: classroom.ClassInfo) -> None:
    class_tools.watch(info)
    base = base_url()
    st.header(f"Your class: {plain(info.name, 60)}")
    st.markdown(f"Learners join with this link, or by typing the code **{info.join_code}** on the Class page" +
                ("" if info.open else " (**joining is closed**: open it under 'Run the class')") + ":")
    st.code(f"{base}/classroom?{Url.JOIN}={info.join_code}", language=None, wrap_lines=True)
    class_tools.teacher_link(info, base)
    st.button("Projector view", key="class.present", icon=":material/co_present:",
              on_click=lambda: st.query_params.update({Url.PRESENT: "1"}),
              help="One exercise's answers, large, with no names and no key: for the screen at the front.")
    attempts, hints = classroom.class_attempts(info.id), classroom.class_hints(info.id)
    assigned = classroom.assigned(info.id)
    histories = run_histories(info)
    table = roster_table(info, attempts, hints, histories, assigned)
    st.subheader("Roster")
    st.caption((f"Scores count each learner's first attempt at the {len(assigned)} assigned exercises" if assigned
                else f"Scores count each learner's first attempt at each of the {len(BANK)} exercises (assign some "
                     "under 'Run the class' to score out of those)") +
               ". 'Restored only': exercises whose only answers came from an uploaded progress file (regraded, but "
               "never a first attempt, so not in the score nor in the class's answers). 'Other settings': first "
               "attempts checked while the lab showed other settings than the exercise's own (the grade always uses "
               "the exercise's own). This view redraws within a second of any answer.")
    st.dataframe(table, hide_index=True, width="stretch")
    st.subheader("Each exercise")
    st.dataframe(overview_table(info, attempts, hints, len(table), assigned), hide_index=True, width="stretch",
                 column_config={"exercise": st.column_config.TextColumn(width="large")})
    st.caption("Time to answer: from the learner first seeing the exercise on a page to their first Check, the "
               "median over those who answered.")
    st.subheader("How the class answered")
    exercise_answers(attempts, hints, len(table))
    st.subheader("The class's training runs")
    if any(r.status in ACTIVE for r in histories):
        st.fragment(run_every=RUNS_REFRESH_S)(live_runs)(info)
    else:
        class_runs(histories)
    d1, d2 = st.columns(2)   # the CSVs are written when clicked, not on every rerun
    d1.download_button("Everything (.csv)", lambda: export_csv(attempts, histories), "rnnlab-class.csv", "text/csv",
                       icon=":material/download:", on_click="ignore")
    d2.download_button("Gradebook (.csv)", lambda: gradebook_csv(info, attempts, assigned), "rnnlab-gradebook.csv",
                       "text/csv", icon=":material/grading:", on_click="ignore",
                       help="A row per learner, a column per exercise (1 right first time, 0 wrong, empty not "
                            "answered), the total and what it is out of.")
    st.subheader("Run the class")
    with st.expander("Assign exercises, open or close joining, rename, remove, reset", icon=":material/tune:"):
        class_tools.assignment(info, base)
        class_tools.manage(info, list(table["learner"]))
    with st.expander("Hand out a sweep: each learner trains with another value", icon=":material/linear_scale:"):
        class_tools.sweep_builder(base)
    class_tools.drawn()


def projector_view(info: classroom.ClassInfo) -> None:
    """For the screen at the front: how to join, and one exercise's answers, large, with no names and no key."""
    class_tools.watch(info)
    st.header(plain(info.name, 60))
    st.subheader(f"Join: {plain(base_url(), 80)}/classroom · code **{info.join_code}**", anchor=False)
    attempts, hints = classroom.class_attempts(info.id), classroom.class_hints(info.id)
    exercise_answers(attempts, hints, len(classroom.roster(info.id)), names=False)
    st.button("Leave the projector view", key="class.unpresent", icon=":material/close_fullscreen:",
              on_click=lambda: st.query_params.pop(Url.PRESENT, None))
    class_tools.drawn()


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
    try:
        teaching = st.query_params.get(Url.TEACHER)
        info = class_tools.teacher_class()
        if info is not None:
            (projector_view if st.query_params.get(Url.PRESENT) else teacher_view)(info)
            return
        if teaching:
            st.error("That teacher link does not open a class on this server.", icon=":material/error:")
            return
        welcome()
    except ValueError as exc:   # the records cannot be read (a bad runs folder): said in words, no crash box
        st.error(plain(exc, 300), icon=":material/error:")


def welcome() -> None:
    code = st.query_params.get(Url.JOIN)
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
