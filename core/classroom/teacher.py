"""A class as its teacher sees and runs it: the roster, every answer, hint, opened exercise and run of its
learners, a cheap version number that changes with any of them (the live view polls it), the exercises assigned,
joining open or closed, renaming and removing a learner, a reset, and a sweep's values handed out in turn."""
from __future__ import annotations

import json
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from core.classroom.db import connect, write
from core.classroom.names import looks_like
from core.classroom.records import Learner, attempt_row, check_name, is_token
from core.runs.record import HistoryRow, rows_from

@dataclass
class ClassRun:
    """A run a learner of the class trained, with its curve (the run store's while it has it, else the copy kept
    here when it finished)."""
    learner: str               # the learner's name
    run_key: str
    name: str
    config: dict               # core.runs.config.TrainConfig.to_dict()
    history: list[HistoryRow]
    status: str = ""           # how it ended, or queued | running while it goes on (core.runs.record.Status)


def record_run(token: str, run_key: str, name: str, config: dict, root: Path | None = None) -> None:
    write(root, lambda conn: conn.execute(
        "INSERT OR IGNORE INTO runs (learner, run_key, name, config, created) VALUES (?, ?, ?, ?, ?)",
        (token, run_key, name, json.dumps(config), time.time())))


def keep_history(run_key: str, history: list[HistoryRow], root: Path | None = None, status: str = "") -> None:
    """Copy a run's curve in, with how it ended, so the class keeps both after the run store has cleaned it away."""
    write(root, lambda conn: conn.execute("UPDATE runs SET history = ?, status = ? WHERE run_key = ?",
                                           (json.dumps([row.to_dict() for row in history]), str(status), run_key)))


def roster(class_id: int, root: Path | None = None) -> list[Learner]:
    with closing(connect(root)) as conn:
        rows = conn.execute("SELECT l.token, l.name, l.class_id, c.name AS class_name FROM learners l JOIN classes c "
                            "ON c.id = l.class_id WHERE l.class_id = ? ORDER BY l.created", (class_id,)).fetchall()
    return [Learner(r["token"], r["name"], r["class_id"], r["class_name"]) for r in rows]


def class_attempts(class_id: int, root: Path | None = None) -> list[dict]:
    """Every attempt in the class, oldest first, with the learner's name."""
    with closing(connect(root)) as conn:
        rows = conn.execute("SELECT a.*, l.name FROM attempts a JOIN learners l ON l.token = a.learner "
                            "WHERE l.class_id = ? ORDER BY a.id", (class_id,)).fetchall()
    return [{"name": r["name"], **attempt_row(r)} for r in rows]


def class_hints(class_id: int, root: Path | None = None) -> list[tuple[str, str]]:
    with closing(connect(root)) as conn:
        return [(r[0], r[1]) for r in conn.execute("SELECT l.name, h.exercise FROM hints h JOIN learners l ON "
                                                   "l.token = h.learner WHERE l.class_id = ?", (class_id,))]


def _kept_history(text: str) -> list[HistoryRow]:
    try:
        return rows_from(json.loads(text))
    except (ValueError, TypeError):   # a damaged copy: the run shows without its curve
        return []


def class_runs(class_id: int, root: Path | None = None) -> list[ClassRun]:
    with closing(connect(root)) as conn:
        rows = conn.execute("SELECT r.*, l.name AS learner_name FROM runs r JOIN learners l ON l.token = r.learner "
                            "WHERE l.class_id = ? ORDER BY r.created", (class_id,)).fetchall()
    return [ClassRun(r["learner_name"], r["run_key"], r["name"], json.loads(r["config"]), _kept_history(r["history"]),
                     r["status"]) for r in rows]


def class_opened(class_id: int, root: Path | None = None) -> dict[tuple[str, str], float]:
    """(learner's name, exercise) -> when they first saw it."""
    with closing(connect(root)) as conn:
        rows = conn.execute("SELECT l.name, o.exercise, o.at FROM opened o JOIN learners l ON l.token = o.learner "
                            "WHERE l.class_id = ?", (class_id,)).fetchall()
    return {(r[0], r[1]): r[2] for r in rows}


def version(class_id: int, root: Path | None = None) -> tuple:
    """A few numbers that change whenever anything the teacher sees changes (an answer, a hint, a learner, a name,
    a run, an assignment, joining opened or closed): one cheap query for a view that polls every second."""
    with closing(connect(root)) as conn:
        return tuple(conn.execute(
            "SELECT (SELECT COALESCE(MAX(a.id), 0) FROM attempts a JOIN learners l ON l.token = a.learner "
            "        WHERE l.class_id = :c), "
            "       (SELECT COUNT(*) FROM hints h JOIN learners l ON l.token = h.learner WHERE l.class_id = :c), "
            "       (SELECT COUNT(*) || '/' || COALESCE(group_concat(name, '/'), '') FROM learners WHERE class_id = :c), "
            "       (SELECT COUNT(*) || '/' || COALESCE(SUM(length(r.history)), 0) FROM runs r JOIN learners l "
            "        ON l.token = r.learner WHERE l.class_id = :c), "
            "       (SELECT COUNT(*) FROM assigned WHERE class_id = :c), "
            "       (SELECT open FROM classes WHERE id = :c)", {"c": class_id}).fetchone())


def _member(conn, class_id: int, name: str) -> str:
    row = conn.execute("SELECT token FROM learners WHERE class_id = ? AND name = ?", (class_id, name)).fetchone()
    if row is None:
        raise ValueError(f"No one in this class is called {name!r} (any more).")
    return row[0]


def rename(class_id: int, name: str, new: str, root: Path | None = None) -> str:
    """Give a learner of the class another name (checked as a joining name is: no look-alike of another's)."""
    new = check_name(new)

    def work(conn):
        token = _member(conn, class_id, name)
        for (other,) in conn.execute("SELECT name FROM learners WHERE class_id = ? AND token != ?", (class_id, token)):
            if looks_like(new, other):
                raise ValueError(f"Someone in the class is already called {other!r}, which reads the same as {new!r}.")
        conn.execute("UPDATE learners SET name = ? WHERE token = ?", (new, token))
    write(root, work)
    return new


def _leave(conn, tokens: list[str]) -> None:
    """Learners leave their class: they keep their answers under their code (their own progress), and the class
    no longer sees them; their handed-out sweep values go, so the next learners get them in turn."""
    for token in tokens:
        conn.execute("UPDATE learners SET class_id = NULL, name = '' WHERE token = ?", (token,))
        conn.execute("DELETE FROM handed WHERE learner = ?", (token,))


def remove(class_id: int, name: str, root: Path | None = None) -> None:
    write(root, lambda conn: _leave(conn, [_member(conn, class_id, name)]))


def reset(class_id: int, root: Path | None = None) -> int:
    """Every learner leaves the class (the class, its code and its assignments stay); returns how many left."""
    def work(conn):
        tokens = [r[0] for r in conn.execute("SELECT token FROM learners WHERE class_id = ?", (class_id,))]
        _leave(conn, tokens)
        return len(tokens)
    return write(root, work)


def set_open(class_id: int, open_: bool, root: Path | None = None) -> None:
    write(root, lambda conn: conn.execute("UPDATE classes SET open = ? WHERE id = ?", (int(bool(open_)), class_id)))


def assign(class_id: int, exercises: list[str], root: Path | None = None) -> None:
    """The class's assigned exercises, replacing the last list (empty: every exercise counts)."""
    def work(conn):
        conn.execute("DELETE FROM assigned WHERE class_id = ?", (class_id,))
        conn.executemany("INSERT INTO assigned (class_id, exercise) VALUES (?, ?)",
                         [(class_id, str(e)) for e in dict.fromkeys(exercises)])
    write(root, work)


def assigned(class_id: int, root: Path | None = None) -> set[str]:
    with closing(connect(root)) as conn:
        return {r[0] for r in conn.execute("SELECT exercise FROM assigned WHERE class_id = ?", (class_id,))}


def hand_out(token: str, sweep: str, values: list[str], root: Path | None = None) -> tuple[str, int]:
    """The value of a sweep (a setting and its list of values, as text) this learner works with: the one they
    were handed before, else the next in turn among their class (the first learner to open it gets the first
    value, the sixth of five values the first again). Returns (value, the learner's place in turn from 1)."""
    if not is_token(token):
        raise ValueError("That is not a learner code.")
    if not values:
        raise ValueError("A sweep needs at least one value.")

    def work(conn):
        got = conn.execute("SELECT value FROM handed WHERE learner = ? AND sweep = ?", (token, sweep)).fetchone()
        before = conn.execute("SELECT COUNT(*) FROM handed h JOIN learners l ON l.token = h.learner WHERE h.sweep = ? "
                              "AND l.class_id IS (SELECT class_id FROM learners WHERE token = ?) AND h.at <= "
                              "COALESCE((SELECT at FROM handed WHERE learner = ? AND sweep = ?), 1e300) "
                              "AND h.learner != ?", (sweep, token, token, sweep, token)).fetchone()[0]
        if got is not None:
            return got[0], before + 1
        value = values[before % len(values)]
        conn.execute("INSERT INTO handed (learner, sweep, value, at) VALUES (?, ?, ?, ?)",
                     (token, sweep, value, time.time()))
        return value, before + 1
    return write(root, work)
