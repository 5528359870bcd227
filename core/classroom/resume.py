"""A learner's resume code: eight letters and digits they type on another device to go on with their answers there.
An address never carries a learner's token (anyone it is sent to could answer as them), so moving to another
device is this code, typed, never a link. The teacher can read each learner's code and give one a new code, which
makes the old one stop working."""
from __future__ import annotations

from contextlib import closing
from pathlib import Path

from core.classroom.db import connect
from core.classroom.records import is_token, normal_code, with_fresh_code
from core.i18n import _

def shown(code: str) -> str:
    """A code as a learner reads it: ABCD-EFGH."""
    return f"{code[:4]}-{code[4:]}" if len(code) == 8 else code


def _give(token: str, root: Path | None, keep: bool) -> str:
    """The learner's code: the one they have when keep (else a new one), a new one stored when they have none."""
    def work(conn, code):
        row = conn.execute("SELECT resume FROM learners WHERE token = ?", (token,)).fetchone()
        if row is None:
            raise ValueError(_("That learner is not in the class records (any more)."))
        if keep and row[0]:
            return row[0]
        conn.execute("UPDATE learners SET resume = ? WHERE token = ?", (code, token))
        return code
    return with_fresh_code(root, work)


def resume_code(token: str, root: Path | None = None) -> str:
    """This learner's resume code, given now if they have none yet (a learner from before codes existed)."""
    if not is_token(token):
        raise ValueError(_("That is not a learner code."))
    return _give(token, root, keep=True)


def by_resume(code: object, root: Path | None = None) -> str | None:
    """The token of the learner with this resume code (typed in any case, with or without its dash), or None."""
    code = normal_code(code)
    if code is None:
        return None
    with closing(connect(root)) as conn:
        row = conn.execute("SELECT token FROM learners WHERE resume = ?", (code,)).fetchone()
    return None if row is None else row[0]


def class_resume_codes(class_id: int, root: Path | None = None) -> dict[str, str]:
    """Each learner's name in the class -> their resume code as shown ("" for one who joined before codes existed
    and has not opened a page since: they get theirs there). Only reads."""
    with closing(connect(root)) as conn:
        rows = conn.execute("SELECT name, resume FROM learners WHERE class_id = ? ORDER BY created",
                            (class_id,)).fetchall()
    return {r["name"]: shown(r["resume"] or "") for r in rows}


def new_resume_code(class_id: int, name: str, root: Path | None = None) -> str:
    """The teacher gives a learner of the class a new resume code (the old one stops working): returned as shown."""
    with closing(connect(root)) as conn:
        row = conn.execute("SELECT token FROM learners WHERE class_id = ? AND name = ?", (class_id, name)).fetchone()
    if row is None:
        raise ValueError(_("No one in this class is called {name} (any more).").format(name=repr(name)))
    return shown(_give(row[0], root, keep=False))
