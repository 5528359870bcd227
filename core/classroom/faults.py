"""When the class records cannot be kept: a full disk, a folder or file that cannot be written, a damaged file.
Each is a StorageFault (a ValueError, said in words), so a page tells the learner and keeps their answer in the tab
until the records can take it. A damaged file is found by SQLite's integrity check when a process first opens it
(and by any query that meets a damaged page); from then on nothing reads or writes it, until whoever runs the
class sets it aside (kept, renamed) and fresh records start: never on their own."""
from __future__ import annotations

import errno
import sqlite3
import time
from pathlib import Path

from core.i18n import _

FULL, READ_ONLY, DAMAGED = "full", "read-only", "damaged"
_CHECKED: dict[Path, tuple[int, bool]] = {}    # a records file -> (its inode, whether it passed the check)


class StorageFault(ValueError):
    """The class records cannot keep anything just now; `what` is FULL, READ_ONLY or DAMAGED."""

    def __init__(self, message: str, what: str, path: Path | None = None):
        super().__init__(message)
        self.what, self.path = what, path


def damaged(path: Path) -> StorageFault:
    return StorageFault(_(
        "The class records file {name} (in the runs folder, RNNLAB_RUNS_DIR) is damaged: SQLite's integrity check "
        "failed. Nothing is read from it or written into it any more, so no answer can land in a damaged file. The "
        "teacher (or whoever runs this server) sets it aside on the Class page, or with `python -m core classroom "
        "set-aside`: it is kept, renamed, and fresh records start.").format(name=path.name), DAMAGED, path)


def fault(exc: BaseException, path: Path) -> StorageFault | None:
    """The fault an error from SQLite or the file system is, in words; None for any other error."""
    text = str(exc).lower()
    code = getattr(exc, "errno", None)
    name = getattr(exc, "sqlite_errorname", "") or ""
    if code in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG) or "full" in text or name.startswith("SQLITE_IOERR"):
        return StorageFault(_("The server's disk is full (or failing, or this server may not write more), so the "
                              "class records cannot keep anything new just now. Whoever runs this server frees some "
                              "space."), FULL, path)
    if code in (errno.EROFS, errno.EACCES, errno.EPERM) or "readonly" in text or "read-only" in text:
        return StorageFault(_("The class records ({name} in the runs folder) cannot be written: the folder or the "
                              "file is read-only. Whoever runs this server makes RNNLAB_RUNS_DIR writable.").format(
            name=path.name), READ_ONLY, path)
    if isinstance(exc, sqlite3.DatabaseError) and any(w in text for w in ("malformed", "not a database", "corrupt")):
        forget(path, healthy=False)
        return damaged(path)
    return None


def _inode(path: Path) -> int:
    try:
        return path.stat().st_ino
    except OSError:
        return -1


def forget(path: Path, healthy: bool | None = None) -> None:
    """Record what is known of this file (healthy False: damaged), or with None forget it (check it again)."""
    if healthy is None:
        _CHECKED.pop(path, None)
    else:
        _CHECKED[path] = (_inode(path), healthy)


def check_once(conn: sqlite3.Connection, path: Path) -> None:
    """Raise StorageFault (DAMAGED) if this file fails SQLite's quick integrity check: run once per file per process
    (again when the file was replaced), remembered after."""
    known = _CHECKED.get(path)
    if known is not None and known[0] == _inode(path):
        if not known[1]:
            raise damaged(path)
        return
    try:
        rows = [r[0] for r in conn.execute("PRAGMA quick_check")]
    except sqlite3.DatabaseError as exc:
        rows = [str(exc)]
    forget(path, healthy=rows == ["ok"])
    if rows != ["ok"]:
        raise damaged(path)


def set_aside(path: Path) -> Path | None:
    """Rename a damaged records file (with its -wal and -shm companions) to classroom.damaged-<UTC time>.sqlite3
    beside it, so the next connection starts fresh records; returns the new name (None when there was no file)."""
    if not path.exists():
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    kept = path.with_name(f"{path.stem}.damaged-{stamp}{path.suffix}")
    for suffix in ("", "-wal", "-shm"):
        part = Path(str(path) + suffix)
        if part.exists():
            part.rename(Path(str(kept) + suffix))
    forget(path)
    return kept


def teaches_in(path: Path, teacher_token: str) -> bool:
    """Whether this teacher key is a class's in the (damaged) file, read without writing; False when unreadable."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return conn.execute("SELECT 1 FROM classes WHERE teacher_token = ?", (teacher_token,)).fetchone() is not None
        finally:
            conn.close()
    except sqlite3.Error:
        return False
