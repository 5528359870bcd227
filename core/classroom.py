"""Classes without accounts: a teacher creates a class, learners join it with a display name, and every answer,
attempt, opened hint and training run is kept under the learner's token. A learner alone gets a token too, so
progress survives a reload without any class.

One SQLite file in the run store's folder (RNNLAB_RUNS_DIR), in WAL mode, so several web processes and restarts
share it. The schema is MIGRATIONS below, applied in order and counted in SQLite's user_version: a shipped
migration is never edited, the next change is a new entry. Tokens are unguessable (secrets), checked by their
shape before any query, and never become paths. Nothing here imports streamlit; every public function raises
ValueError with a message a learner understands.
"""
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

from core.checks import check_display_name, looks_like
from core.runs.record import HistoryRow, rows_from

DB_NAME = "classroom.sqlite3"
MIGRATIONS = (
    # 1: classes, learners, attempts (every one kept, with whether the hint or the solution had been seen),
    # opened hints, and the learners' training runs (their curves copied in, so they outlast the run store)
    """
    CREATE TABLE classes (id INTEGER PRIMARY KEY, name TEXT NOT NULL, join_code TEXT NOT NULL UNIQUE,
                          teacher_token TEXT NOT NULL UNIQUE, created REAL NOT NULL);
    CREATE TABLE learners (token TEXT PRIMARY KEY, class_id INTEGER REFERENCES classes(id), name TEXT NOT NULL,
                           created REAL NOT NULL);
    CREATE UNIQUE INDEX one_name_per_class ON learners(class_id, name) WHERE class_id IS NOT NULL;
    CREATE TABLE attempts (id INTEGER PRIMARY KEY, learner TEXT NOT NULL REFERENCES learners(token),
                           exercise TEXT NOT NULL, answer TEXT NOT NULL, correct INTEGER NOT NULL,
                           computed TEXT NOT NULL, hint_seen INTEGER NOT NULL, after_solution INTEGER NOT NULL,
                           source TEXT NOT NULL, at REAL NOT NULL);
    CREATE INDEX attempts_of ON attempts(learner, exercise, id);
    CREATE TABLE hints (learner TEXT NOT NULL REFERENCES learners(token), exercise TEXT NOT NULL,
                        at REAL NOT NULL, PRIMARY KEY (learner, exercise));
    CREATE TABLE runs (learner TEXT NOT NULL REFERENCES learners(token), run_key TEXT NOT NULL, name TEXT NOT NULL,
                       config TEXT NOT NULL, created REAL NOT NULL, history TEXT NOT NULL DEFAULT '[]',
                       PRIMARY KEY (learner, run_key));
    """,
    # 2: the lab's settings when the learner checked (the controls the exercise sets up), so the teacher can see
    # where a learner's page differed from the exercise's own setup (another view, or a hand-edited link)
    """
    ALTER TABLE attempts ADD COLUMN settings TEXT NOT NULL DEFAULT '{}';
    """,
)
NAME_MAX = 40
_TOKEN = re.compile(r"[A-Za-z0-9_-]{20,64}")
_CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"      # no 0/O, 1/I/L: read aloud or copied from a board
_CODE = re.compile(rf"[{_CODE_ALPHABET}]{{8}}")


@dataclass(frozen=True)
class ClassInfo:
    id: int
    name: str
    join_code: str
    teacher_token: str


@dataclass
class ClassRun:
    """A run a learner of the class trained, with its curve (the run store's while it has it, else the copy kept
    here when it finished)."""
    learner: str               # the learner's name
    run_key: str
    name: str
    config: dict               # core.runs.config.TrainConfig.to_dict()
    history: list[HistoryRow]
    status: str = ""


@dataclass(frozen=True)
class Learner:
    token: str
    name: str            # "" for a learner alone
    class_id: int | None
    class_name: str


def database(root: Path | None = None) -> Path:
    from core.runs.store import store_root
    return (root or store_root()) / DB_NAME


BUSY_TIMEOUT_S = 10.0   # how long one try waits for another process's write to end
WRITE_TRIES = 6         # then a write is tried again, after a pause that grows (a class answering at once, loaded)


def _busy(exc: Exception) -> bool:
    """SQLite's "database is locked" or "busy": another connection holds the write lock."""
    return isinstance(exc, sqlite3.OperationalError) and any(w in str(exc) for w in ("locked", "busy"))


def _pause(attempt: int) -> None:
    time.sleep(min(1.0, 0.05 * 2 ** attempt) * (0.5 + secrets.randbelow(1000) / 1000))


def _write(root: Path | None, work):
    """work(conn) in one transaction, tried again while the database is busy beyond a try's timeout (it failed
    1 and 65 of 4,800 writes under overload, and the attempt was lost). ValueError in a learner's words when it
    stays busy."""
    for attempt in range(WRITE_TRIES):
        try:
            with closing(connect(root)) as conn, conn:
                conn.execute("BEGIN IMMEDIATE")   # the write lock first: what work reads stays true until it writes
                return work(conn)
        except sqlite3.OperationalError as exc:
            if not _busy(exc):
                raise
        if attempt + 1 < WRITE_TRIES:
            _pause(attempt)
    raise ValueError("The class records are too busy to keep this just now (many answers at once): press the button "
                     "again in a moment.")


def connect(root: Path | None = None) -> sqlite3.Connection:
    """A connection to the classroom database, created and migrated to the newest schema when needed."""
    path = database(root)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S)
        conn.execute("PRAGMA journal_mode=WAL")
    except (OSError, sqlite3.Error) as exc:
        if _busy(exc):
            raise   # another process is writing: the caller tries again (_write)
        raise ValueError(f"The class records cannot be opened in {path.parent} ({exc}): set RNNLAB_RUNS_DIR to a "
                         "writable folder.") from None
    conn.execute("PRAGMA foreign_keys=ON")
    conn.row_factory = sqlite3.Row
    migrate(conn)
    return conn


def migrate(conn: sqlite3.Connection) -> int:
    """Apply the migrations this database has not had yet, each in its own transaction; return the version."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > len(MIGRATIONS):
        raise ValueError(f"The class records were written by a newer RNN Lab (schema {version}; this one knows "
                         f"{len(MIGRATIONS)}).")
    if version == len(MIGRATIONS):
        return version
    level, conn.isolation_level = conn.isolation_level, None    # transactions by hand while migrating
    try:
        for number in range(version + 1, len(MIGRATIONS) + 1):
            conn.execute("BEGIN IMMEDIATE")    # one process at a time; a second one finds the work done
            try:
                if conn.execute("PRAGMA user_version").fetchone()[0] < number:
                    for statement in filter(str.strip, MIGRATIONS[number - 1].split(";")):
                        conn.execute(statement)
                    conn.execute(f"PRAGMA user_version = {number}")
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
    finally:
        conn.isolation_level = level
    return len(MIGRATIONS)


def check_name(name: object, what: str = "name") -> str:   # core.checks.check_display_name, at most NAME_MAX
    return check_display_name(name, what, NAME_MAX)


def is_token(token: object) -> bool:
    return isinstance(token, str) and _TOKEN.fullmatch(token) is not None


def normal_code(code: object) -> str | None:
    """A join code as typed (any case, spaces or a dash) in its stored form, or None when it cannot be one."""
    if not isinstance(code, str):
        return None
    code = re.sub(r"[\s-]", "", code).upper()
    return code if _CODE.fullmatch(code) else None


def create_class(name: str, root: Path | None = None) -> ClassInfo:
    name = check_name(name, "class name")
    code = "".join(secrets.choice(_CODE_ALPHABET) for _ in range(8))
    teacher = secrets.token_urlsafe(24)
    cur = _write(root, lambda conn: conn.execute(
        "INSERT INTO classes (name, join_code, teacher_token, created) VALUES (?, ?, ?, ?)",
        (name, code, teacher, time.time())))
    return ClassInfo(cur.lastrowid, name, code, teacher)


def _class(row) -> ClassInfo | None:
    return None if row is None else ClassInfo(row["id"], row["name"], row["join_code"], row["teacher_token"])


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
        raise ValueError("No class has that code: check it with your teacher (8 letters and digits).")
    name = check_name(name)
    alone = learner(token, root) if token else None
    if alone is not None and alone.class_id is not None:
        raise ValueError(f"You are already in {alone.class_name}: to join another class, press 'Not you? Forget "
                         "me here' first.")
    new = token if alone is not None else secrets.token_urlsafe(18)

    def work(conn):
        for (other,) in conn.execute("SELECT name FROM learners WHERE class_id = ? AND token != ?", (found.id, new)):
            if other == name:
                raise ValueError(f"Someone in {found.name} already uses the name {name!r}: add an initial.")
            if looks_like(name, other):
                raise ValueError(f"Someone in {found.name} is already called {other!r}, which reads the same as "
                                 f"{name!r}: add an initial, or ask your teacher.")
        if alone is not None:
            conn.execute("UPDATE learners SET class_id = ?, name = ? WHERE token = ?", (found.id, name, new))
        else:
            conn.execute("INSERT INTO learners (token, class_id, name, created) VALUES (?, ?, ?, ?)",
                         (new, found.id, name, time.time()))
    try:
        _write(root, work)
    except sqlite3.IntegrityError:
        raise ValueError(f"Someone in {found.name} already uses the name {name!r}: add an initial.") from None
    return new


def learner_alone(root: Path | None = None) -> str:
    """A token for a learner without a class (their progress then survives a reload too)."""
    token = secrets.token_urlsafe(18)
    _write(root, lambda conn: conn.execute(
        "INSERT INTO learners (token, class_id, name, created) VALUES (?, NULL, '', ?)", (token, time.time())))
    return token


def learner(token: str, root: Path | None = None) -> Learner | None:
    if not is_token(token):
        return None
    with closing(connect(root)) as conn:
        row = conn.execute("SELECT l.token, l.name, l.class_id, COALESCE(c.name, '') AS class_name FROM learners l "
                           "LEFT JOIN classes c ON c.id = l.class_id WHERE l.token = ?", (token,)).fetchone()
    return None if row is None else Learner(row["token"], row["name"], row["class_id"], row["class_name"])


def _value(x) -> str:
    if isinstance(x, float) and not math.isfinite(x):
        raise ValueError("An answer is a finite number or one of the options.")
    return json.dumps(x)


def record_hint(token: str, exercise: str, root: Path | None = None) -> None:
    _write(root, lambda conn: conn.execute("INSERT OR IGNORE INTO hints (learner, exercise, at) VALUES (?, ?, ?)",
                                           (token, exercise, time.time())))


def record_attempt(token: str, exercise: str, answer, correct: bool, computed, source: str = "check",
                   root: Path | None = None, at: float | None = None, settings: dict | None = None) -> None:
    """Keep one attempt: the answer, its grade, the value the run computed, whether the hint had been opened and
    whether an earlier attempt had already shown the solution; source says where it came from (check, restore)."""
    answer, computed = _value(answer), _value(computed)   # checked before any try

    def work(conn):
        hint = conn.execute("SELECT 1 FROM hints WHERE learner = ? AND exercise = ?", (token, exercise)).fetchone()
        before = conn.execute("SELECT 1 FROM attempts WHERE learner = ? AND exercise = ?",
                              (token, exercise)).fetchone()
        conn.execute("INSERT INTO attempts (learner, exercise, answer, correct, computed, hint_seen, after_solution, "
                     "source, at, settings) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (token, exercise, answer, int(bool(correct)), computed, int(hint is not None),
                      int(before is not None), source, time.time() if at is None else at,
                      json.dumps({str(k): str(v) for k, v in (settings or {}).items()})))
    _write(root, work)


def attempts(token: str, root: Path | None = None) -> list[dict]:
    """Every attempt of one learner, oldest first."""
    with closing(connect(root)) as conn:
        rows = conn.execute("SELECT * FROM attempts WHERE learner = ? ORDER BY id", (token,)).fetchall()
    return [_attempt(r) for r in rows]


def _attempt(r) -> dict:
    return {"exercise": r["exercise"], "answer": json.loads(r["answer"]), "correct": bool(r["correct"]),
            "computed": json.loads(r["computed"]), "hint_seen": bool(r["hint_seen"]),
            "after_solution": bool(r["after_solution"]), "source": r["source"], "at": r["at"],
            "settings": json.loads(r["settings"])}


RESTORE = "restore"   # an attempt's source when it came from an uploaded progress file (regraded), not a Check


def progress(token: str, root: Path | None = None) -> dict:
    """exercise -> the first attempt made with Check (what the score counts), the latest answer and the tries; an
    exercise only restored from a file gets its latest restored attempt, marked restored (never a first attempt)."""
    out: dict = {}
    for a in attempts(token, root):
        row = out.get(a["exercise"])
        if row is None or (row["restored"] and a["source"] != RESTORE):
            tries = row["tries"] if row else 0
            row = out[a["exercise"]] = {**a, "tries": tries, "restored": a["source"] == RESTORE}
        elif row["restored"]:
            row.update({k: a[k] for k in ("answer", "correct", "computed", "at")})
        row["tries"] += 1
        row["latest"], row["latest_correct"] = a["answer"], a["correct"]
    return out


def first_attempts(attempts: list[dict]) -> dict:
    """(learner's name, exercise) -> the first attempt made with Check, from class_attempts (never a restored one)."""
    return {(a["name"], a["exercise"]): a for a in reversed(attempts) if a["source"] != RESTORE}   # the oldest wins


def hints(token: str, root: Path | None = None) -> set[str]:
    with closing(connect(root)) as conn:
        return {r[0] for r in conn.execute("SELECT exercise FROM hints WHERE learner = ?", (token,))}


def record_run(token: str, run_key: str, name: str, config: dict, root: Path | None = None) -> None:
    _write(root, lambda conn: conn.execute(
        "INSERT OR IGNORE INTO runs (learner, run_key, name, config, created) VALUES (?, ?, ?, ?, ?)",
        (token, run_key, name, json.dumps(config), time.time())))


def keep_history(run_key: str, history: list[HistoryRow], root: Path | None = None) -> None:
    """Copy a run's curve in, so the class keeps it after the run store has cleaned the run away."""
    _write(root, lambda conn: conn.execute("UPDATE runs SET history = ? WHERE run_key = ?",
                                           (json.dumps([row.to_dict() for row in history]), run_key)))


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
    return [{"name": r["name"], **_attempt(r)} for r in rows]


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
    return [ClassRun(r["learner_name"], r["run_key"], r["name"], json.loads(r["config"]), _kept_history(r["history"]))
            for r in rows]
