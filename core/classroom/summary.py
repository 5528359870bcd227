"""The numbers a teacher's view states, computed from the class's records and nothing else: a learner's score
(out of the assigned exercises when there are any), each exercise's overview, the gradebook, which settings a
class's runs differ in, a sweep's points (final perplexity against the swept value), and the numeric answers too
far out to draw. Pure functions on plain rows (core.classroom.records and teacher read them)."""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import NamedTuple

FAR = 1e6   # an answer further than this many times the run's value (at least 1) from 0 is listed, not drawn


@dataclass(frozen=True)
class Score:
    right: int       # right on the first attempt, among the exercises that count
    out_of: int      # the assigned exercises, else every exercise
    assigned: bool

    @property
    def percent(self) -> float:
        return 100.0 * self.right / self.out_of if self.out_of else 0.0

    def text(self) -> str:
        return f"{self.percent:.0f}%"


def score(firsts: dict[str, dict], exercises: list[str], assigned: set[str] | frozenset = frozenset()) -> Score:
    """firsts: exercise -> a learner's first attempt made with Check. With assignments the score counts only the
    assigned exercises and is out of them; an answer to another exercise counts for nothing."""
    if not exercises:
        raise ValueError("A score needs the list of exercises.")
    counted = [e for e in exercises if e in assigned] if assigned else list(exercises)
    right = sum(bool(firsts[e]["correct"]) for e in counted if e in firsts)
    return Score(right, len(counted), bool(assigned))


def _median(xs: list[float]) -> float | None:
    return statistics.median(xs) if xs else None


def overview(exercises: list[str], first: dict[tuple[str, str], dict], hints: list[tuple[str, str]],
             opened: dict[tuple[str, str], float], learners: int) -> list[dict]:
    """One row per exercise: how many answered (first attempts), how many right first time, the share of the
    class's learners who opened its hint, and the median seconds from first seeing it to the first Check (over
    the learners whose first view was recorded): from the drawing of the card they answered where the attempt
    says (card_at), else from its first drawing anywhere."""
    if learners < 0:
        raise ValueError("The number of learners cannot be negative.")
    rows = []
    for ex in exercises:
        firsts = {name: a for (name, e), a in first.items() if e == ex}
        hinted = len({name for name, e in hints if e == ex})
        waits = [a["at"] - since for name, a in firsts.items()
                 if (since := a.get("card_at") or opened.get((name, ex))) is not None and a["at"] >= since]
        rows.append({"exercise": ex, "answered": len(firsts), "right first time": sum(a["correct"] for a in
                                                                                      firsts.values()),
                     "hint opened": hinted / learners if learners else 0.0, "median seconds": _median(waits)})
    return rows


def gradebook(names: list[str], exercises: list[str], first: dict[tuple[str, str], dict]) -> list[dict]:
    """A row per learner, as a learning platform imports it: each exercise 1 (right first time), 0 (wrong first
    time) or None (not answered), the total and what it is out of."""
    rows = []
    for name in names:
        marks = {ex: (int(bool(first[(name, ex)]["correct"])) if (name, ex) in first else None) for ex in exercises}
        rows.append({"learner": name, **marks, "total": sum(m or 0 for m in marks.values()),
                     "out of": len(exercises)})
    return rows


def varying(configs: list[dict]) -> list[str]:
    """The settings in which a class's runs differ (a sweep's setting, or learners who chose their own), in the
    configs' order of keys."""
    keys = list(dict.fromkeys(k for c in configs for k in c))
    return [k for k in keys if len({repr(c.get(k)) for c in configs}) > 1]


def settings_text(config: dict, keys: list[str]) -> str:
    return ", ".join(f"{k} {config.get(k)}" for k in keys)


def _number(x) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x) if math.isfinite(x) else None


class SweepPoint(NamedTuple):
    """One learner's latest run in a sweep: their value of the setting and its final validation perplexity (NaN
    for a run that diverged: the weights it fell back to say nothing of the setting)."""
    learner: str
    value: float
    ppl: float
    diverged: bool = False


DIVERGED = "diverged"      # core.runs.record.Status.DIVERGED's text, as the class keeps it


def sweep_points(runs: list, key: str) -> list[SweepPoint]:
    """One point per learner, from their latest run that has a number for the setting and either a finite final
    validation perplexity or a divergence. runs: objects with learner, config, history (rows with val_ppl) and
    status, oldest first."""
    latest = {}
    for r in runs:
        value = _number(r.config.get(key))
        gone = str(getattr(r, "status", "")) == DIVERGED
        if value is None or not (gone or r.history):
            continue
        ppl = math.nan if gone else float(r.history[-1].val_ppl)
        if gone or math.isfinite(ppl):
            latest[r.learner] = SweepPoint(r.learner, value, ppl, gone)
    return sorted(latest.values(), key=lambda p: (p.value, p.learner))


def far_answers(values: list[float], computed) -> list[int]:
    """The positions of numeric answers too far out to draw beside the others (or not finite): they are listed in
    words instead, so no answer silently goes missing from the chart."""
    ref = _number(computed)
    limit = FAR * max(1.0, abs(ref) if ref is not None else 1.0)
    return [i for i, v in enumerate(values) if _number(v) is None or abs(v) > limit]
