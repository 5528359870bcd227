"""The Class page's numbers, figures, tables and exports: what the teacher's view and the projector show of a class's
answers and runs, built from its records (core.classroom) and the exercise bank. Data in, figures and rows out, no
Streamlit: pages/classroom.py draws them."""
from __future__ import annotations

import csv
import io
import math
import statistics
from dataclasses import dataclass

import plotly.graph_objects as go

from core.i18n import N_, _, listing, ngettext, sentences
from core import classroom
from core.classroom import summary
from core.exercises import types as core_ex
from core.exercises.bank import BANK
from core.figures import chart_text, csv_cell, iso_time, log_ticks, number_ticks, style
from core.runs import tasks
from core.runs.record import Status
from core.settings import setting

KEY = "classroom"
TITLE = N_("Class")   # the menu shows it translated (core.i18n)
ICON = ":material/groups:"
BLURB = ""


@dataclass(frozen=True)
class Settings:
    shown: str = setting("", N_("Exercise"), N_("The exercise whose answers the chart shows."), widget="select",
                         url="show")                               # choices: the exercise bank


def title_of(lab: str) -> str:
    from core.labs import lab_title     # the registry imports this module: read it when called
    return lab_title(lab)


GREEN, RED, BLUE, GREY = "#009E73", "#D55E00", "#0072B2", "#9aa5b1"


def choice_figure(ex: core_ex.Exercise, firsts: list[dict], height: int = 320) -> go.Figure:
    """How many learners gave each option first; the run's answer in green."""
    computed = firsts[0]["computed"] if firsts else None
    counts = [sum(a["answer"] == o for a in firsts) for o in ex.options]
    fig = go.Figure(go.Bar(x=[chart_text(o) for o in ex.options], y=counts,
                           marker_color=[GREEN if o == computed else GREY for o in ex.options]))
    fig = style(fig, None, _("first answer (green: what the run computed)"), _("learners"), height=height)
    # whole learners: ticks at whole numbers from 0 (no "1.5 learners")
    return fig.update_yaxes(rangemode="tozero", tickformat=",d", dtick=1 if max(counts, default=0) <= 10 else None)


def _answer_axis(ex: core_ex.Exercise) -> str:
    return (_("first answer ({unit}); dashed: the run's value").format(unit=_(ex.unit)) if ex.unit else
            _("first answer; dashed: the run's value"))


def drawable(firsts: list[dict]) -> tuple[list[dict], list[dict]]:
    """The numeric first answers split into those drawn and those too far out to draw (listed in words)."""
    values = [a["answer"] for a in firsts]
    far = set(summary.far_answers(values, firsts[0]["computed"] if firsts else None))
    return [a for i, a in enumerate(firsts) if i not in far], [a for i, a in enumerate(firsts) if i in far]


def answers_figure(ex: core_ex.Exercise, firsts: list[dict]) -> go.Figure:
    """The class's first answers to one exercise against the value its run computed, one marker per learner."""
    if ex.kind == core_ex.CHOICE:
        return choice_figure(ex, firsts)
    shown = drawable(firsts)[0]
    fig = go.Figure(go.Scatter(x=[float(a["answer"]) for a in shown], y=[chart_text(a["name"]) for a in shown],
                               mode="markers", name=_("first answers"),
                               marker=dict(size=11, color=[GREEN if a["correct"] else RED for a in shown])))
    if firsts:
        fig.add_vline(x=float(firsts[0]["computed"]), line_dash="dash", line_color=BLUE)
    return style(fig, None, _answer_axis(ex), _("learner"),
                 height=max(260, 40 + 28 * len(shown)))


def spread_figure(ex: core_ex.Exercise, firsts: list[dict]) -> go.Figure:
    """For the projector: the same answers with no names (a histogram of numbers, a bar per option), large."""
    if ex.kind == core_ex.CHOICE:
        return large(choice_figure(ex, firsts, height=520))
    shown = drawable(firsts)[0]
    values = [float(a["answer"]) for a in shown] + ([float(firsts[0]["computed"])] if firsts else [])
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    bins = dict(start=lo, end=hi + (hi - lo) / 20 if hi > lo else lo + 1, size=(hi - lo) / 20 if hi > lo else 1)
    fig = go.Figure([go.Histogram(x=[float(a["answer"]) for a in shown if bool(a["correct"]) == ok], name=name,
                                  marker_color=colour, xbins=bins)
                     for ok, name, colour in ((True, _("right"), GREEN), (False, _("not right"), RED))])
    if firsts:
        fig.add_vline(x=float(firsts[0]["computed"]), line_dash="dash", line_color=BLUE, line_width=3)
    fig = style(fig, None, _answer_axis(ex), _("learners"), height=520)
    fig.update_layout(barmode="stack")
    return large(fig.update_yaxes(tickformat=",d", dtick=1 if len(shown) <= 10 else None, rangemode="tozero"))


def large(fig: go.Figure, size: int = 20) -> go.Figure:
    """Text readable from the back of a room."""
    fig.update_layout(font=dict(size=size), legend=dict(font=dict(size=size)))
    fig.update_xaxes(tickfont=dict(size=size), title_font=dict(size=size))
    return fig.update_yaxes(tickfont=dict(size=size), title_font=dict(size=size))


def answers_summary(ex: core_ex.Exercise, firsts: list[dict], learners: int, hinted: int, names: bool = True) -> str:
    if not firsts:
        return _("No one of the {n} learners has answered this one yet.").format(n=learners)
    right = sum(a["correct"] for a in firsts)
    said = [_("{answered} of {n} learners answered; {right} right on their first attempt; {hinted} opened the "
              "hint.").format(answered=len(firsts), n=learners, right=right, hinted=hinted)]
    computed = firsts[0]["computed"]
    if ex.kind == core_ex.NUMBER:
        mid = statistics.median(float(a["answer"]) for a in firsts)
        said.append(_("The run computed {computed:.4g}; the median prediction was {median:.4g}.").format(
            computed=float(computed), median=mid))
        far = drawable(firsts)[1]
        if far:
            said.append(_("Too far out to draw ({n}): {answers}.").format(n=len(far), answers=_("; ").join(
                (f"{a['name']} " if names else "") + f"{float(a['answer']):.4g}" for a in far)))
    else:
        said.append(_("The run's answer: {answer}.").format(answer=_(str(computed))))
    return sentences(*said)


def run_label(r: classroom.ClassRun, keys: list[str]) -> str:
    """A run in the legend: the learner and the settings in which the class's runs differ (else the run's name)."""
    return f"{r.learner}: {summary.settings_text(r.config, keys) if keys else r.name}"


def runs_figure(runs: list[classroom.ClassRun]) -> go.Figure:
    """Every class run's validation perplexity by epoch, one line per run, named by what differs between runs."""
    keys = summary.varying([r.config for r in runs])
    fig = go.Figure()
    for r in runs:
        gone = _(" (diverged)") if r.status == summary.DIVERGED else ""
        fig.add_trace(go.Scatter(x=[row.epoch for row in r.history], y=[row.val_ppl for row in r.history],
                                 mode="lines+markers", name=chart_text(run_label(r, keys), 60) + gone))
    fig = style(fig, None, _("epoch"), _("validation perplexity"), height=380, log_y=True)
    return fig.update_xaxes(dtick=1) if max((len(r.history) for r in runs), default=0) <= 12 else fig


def sweep_figure(points: list[summary.SweepPoint], key: str) -> go.Figure:
    """Final validation perplexity against the swept setting, one point per learner (their latest run); a run that
    diverged has no point (the weights it fell back to say nothing of the setting): a dotted red line at its value,
    labelled diverged."""
    kept = [p for p in points if not p.diverged]
    fig = go.Figure(go.Scatter(x=[p.value for p in kept], y=[p.ppl for p in kept], mode="markers+text",
                               text=[chart_text(p.learner, 20) for p in kept], textposition="top center",
                               marker=dict(size=12, color=BLUE), name=_("final perplexity")))
    values = [p.value for p in points]
    log_x = min(values) > 0 and max(values) / min(values) >= 10
    fig = style(fig, None, key, _("final validation perplexity"), height=380, log_y=True, log_x=log_x)
    for p in points:       # a diverged run: a line at its value (Plotly places a line by x, a label by log x)
        if p.diverged:
            fig.add_shape(type="line", xref="x", x0=p.value, x1=p.value, yref="y domain", y0=0, y1=1,
                          line=dict(dash="dot", color=RED))
            fig.add_annotation(text=_("{learner}: diverged").format(learner=chart_text(p.learner, 20)),
                               showarrow=False, font_color=RED,
                               xref="x", x=math.log10(p.value) if log_x else p.value, yref="y domain", y=1,
                               yanchor="bottom")
    if log_x:
        number_ticks(fig, "x", log_ticks(min(values), max(values)))
    lo, hi = (math.log10(min(values)), math.log10(max(values))) if log_x else (min(values), max(values))
    pad = 0.08 * (hi - lo) if hi > lo else (0.3 if log_x else max(abs(lo) * 0.1, 0.1))
    return fig.update_xaxes(range=[lo - pad, hi + pad])      # every learner's value in view, diverged or not


def runs_summary(runs: list[classroom.ClassRun]) -> str:
    keys = summary.varying([r.config for r in runs])
    each = [(_("{run} diverged after epoch {epoch}") if r.status == summary.DIVERGED else
             _("{run} at {ppl:.2f} after epoch {epoch}")).format(run=run_label(r, keys), epoch=r.history[-1].epoch,
                                                                  ppl=r.history[-1].val_ppl) for r in runs]
    return ngettext("{n} run: {each}", "{n} runs: {each}", len(runs)).format(n=len(runs), each=_("; ").join(each))


def sweep_summary(points: list[summary.SweepPoint], key: str) -> str:
    each = [(_("{learner} {value:g}: diverged") if p.diverged else _("{learner} {value:g}: {ppl:.2f}")).format(
        learner=p.learner, value=p.value, ppl=p.ppl) for p in points]
    return _("Final validation perplexity against {key}, each learner's latest run: {each}.").format(
        key=key, each=_("; ").join(each))


ACTIVE = {str(s) for s in Status if s.active}   # a run still training or waiting


def active_runs(class_id: int) -> list[classroom.ClassRun]:
    """The class's runs training or waiting now (by the run store's word, which every web process shares)."""
    return [r for r in run_histories(class_id) if r.status in ACTIVE]


def run_histories(info: classroom.ClassInfo | int) -> list[classroom.ClassRun]:
    """The class's runs with their curves: from the run store while it has them, else the copy the class keeps
    (made when a run is saved: pages/training.py's class_copy). Reads only: nothing is written while a page draws."""
    runs = classroom.class_runs(info if isinstance(info, int) else info.id)
    for r in runs:
        try:
            live = tasks.read_live(r.run_key)
        except ValueError:
            live = None
        if live is not None:
            r.status = str(live.status)
            if live.progress is not None:
                r.history = list(live.progress.history)
    return runs


def differs(a: dict) -> dict:
    """Where the page a learner checked from differed from the exercise's own setup: control -> (page, exercise).
    Grading always runs the exercise's own settings; a difference means the learner looked at another setting."""
    ex = BANK.get(a["exercise"])
    if ex is None or not a.get("settings"):
        return {}
    from core.labs import url_query
    own = url_query(ex.lab, ex.url)
    return {k: (v, own[k]) for k, v in a["settings"].items() if k in own and v and v != own[k]}


ROSTER_COLUMNS = [N_("learner"), N_("answered"), N_("right first time"), N_("out of"), N_("score"),
                  N_("restored only"), N_("attempts"), N_("hints opened"), N_("runs"), N_("other settings"),
                  N_("figures shown")]   # the rows' keys (data); a page shows each through _()
OVERVIEW_COLUMNS = [N_("exercise"), N_("lab"), N_("answered"), N_("right first time"), N_("opened the hint"),
                    N_("median time to answer")]


def roster_rows(info: classroom.ClassInfo, attempts: list[dict], hints: list, runs: list,
                assigned: set[str] = frozenset()) -> list[dict]:
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
                     "attempts": len(mine), "hints opened": sum(n == who.name for n, seen in hints),
                     "runs": sum(r.learner == who.name for r in runs),
                     "other settings": sum(bool(differs(a)) for a in firsts.values()),
                     "figures shown": sum(a.get("figures_shown") is True for ex, a in firsts.items()
                                          if not assigned or ex in assigned)})
    return rows


def overview_rows(info: classroom.ClassInfo, attempts: list[dict], hints: list, learners: int,
                  assigned: set[str]) -> list[dict]:
    """A row per exercise (the assigned ones, else all): answered, right first time, the share who opened the
    hint, the median time from first seeing it to the first Check."""
    keys = [k for k in BANK if k in assigned] if assigned else list(BANK)
    rows = summary.overview(keys, classroom.first_attempts(attempts), hints, classroom.class_opened(info.id),
                            learners)
    return [{"exercise": _(BANK[r["exercise"]].question)[:80], "lab": _(title_of(BANK[r["exercise"]].lab)),
             "answered": r["answered"], "right first time": r["right first time"],
             "opened the hint": f"{100 * r['hint opened']:.0f}%",
             "median time to answer": "" if r["median seconds"] is None else
             _("{n:.1f} min").format(n=r["median seconds"] / 60) if r["median seconds"] >= 90 else
             _("{n:.0f} s").format(n=r["median seconds"])}
            for r in rows]


def export_csv(attempts: list[dict], runs: list) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow([_(h) for h in (N_("learner"), N_("exercise"), N_("lab"), N_("answer"), N_("correct"),
                               N_("run's value"), N_("hint opened"), N_("after seeing the solution"), N_("source"),
                               N_("at (UTC)"), N_("first attempt"), N_("settings differing from the exercise's"),
                               N_("figures on the page"))])
    firsts = {id(a) for a in classroom.first_attempts(attempts).values()}
    for a in attempts:
        ex = BANK.get(a["exercise"])
        w.writerow([csv_cell(a["name"]), a["exercise"], ex.lab if ex else "", csv_cell(a["answer"]), a["correct"],
                    a["computed"], a["hint_seen"], a["after_solution"], a["source"], iso_time(a["at"]),
                    id(a) in firsts, "; ".join(f"{k}={v}" for k, (v, own) in differs(a).items()),
                    "" if a.get("figures_shown") is None else a["figures_shown"]])
    w.writerow([])
    keys = summary.varying([r.config for r in runs])
    w.writerow([*(_(h) for h in (N_("learner"), N_("run"), N_("epoch"), N_("train perplexity"),
                                 N_("validation perplexity"), N_("run ended"))), *keys, _("settings")])
    for r in runs:
        every = "; ".join(f"{k}={v}" for k, v in r.config.items())
        for row in r.history:
            w.writerow([csv_cell(r.learner), csv_cell(r.name), row.epoch, row.train_ppl, row.val_ppl,
                        csv_cell(r.status), *(csv_cell(r.config.get(k)) for k in keys), csv_cell(every)])
    return buf.getvalue()


def gradebook_csv(info: classroom.ClassInfo, attempts: list[dict], assigned: set[str]) -> str:
    """A row per learner, a column per exercise (the assigned ones, else all): 1 right first time, 0 wrong, empty
    not answered; then the total and what it is out of, as a learning platform imports a gradebook."""
    keys = [k for k in BANK if k in assigned] if assigned else list(BANK)
    names = [who.name for who in classroom.roster(info.id)]
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow([_("learner"), *keys, _("total"), _("out of")])
    for row in summary.gradebook(names, keys, classroom.first_attempts(attempts)):
        w.writerow([csv_cell(row["learner"]), *("" if row[k] is None else row[k] for k in keys), row["total"],
                    row["out of"]])
    return buf.getvalue()


