"""Exercises that check themselves: predict, then run, then see why.

An exercise is data plus a solver. The solver runs the real core code with the exercise's settings and returns
the correct answer computed from that run (never a stored constant) and an explanation quoting the run's
numbers; grade() compares a learner's answer with it. The bank of exercises is core.exercises.bank; the labs
show them (ui.exercises) and `python -m core exercises` checks every grader like the maths is checked.
"""
from __future__ import annotations

import math
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Callable

from core.i18n import _, listing, sentences

CHOICE, NUMBER = "choice", "number"

# Where an exercise that trains reports its progress (a training run's Progress), set by whoever waits for it
# (ui.exercises shows a progress bar with an estimate); None: nobody is watching.
REPORT: ContextVar[Callable | None] = ContextVar("exercise_report", default=None)


def report(progress) -> None:
    """The on_progress of an exercise's training run: passed on to whoever waits (REPORT), if anyone."""
    watcher = REPORT.get()
    if watcher is not None:
        watcher(progress)


@dataclass
class Solution:
    answer: object                 # the right option (CHOICE) or value (NUMBER), computed by the run
    explanation: str               # in words, quoting the run's numbers
    numbers: dict = field(default_factory=dict)   # what the run measured, shown beside the grade
    mistakes: dict = field(default_factory=dict)  # NUMBER: a common wrong value -> what that answer forgets


@dataclass(frozen=True)
class Exercise:
    key: str
    lab: str                       # the lab page key it belongs to (core.labs.PAGES: a lab, or "chapter")
    question: str
    kind: str                      # CHOICE or NUMBER
    solve: Callable[[dict], Solution]
    settings: dict                 # what the solver runs with (also put in the lab's URL by assignment links)
    hint: str
    options: tuple = ()            # CHOICE: the options shown
    tolerance: float = 0.05        # NUMBER: relative tolerance (or absolute, below)
    absolute: float = 0.0          # NUMBER: absolute tolerance added to the relative one
    unit: str = ""
    other: dict | None = None      # "try the other setting": settings for the contrast
    other_label: str = ""
    needs_corpus: bool = False
    url: dict = field(default_factory=dict)   # the lab's controls (core.labs names) that set it up
    book: str = ""                 # the book's own end-of-section exercise it makes checkable ("9.7 ..., #1"), or ""
    trains: bool = False           # its computation trains a model: its answers ship in assets/ (core.exercises.cache)

    def run(self, settings: dict | None = None) -> Solution:
        return self.solve({**self.settings, **(settings or {})})


@dataclass
class Grade:
    correct: bool
    solution: Solution
    message: str
    answer: object = None          # the learner's answer in the exercise's form, as it was graded (check_answer)


def check_answer(ex: Exercise, answer) -> object:
    """The learner's answer in the exercise's form, or ValueError saying what is expected."""
    if ex.kind == CHOICE:
        if answer not in ex.options:
            raise ValueError(_("Pick one of: {options}.").format(options=listing(_(o) for o in ex.options)))
        return answer
    if isinstance(answer, bool):
        raise ValueError(_("Type a number."))
    try:
        value = float(answer)
    except (TypeError, ValueError, OverflowError):   # OverflowError: an integer too large for a float
        raise ValueError(_("Type a number.")) from None
    if not math.isfinite(value):
        raise ValueError(_("Type a finite number."))
    return value


def is_right(ex: Exercise, answer, right) -> bool:
    if ex.kind == CHOICE:
        return answer == right
    return abs(float(answer) - float(right)) <= ex.tolerance * abs(float(right)) + ex.absolute


def grade(ex: Exercise, answer, solution: Solution | None = None) -> Grade:
    """Run the exercise (unless its solution is given) and grade the answer against what the run computed."""
    answer = check_answer(ex, answer)
    solution = solution or ex.run()
    ok = is_right(ex, answer, solution.answer)
    shown = _(solution.answer) if ex.kind == CHOICE else f"{solution.answer:,.6g}{ex.unit}"
    message = _("Right.") if ok else _("Not quite: the run says {shown}.").format(shown=shown)
    if not ok:
        message = sentences(message, mistake(ex, answer, solution))
    return Grade(ok, solution, message, answer)


def mistake(ex: Exercise, answer, solution: Solution) -> str | None:
    """What a wrong number looks like it forgot, when it matches one of the exercise's common mistakes."""
    if ex.kind != NUMBER:
        return None
    for value, why in solution.mistakes.items():
        if is_right(ex, answer, value):
            return why
    return None


def wrong_answer(ex: Exercise, right) -> object:
    """An answer the grader must reject (for the self-check)."""
    if ex.kind == CHOICE:
        return next(o for o in ex.options if o != right)
    return float(right) * 2 + 1 + 10 * ex.absolute


def tolerance_text(ex: Exercise) -> str:
    if ex.kind != NUMBER:
        return ""
    parts = [f"{100 * ex.tolerance:g}%"] if ex.tolerance else []
    if ex.absolute:
        parts.append(f"{ex.absolute:g}{ex.unit}")
    return _("within {tolerance}").format(tolerance=" + ".join(parts))


def self_check(bank: dict[str, Exercise], corpus_available: bool) -> list[tuple[str, str]]:
    """Every exercise's grader on its own computed answer (must pass), on a wrong one and on each of its common
    mistakes (must fail, a mistake with its message). This checks the graders, not the maths: each answer is
    pinned from an independent formula in tests/test_exercise_answers.py, which a maths bug in core fails.
    Returns (key, 'passed' | 'failed: why' | 'skipped: why')."""
    out = []
    for key, ex in bank.items():
        if ex.needs_corpus and not corpus_available:
            out.append((key, "skipped: needs the corpus"))
            continue
        try:
            sol = ex.run()
            right, wrong = grade(ex, sol.answer, sol), grade(ex, wrong_answer(ex, sol.answer), sol)
            slips = [grade(ex, value, sol) for value in sol.mistakes]
            ok = right.correct and not wrong.correct and bool(sol.explanation) and all(
                not g.correct and why in g.message for g, why in zip(slips, sol.mistakes.values()))
            out.append((key, "passed" if ok else f"failed: right accepted {right.correct}, wrong rejected "
                                                f"{not wrong.correct}"))
        except Exception as exc:  # a broken grader is a failed check, reported with its reason
            out.append((key, f"failed: {exc!r}"))
    return out
