"""Class: a teacher starts a class and gets a join link for learners and a private teacher link; learners join with
a display name; the teacher's view (live: it redraws within about a second of an answer) shows who answered what,
scores out of the assigned exercises, each exercise's overview, first attempts against the runs' values, the
class's training runs and a sweep's chart, with CSV and gradebook exports and the tools to run the class; a
projector view shows one exercise's answers with no names. Records and their numbers: core.classroom."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from core import classroom
from core.exercises import types as core_ex
from core.exercises.bank import BANK
from core.figures import chart_text
from core.i18n import _, ngettext, sentences
from core.labs import Url, classroom as reports, controls_of
from ui import class_tools, learner, url_state
from ui.common import plain
from ui.plots import show
from ui.run_notice import status_word
from ui.session import job_manager

CONTROLS = controls_of("classroom")
RUNS_REFRESH_S = 3     # the runs' chart while a learner's run trains (the rest redraws on a change: class_tools.watch)
summary = classroom.summary
ACTIVE = reports.ACTIVE   # a run still training or waiting: its chart redraws every RUNS_REFRESH_S


def base_url() -> str:
    url = str(st.context.url or "").split("?")[0].rstrip("/")
    return url.rsplit("/", 1)[0] if url.endswith("/classroom") else url


PICKED = "classroom.picked"   # this session's teacher chose an exercise: the chart stays on it


def follow_the_class(attempts: list[dict], counts: dict) -> str:
    """The exercise the chart shows until the teacher picks one: the one answered last, followed as answers
    arrive. The address says which (follow=1 while following), so a reloaded view, or a new session after a lost
    connection, goes on following: it had stopped on the exercise its address named, and answers to others never
    reached the chart (issue 63's stalls). An address naming an exercise without follow=1 (a teacher's chosen
    view, bookmarked) counts as picked when that exercise has answers; one nobody has answered is left for the
    latest."""
    latest = max(attempts, key=lambda a: a["at"])["exercise"] if attempts else list(BANK)[-1]
    shown = CONTROLS["shown"]
    now = url_state.current(shown)
    if PICKED not in st.session_state:
        following = st.query_params.get(Url.FOLLOW) == "1"
        st.session_state[PICKED] = bool(now) and counts.get(now, 0) > 0 and not following
    if not st.session_state[PICKED]:
        if st.query_params.get(Url.FOLLOW) != "1":
            st.query_params[Url.FOLLOW] = "1"
        if counts.get(latest) and now != latest:
            url_state.move_to(shown, latest)
    return latest


def teacher_picks() -> None:
    """The teacher chose an exercise: the chart stays on it, and the address says so (no follow=1)."""
    st.session_state[PICKED] = True
    st.query_params.pop(Url.FOLLOW, None)


def exercise_answers(attempts: list[dict], hints: list, learners: int, names: bool = True) -> None:
    first = classroom.first_attempts(attempts)           # restored answers are never in the class's answers
    counts = {k: sum(exercise == k for name, exercise in first) for k in BANK}
    latest = follow_the_class([a for a in attempts if a["source"] != classroom.RESTORE], counts)
    pick, follow = st.columns([3, 1], vertical_alignment="bottom")
    with pick:
        key = url_state.draw(CONTROLS["shown"], choices=list(BANK), default=latest,
                             format_func=lambda k: _("{n} answered · {question}").format(
                                 n=counts[k], question=_(BANK[k].question)[:70]),
                             on_change=teacher_picks)
    follow.button(_("Follow the class"), key="class.follow", icon=":material/my_location:",
                  disabled=not st.session_state.get(PICKED), on_click=lambda: st.session_state.update({PICKED: False}),
                  help=_("Show whichever exercise was answered last, as answers arrive."))
    ex = BANK[key]
    firsts = [a for (name, exercise), a in first.items() if exercise == key]
    summary_text = reports.answers_summary(ex, firsts, learners, sum(e == key for name, e in hints), names)
    other = {a["name"]: d for a in firsts if (d := reports.differs(a))}
    if other and names:
        each = _("; ").join(f"{name}: " + ", ".join(_("{key}={value} (exercise: {own})").format(key=k, value=v, own=own)
                                                    for k, (v, own) in d.items()) for name, d in other.items())
        summary_text = sentences(summary_text, _("Checked with other settings than the exercise's own (the grade used "
                                                 "the exercise's): {each}.").format(each=each))
    if names:
        st.markdown(f"**{plain(_(ex.question), 400)}**")
    else:
        st.subheader(plain(_(ex.question), 400), anchor=False)
    if firsts and not names:
        headline(ex, firsts, learners)
    figure = reports.answers_figure if names else reports.spread_figure   # drawn empty too: the first answer shows
    show(figure(ex, firsts), summary_text, f"class.{key}")


def headline(ex: core_ex.Exercise, firsts: list[dict], learners: int) -> None:
    """The projector's numbers, large: how many answered, how many right first time, the run's answer."""
    a, b, c = st.columns(3)
    a.metric(_("Answered"), _("{n} of {learners}").format(n=len(firsts), learners=learners))
    b.metric(_("Right first time"), f"{sum(x['correct'] for x in firsts)}")
    computed = firsts[0]["computed"]
    c.metric(_("The run's answer"), f"{float(computed):.4g}{' ' + _(ex.unit) if ex.unit else ''}"
             if ex.kind == core_ex.NUMBER else chart_text(_(str(computed)), 40))


def live_runs(info: classroom.ClassInfo) -> None:
    """class_runs, read again on each of its fragment's reruns (while a learner's run trains); a change in the
    class reruns the whole view at once."""
    class_tools.rerun_if_changed(info, since_read=True)
    class_runs(reports.run_histories(info))


def runs_going(runs: list[classroom.ClassRun]) -> None:
    """The class's runs training or waiting now, each with a Stop for the teacher (what it learnt is kept)."""
    going = [r for r in runs if r.status in ACTIVE]
    if not going:
        return
    st.markdown(_("**Training or waiting now: {n}**").format(n=len(going)))
    for r in going:
        text, stop = st.columns([4, 1], vertical_alignment="center")
        said = (_("{learner}: {run}, {status}, {epochs} epochs asked, epoch {epoch} done") if r.history else
                _("{learner}: {run}, {status}, {epochs} epochs asked"))
        text.markdown(said.format(learner=plain(r.learner, 40), run=plain(r.name, 60),
                                  status=plain(status_word(r.status), 20), epochs=plain(r.config.get("epochs", "?"), 10),
                                  epoch=r.history[-1].epoch if r.history else 0))
        if stop.button(_("Stop"), key=f"class.stop.{r.run_key}", icon=":material/stop:",
                       help=_("Stop this run: what it learnt so far is kept, and the next run in the queue starts.")):
            job_manager().stop_key(r.run_key)
            st.toast(_("Asked {learner}'s run to stop.").format(learner=plain(r.learner, 40)), icon=":material/stop:")


def class_runs(runs: list[classroom.ClassRun]) -> None:
    """The runs going now (with Stop), the class's runs on one chart, and a sweep's chart: final perplexity
    against each setting that differs."""
    runs_going(runs)
    shown = [r for r in runs if r.history]
    if not shown:
        st.caption(_("No runs yet: runs a learner trains in the Training lab appear here."))
        return
    keys = summary.varying([r.config for r in shown])
    show(reports.runs_figure(shown), reports.runs_summary(shown), "class.runs")
    swept = [k for k in keys if summary.sweep_points(shown, k)]
    if swept:
        key = st.radio(_("Against"), swept, horizontal=True, key="class.sweep.key") if len(swept) > 1 else swept[0]
        points = summary.sweep_points(shown, key)
        st.markdown(_("**Final validation perplexity against {key}**: one point per learner (their latest run); lower "
                      "is better.").format(key=plain(key, 40)))
        show(reports.sweep_figure(points, key), reports.sweep_summary(points, key), "class.sweep")


def teacher_view(info: classroom.ClassInfo) -> None:
    class_tools.watch(info)
    base = base_url()
    st.header(_("Your class: {name}").format(name=plain(info.name, 60)))
    st.markdown((_("Learners join with this link, or by typing the code **{code}** on the Class page:") if info.open else
                 _("Learners join with this link, or by typing the code **{code}** on the Class page (**joining is "
                   "closed**: open it under 'Run the class'):")).format(code=info.join_code))
    st.code(f"{base}/classroom?{Url.JOIN}={info.join_code}", language=None, wrap_lines=True)
    class_tools.teacher_link(info, base)
    st.button(_("Projector view"), key="class.present", icon=":material/co_present:",
              on_click=lambda: st.query_params.update({Url.PRESENT: "1"}),
              help=_("One exercise's answers, large, with no names and no key: for the screen at the front."))
    attempts, hints = classroom.class_attempts(info.id), classroom.class_hints(info.id)
    assigned = classroom.assigned(info.id)
    histories = reports.run_histories(info)
    table = pd.DataFrame(reports.roster_rows(info, attempts, hints, histories, assigned), columns=reports.ROSTER_COLUMNS)
    st.subheader(_("Roster"))
    st.caption(sentences((_("Scores count each learner's first attempt at the {n} assigned exercises.") if assigned
                          else _("Scores count each learner's first attempt at each of the {n} exercises (assign some "
                                 "under 'Run the class' to score out of those).")).format(
                             n=len(assigned) if assigned else len(BANK)), _(
               "'Restored only': exercises whose only answers came from an uploaded progress file (regraded, but "
               "never a first attempt, so not in the score nor in the class's answers). 'Other settings': first "
               "attempts checked while the lab showed other settings than the exercise's own (the grade always uses "
               "the exercise's own). 'Figures shown': first attempts (at the assigned exercises) checked with the "
               "lab's figures and readings on the page, which may state the answer; an assignment link holds them "
               "back until the first Check. This view redraws within a second of any answer.")))
    st.dataframe(table.rename(columns=_), hide_index=True, width="stretch")
    st.subheader(_("Each exercise"))
    overview = pd.DataFrame(reports.overview_rows(info, attempts, hints, len(table), assigned),
                            columns=reports.OVERVIEW_COLUMNS)
    st.dataframe(overview.rename(columns=_), hide_index=True, width="stretch",
                 column_config={_("exercise"): st.column_config.TextColumn(width="large")})
    st.caption(_("Time to answer: from the card the learner answered first appearing on their page to their first "
                 "Check, the median over those who answered."))
    st.subheader(_("How the class answered"))
    exercise_answers(attempts, hints, len(table))
    st.subheader(_("The class's training runs"))
    if any(r.status in ACTIVE for r in histories):
        st.fragment(run_every=RUNS_REFRESH_S)(live_runs)(info)
    else:
        class_runs(histories)
    d1, d2 = st.columns(2)   # the CSVs are written when clicked, not on every rerun
    d1.download_button(_("Everything (.csv)"), lambda: reports.export_csv(attempts, histories), "rnnlab-class.csv", "text/csv",
                       icon=":material/download:", on_click="ignore")
    d2.download_button(_("Gradebook (.csv)"), lambda: reports.gradebook_csv(info, attempts, assigned), "rnnlab-gradebook.csv",
                       "text/csv", icon=":material/grading:", on_click="ignore",
                       help=_("A row per learner, a column per exercise (1 right first time, 0 wrong, empty not "
                              "answered), the total and what it is out of."))
    st.subheader(_("Run the class"))
    with st.expander(_("Assign exercises, open or close joining, rename, remove, resume codes, reset"),
                     icon=":material/tune:"):
        class_tools.assignment(info, base)
        class_tools.manage(info, list(table["learner"]))
    with st.expander(_("Training limits: epochs a run, runs at once"), icon=":material/speed:"):
        class_tools.training_limits(info)
    with st.expander(_("Hand out a sweep: each learner trains with another value"), icon=":material/linear_scale:"):
        class_tools.sweep_builder(base)
    class_tools.drawn()


def projector_view(info: classroom.ClassInfo) -> None:
    """For the screen at the front: how to join, and one exercise's answers, large, with no names and no key."""
    class_tools.watch(info)
    st.header(plain(info.name, 60))
    st.subheader(_("Join: {url}/classroom · code **{code}**").format(url=plain(base_url(), 80), code=info.join_code),
                 anchor=False)
    attempts, hints = classroom.class_attempts(info.id), classroom.class_hints(info.id)
    exercise_answers(attempts, hints, len(classroom.roster(info.id)), names=False)
    st.button(_("Leave the projector view"), key="class.unpresent", icon=":material/close_fullscreen:",
              on_click=lambda: st.query_params.pop(Url.PRESENT, None))
    class_tools.drawn()


# --- starting and joining -----------------------------------------------------------------------------------

def start_class() -> None:
    st.subheader(_("Teachers: start a class"))
    with st.form("classroom.start"):
        name = st.text_input(_("Class name"), max_chars=classroom.NAME_MAX, placeholder=_("e.g. Year 12, Tuesday"))
        if st.form_submit_button(_("Start the class"), icon=":material/groups:"):
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
        st.error(_("No class has that code: check it with your teacher (8 letters and digits)."),
                 icon=":material/error:")
        return
    who = learner.current()
    if who is not None and who.class_id == info.id:
        st.success(_("You are in {name} as {who}: your answers reach your teacher.").format(
            name=plain(info.name, 60), who=plain(who.name, 60)), icon=":material/check_circle:")
        return
    st.subheader(_("Join {name}").format(name=plain(info.name, 60)))
    with st.form("classroom.join"):
        name = st.text_input(_("Your name, as your teacher knows you"), max_chars=classroom.NAME_MAX)
        if st.form_submit_button(_("Join"), icon=":material/login:"):
            try:
                token = classroom.join(info.join_code, name, token=who.token if who else None)
            except ValueError as exc:
                st.error(plain(exc, 300), icon=":material/error:")
                return
            learner.become(token)
            st.rerun()


def main() -> None:
    url_state.page("classroom")
    st.title(_("Class"))
    try:
        teaching = st.query_params.get(Url.TEACHER)
        info = class_tools.teacher_class()
        if info is not None:
            (projector_view if st.query_params.get(Url.PRESENT) else teacher_view)(info)
            return
        if teaching:
            st.error(_("That teacher link does not open a class on this server."), icon=":material/error:")
            return
        welcome()
    except classroom.StorageFault as exc:
        if exc.what == classroom.faults.DAMAGED:
            class_tools.damaged_records(exc)
        else:
            st.error(plain(exc, 400), icon=":material/error:")
    except ValueError as exc:   # the records cannot be read (a bad runs folder): said in words, no crash box
        st.error(plain(exc, 300), icon=":material/error:")


def welcome() -> None:
    code = st.query_params.get(Url.JOIN)
    st.markdown(_("A class needs no accounts. A teacher starts one here and gets two links: a **join link** for the "
                "learners and a private **teacher link** that shows who answered what, how their predictions "
                "compared with the runs, and the class's training runs together. A learner joins with a name; "
                "their answers and runs then reach the teacher. Nobody else sees them."))
    if code:
        join_form(code)
    else:
        typed = st.text_input(_("Learners: your class code"), max_chars=12, key="classroom.code")
        if typed:
            join_form(typed)
    start_class()


if __name__ == "__main__":
    main()
