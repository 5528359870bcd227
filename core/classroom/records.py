"""Learners and their answers: classes by code, joining (names compared as they read), a learner alone, every
attempt and opened hint, and a learner's progress (the first attempt made with Check is the one a score counts)."""
from __future__ import annotations

import json
import math
import re
import secrets
import sqlite3
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from core.classroom.names import check_display_name, looks_like
from core.classroom.db import connect, write
from core.i18n import N_, _

NAME_MAX = 40
_TOKEN = re.compile(r"[A-Za-z0-9_-]{20,64}")
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"      # no 0/O, 1/I/L: read aloud or copied from a board
_CODE = re.compile(rf"[{CODE_ALPHABET}]{{8}}")


@dataclass(frozen=True)
class ClassInfo:
    id: int
    name: str
    join_code: str
    teacher_token: str
    open: bool = True          # new learners may join


@dataclass(frozen=True)
class Learner:
    token: str
    name: str            # "" for a learner alone
    class_id: int | None
    class_name: str
    resume: str = ""     # their resume code ("" until they are given one: core.classroom.resume)


def check_name(name: object, what: str = N_("name")) -> str:   # core.checks.check_display_name, at most NAME_MAX
    return check_display_name(name, what, NAME_MAX)


def is_token(token: object) -> bool:
    return isinstance(token, str) and _TOKEN.fullmatch(token) is not None


def normal_code(code: object) -> str | None:
    """A join code as typed (any case, spaces or a dash) in its stored form, or None when it cannot be one."""
    if not isinstance(code, str):
        return None
    code = re.sub(r"[\s-]", "", code).upper()
    return code if _CODE.fullmatch(code) else None


def draw_code() -> str:
    """Eight letters and digits that read aloud without doubt (a join code, a resume code)."""
    return "".join(secrets.choice(CODE_ALPHABET) for _pick in range(8))


def with_fresh_code(root: Path | None, work, tries: int = 8):
    """write(root, work(conn, code)) with a newly drawn code, drawn again when another row has it already (31^8
    codes: it almost never does); any other refusal of the database goes to the caller."""
    for _try in range(tries):
        code = draw_code()
        try:
            return write(root, lambda conn: work(conn, code))
        except sqlite3.IntegrityError as exc:
            if "join_code" not in str(exc) and "resume" not in str(exc):
                raise
    raise ValueError(_("No free code could be drawn just now: try again."))


def create_class(name: str, root: Path | None = None) -> ClassInfo:
    name = check_name(name, N_("class name"))
    teacher = secrets.token_urlsafe(24)
    cur, code = with_fresh_code(root, lambda conn, code: (conn.execute(
        "INSERT INTO classes (name, join_code, teacher_token, created) VALUES (?, ?, ?, ?)",
        (name, code, teacher, time.time())), code))
    return ClassInfo(cur.lastrowid, name, code, teacher)


def _class(row) -> ClassInfo | None:
    return None if row is None else ClassInfo(row["id"], row["name"], row["join_code"], row["teacher_token"],
                                              bool(row["open"]))


def class_by_code(code: str, root: Path | None = None) -> ClassInfo | None:
    code = normal_code(code)
    if code is None:
        return None
    with closing(connect(root)) as conn:
        return _class(conn.execute("SELECT * FROM classes WHERE join_code = ?", (code,)).fetchone())


def class_by_teacher(token: str, root: Path | None = None) -> ClassInfo | None:
    if not is_token(token):
        return None
    with closing(connect(root)) as conn:
        return _class(conn.execute("SELECT * FROM classes WHERE teacher_token = ?", (token,)).fetchone())


def join(code: str, name: str, root: Path | None = None, token: str | None = None) -> str:
    """Put a learner in the class with this join code and return their token: the learner alone with `token` (their
    answers so far come along), else a new learner."""
    found = class_by_code(code, root)
    if found is None:
        raise ValueError(_("No class has that code: check it with your teacher (8 letters and digits)."))
    if not found.open:
        raise ValueError(_("{name} is closed to new learners: ask your teacher to open it.").format(name=found.name))
    name = check_name(name)
    alone = learner(token, root) if token else None
    if alone is not None and alone.class_id is not None:
        raise ValueError(_("You are already in {name}: to join another class, press '{forget}' first.").format(
            name=alone.class_name, forget=_("Not you? Forget me here")))
    new = token if alone is not None else secrets.token_urlsafe(18)

    def work(conn, code):
        for (other,) in conn.execute("SELECT name FROM learners WHERE class_id = ? AND token != ?", (found.id, new)):
            if other == name:
                raise ValueError(_("Someone in {name} already uses the name {taken}: add an initial.").format(
                    name=found.name, taken=repr(name)))
            if looks_like(name, other):
                raise ValueError(_("Someone in {name} is already called {other}, which reads the same as {typed}: add "
                                   "an initial, or ask your teacher.").format(name=found.name, other=repr(other),
                                                                              typed=repr(name)))
        if alone is not None:
            conn.execute("UPDATE learners SET class_id = ?, name = ? WHERE token = ?", (found.id, name, new))
        else:
            conn.execute("INSERT INTO learners (token, class_id, name, created, resume) VALUES (?, ?, ?, ?, ?)",
                         (new, found.id, name, time.time(), code))
    try:
        with_fresh_code(root, work)
    except sqlite3.IntegrityError:
        raise ValueError(_("Someone in {name} already uses the name {taken}: add an initial.").format(
            name=found.name, taken=repr(name))) from None
    return new


def learner_alone(root: Path | None = None) -> str:
    """A token for a learner without a class (their progress then survives a reload too)."""
    token = secrets.token_urlsafe(18)
    with_fresh_code(root, lambda conn, code: conn.execute(
        "INSERT INTO learners (token, class_id, name, created, resume) VALUES (?, NULL, '', ?, ?)",
        (token, time.time(), code)))
    return token


def learner(token: str, root: Path | None = None) -> Learner | None:
    if not is_token(token):
        return None
    with closing(connect(root)) as conn:
        row = conn.execute("SELECT l.token, l.name, l.class_id, COALESCE(c.name, '') AS class_name, "
                           "COALESCE(l.resume, '') AS resume FROM learners l "
                           "LEFT JOIN classes c ON c.id = l.class_id WHERE l.token = ?", (token,)).fetchone()
    return None if row is None else Learner(row["token"], row["name"], row["class_id"], row["class_name"],
                                            row["resume"])


def _value(x) -> str:
    if isinstance(x, float) and not math.isfinite(x):
        raise ValueError(_("An answer is a finite number or one of the options."))
    return json.dumps(x)


def record_hint(token: str, exercise: str, root: Path | None = None) -> None:
    write(root, lambda conn: conn.execute("INSERT OR IGNORE INTO hints (learner, exercise, at) VALUES (?, ?, ?)",
                                           (token, exercise, time.time())))


def record_attempt(token: str, exercise: str, answer, correct: bool, computed, source: str = "check",
                   root: Path | None = None, at: float | None = None, settings: dict | None = None,
                   figures_shown: bool | None = None, card_at: float | None = None) -> None:
    """Keep one attempt: the answer, its grade, the value the run computed, whether the hint had been opened and
    whether an earlier attempt had already shown the solution; source says where it came from (check, restore);
    figures_shown whether the lab's figures were on the page (None: not known); card_at when the card answered
    was first drawn."""
    answer, computed = _value(answer), _value(computed)   # checked before any try

    def work(conn):
        hint = conn.execute("SELECT 1 FROM hints WHERE learner = ? AND exercise = ?", (token, exercise)).fetchone()
        before = conn.execute("SELECT 1 FROM attempts WHERE learner = ? AND exercise = ?",
                              (token, exercise)).fetchone()
        conn.execute("INSERT INTO attempts (learner, exercise, answer, correct, computed, hint_seen, after_solution, "
                     "source, at, settings, figures_shown, card_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (token, exercise, answer, int(bool(correct)), computed, int(hint is not None),
                      int(before is not None), source, time.time() if at is None else at,
                      json.dumps({str(k): str(v) for k, v in (settings or {}).items()}),
                      None if figures_shown is None else int(bool(figures_shown)), card_at))
    write(root, work)


def attempts(token: str, root: Path | None = None) -> list[dict]:
    """Every attempt of one learner, oldest first."""
    with closing(connect(root)) as conn:
        rows = conn.execute("SELECT * FROM attempts WHERE learner = ? ORDER BY id", (token,)).fetchall()
    return [attempt_row(r) for r in rows]


def attempt_row(r) -> dict:
    return {"exercise": r["exercise"], "answer": json.loads(r["answer"]), "correct": bool(r["correct"]),
            "computed": json.loads(r["computed"]), "hint_seen": bool(r["hint_seen"]),
            "after_solution": bool(r["after_solution"]), "source": r["source"], "at": r["at"],
            "settings": json.loads(r["settings"]),
            "figures_shown": None if r["figures_shown"] is None else bool(r["figures_shown"]), "card_at": r["card_at"]}


RESTORE = "restore"   # an attempt's source when it came from an uploaded progress file (regraded), not a Check


def progress(token: str, root: Path | None = None) -> dict:
    """exercise -> the first attempt made with Check (what the score counts), the latest answer and the tries; an
    exercise only restored from a file gets its latest restored attempt, marked restored (never a first attempt)."""
    out: dict = {}
    for a in attempts(token, root):
        fold(out, a)
    return out


def fold(progress_: dict, a: dict) -> dict:
    """Add one attempt ({"exercise", "answer", "correct", "computed", "at", "source"}) to a learner's progress
    (exercise -> row), by the one rule of first attempts: the first made with Check is the one a score counts; a
    restored one stands only until a Check comes; every attempt counts as a try and is the latest. Returns the row.
    The records (progress) and a tab that cannot reach them keep progress by this same rule."""
    row = progress_.get(a["exercise"])
    if row is None or (row["restored"] and a["source"] != RESTORE):
        tries = row["tries"] if row else 0
        row = progress_[a["exercise"]] = {**a, "tries": tries, "restored": a["source"] == RESTORE}
    elif row["restored"]:
        row.update({k: a[k] for k in ("answer", "correct", "computed", "at")})
    row["tries"] += 1
    row["latest"], row["latest_correct"] = a["answer"], a["correct"]
    return row


def first_attempts(attempts: list[dict]) -> dict:
    """(learner's name, exercise) -> the first attempt made with Check, from class_attempts (never a restored one)."""
    return {(a["name"], a["exercise"]): a for a in reversed(attempts) if a["source"] != RESTORE}   # the oldest wins


def hints(token: str, root: Path | None = None) -> set[str]:
    with closing(connect(root)) as conn:
        return {r[0] for r in conn.execute("SELECT exercise FROM hints WHERE learner = ?", (token,))}


def record_opened(token: str, exercise: str, root: Path | None = None) -> None:
    """When a learner first saw an exercise (the teacher's 'time to answer' runs from it); later views change
    nothing."""
    if not is_token(token):
        raise ValueError(_("That is not a learner code."))
    write(root, lambda conn: conn.execute("INSERT OR IGNORE INTO opened (learner, exercise, at) VALUES (?, ?, ?)",
                                          (token, exercise, time.time())))
