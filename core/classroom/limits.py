"""A class's training limits, set by its teacher: the most epochs a run may ask for, and how many runs may train or
wait at once, per learner and in the whole class. One learner asking for 10,000 epochs took the server's only CPU
slot for over an hour; with limits the class shares it, and the teacher can stop any run (pages/classroom.py)."""
from __future__ import annotations

from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from core.checks import check_int
from core.i18n import _, ngettext
from core.classroom.db import connect, write

MOST_EPOCHS = 10_000     # the Training lab's own bound


@dataclass(frozen=True)
class Limits:
    epochs: int = 100          # the most epochs one run may ask for (the Training lab's default is 100)
    per_learner: int = 1       # runs one learner may have training or waiting at once
    per_class: int = 0         # runs the class may have training or waiting at once (0: as many as the server takes)

    def __post_init__(self):
        check_int("The most epochs a run", self.epochs, 1, MOST_EPOCHS)
        check_int("Runs at once for each learner", self.per_learner, 1, 50)
        check_int("Runs at once for the class", self.per_class, 0, 500)

    def words(self) -> str:
        """The limits as the Training page states them to a learner of the class."""
        mine = (_("at most {epochs:,} epochs a run; one run of yours at a time") if self.per_learner == 1 else
                _("at most {epochs:,} epochs a run; {runs} runs of yours at a time"))
        said = mine.format(epochs=self.epochs, runs=self.per_learner)
        if self.per_class == 0:
            return said
        return ngettext("{said}; the whole class, {n} run at once", "{said}; the whole class, {n} runs at once",
                        self.per_class).format(said=said, n=self.per_class)

    def refusal(self, epochs: int, mine: int, class_active: int) -> str | None:
        """Why a run of `epochs` epochs may not start, given the learner's and the class's runs training or waiting
        now (None: it may)."""
        if epochs > self.epochs:
            return _("Your class allows at most {epochs:,} epochs a run (your teacher sets this): lower Epochs to "
                     "{epochs:,} or fewer.").format(epochs=self.epochs)
        if mine >= self.per_learner:
            return ngettext("Your class allows {n} run of yours at a time: stop one, or let it finish, then start this "
                            "one.", "Your class allows {n} runs of yours at a time: stop one, or let it finish, then "
                            "start this one.", self.per_learner).format(n=self.per_learner)
        if self.per_class and class_active >= self.per_class:
            return ngettext("Your class has {n} run training or waiting, the most your teacher allows at once "
                            "({most}): try again when one finishes.", "Your class has {n} runs training or waiting, the "
                            "most your teacher allows at once ({most}): try again when one finishes.",
                            class_active).format(n=class_active, most=self.per_class)
        return None


def class_limits(class_id: int, root: Path | None = None) -> Limits:
    with closing(connect(root)) as conn:
        row = conn.execute("SELECT max_epochs, learner_runs, class_runs FROM classes WHERE id = ?",
                           (class_id,)).fetchone()
    return Limits() if row is None else Limits(row[0], row[1], row[2])


def set_limits(class_id: int, new: Limits, root: Path | None = None) -> None:
    write(root, lambda conn: conn.execute(
        "UPDATE classes SET max_epochs = ?, learner_runs = ?, class_runs = ? WHERE id = ?",
        (new.epochs, new.per_learner, new.per_class, class_id)))
