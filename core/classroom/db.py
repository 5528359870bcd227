"""The classroom's SQLite file: where it is, its schema (MIGRATIONS, applied in order and counted in SQLite's
user_version: a shipped migration is never edited, the next change is a new entry), connections in WAL mode, and
writes that wait out another process's write (write)."""
from __future__ import annotations

import secrets
import sqlite3
import time
from contextlib import closing
from pathlib import Path

from core.classroom.faults import DAMAGED, READ_ONLY, StorageFault, check_once, fault
from core.i18n import _

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
    # 3: the teacher's tools: joining open or closed; the exercises assigned to the class (its scores are out of
    # them); when a learner first saw an exercise (the time to answer); the value of a sweep each learner was handed
    """
    ALTER TABLE classes ADD COLUMN open INTEGER NOT NULL DEFAULT 1;
    CREATE TABLE assigned (class_id INTEGER NOT NULL REFERENCES classes(id), exercise TEXT NOT NULL,
                           PRIMARY KEY (class_id, exercise));
    CREATE TABLE opened (learner TEXT NOT NULL REFERENCES learners(token), exercise TEXT NOT NULL, at REAL NOT NULL,
                         PRIMARY KEY (learner, exercise));
    CREATE TABLE handed (learner TEXT NOT NULL REFERENCES learners(token), sweep TEXT NOT NULL, value TEXT NOT NULL,
                         at REAL NOT NULL, PRIMARY KEY (learner, sweep));
    """,
    # 4: a learner's resume code, typed on another device to go on there (an address never carries their token)
    """
    ALTER TABLE learners ADD COLUMN resume TEXT;
    CREATE UNIQUE INDEX learner_resume ON learners(resume) WHERE resume IS NOT NULL;
    """,
    # 5: how a learner's run ended (finished, stopped, diverged...), kept with its curve: a diverged run is drawn
    # as diverged on the sweep chart, not at the perplexity of the weights it fell back to
    """
    ALTER TABLE runs ADD COLUMN status TEXT NOT NULL DEFAULT '';
    """,
    # 6: the class's training limits, set by its teacher (core.classroom.limits)
    """
    ALTER TABLE classes ADD COLUMN max_epochs INTEGER NOT NULL DEFAULT 100;
    ALTER TABLE classes ADD COLUMN learner_runs INTEGER NOT NULL DEFAULT 1;
    ALTER TABLE classes ADD COLUMN class_runs INTEGER NOT NULL DEFAULT 0;
    """,
    # 7: whether the lab's figures (and the readings that may state the answer) were on the page when the learner
    # checked (NULL: not known, before this), and when the card they answered was first drawn (the time to answer)
    """
    ALTER TABLE attempts ADD COLUMN figures_shown INTEGER;
    ALTER TABLE attempts ADD COLUMN card_at REAL;
    """,
)


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


def write(root: Path | None, work):
    """work(conn) in one transaction, tried again while the database is busy beyond a try's timeout (it failed
    1 and 65 of 4,800 writes under overload, and the attempt was lost). ValueError in a learner's words when it
    stays busy; StorageFault (a ValueError) when the disk is full, the records are read-only or damaged."""
    for attempt in range(WRITE_TRIES):
        try:
            with closing(connect(root)) as conn, conn:
                conn.execute("BEGIN IMMEDIATE")   # the write lock first: what work reads stays true until it writes
                return work(conn)
        except (sqlite3.OperationalError, sqlite3.DatabaseError, OSError) as exc:
            if isinstance(exc, sqlite3.IntegrityError):
                raise
            if not _busy(exc):
                raise (fault(exc, database(root)) or exc) from None
        if attempt + 1 < WRITE_TRIES:
            _pause(attempt)
    raise ValueError(_("The class records are too busy to keep this just now (many answers at once): press the "
                       "button again in a moment."))


def connect(root: Path | None = None) -> sqlite3.Connection:
    """A connection to the classroom database, created and migrated to the newest schema when needed."""
    path = database(root)
    for attempt in range(WRITE_TRIES):
        conn = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, factory=Records)
            conn.path = path
            conn.execute("PRAGMA journal_mode=WAL")   # on a new file, answers "locked" at once while another
            check_once(conn, path)                    # connection creates it: tried again, as a write is
            break
        except (OSError, sqlite3.Error, StorageFault) as exc:
            if conn is not None:
                conn.close()
            found = exc if isinstance(exc, StorageFault) else fault(exc, path)
            if found is not None:
                raise found from None
            if not _busy(exc):
                raise StorageFault(_("The class records cannot be opened: the server's runs folder is not a folder "
                                     "it can write to. Whoever runs this server sets it with RNNLAB_RUNS_DIR."),
                                   READ_ONLY, path) from None
            if attempt + 1 == WRITE_TRIES:
                raise   # still busy: write() tries again, or says so in words
            _pause(attempt)
    conn.execute("PRAGMA foreign_keys=ON")
    conn.row_factory = sqlite3.Row
    migrate(conn)
    return conn


class Records(sqlite3.Connection):
    """A connection to the class records whose queries report a damaged file as the StorageFault it is."""

    path: Path

    def execute(self, *args):
        try:
            return super().execute(*args)
        except sqlite3.DatabaseError as exc:
            found = None if isinstance(exc, sqlite3.IntegrityError) else fault(exc, self.path)
            if found is not None and found.what == DAMAGED:
                raise found from None
            raise


def migrate(conn: sqlite3.Connection) -> int:
    """Apply the migrations this database has not had yet, each in its own transaction; return the version."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > len(MIGRATIONS):
        raise ValueError(_("The class records were written by a newer RNN Lab (schema {version}; this one knows "
                           "{known}).").format(version=version, known=len(MIGRATIONS)))
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
