"""A class's training limits, set by its teacher: the most epochs a run may ask for, and how many runs may train or
wait at once, per learner and in the whole class. One learner asking for 10,000 epochs took the server's only CPU
slot for over an hour; with limits the class shares it, and the teacher can stop any run (pages/classroom.py)."""
from __future__ import annotations

from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from core.checks import check_int
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
        each = "one run" if self.per_learner == 1 else f"{self.per_learner} runs"
        whole = ("" if self.per_class == 0 else
                 f"; the whole class, {self.per_class} run{'s' if self.per_class != 1 else ''} at once")
        return f"at most {self.epochs:,} epochs a run; {each} of yours at a time{whole}"

    def refusal(self, epochs: int, mine: int, class_active: int) -> str | None:
        """Why a run of `epochs` epochs may not start, given the learner's and the class's runs training or waiting
        now (None: it may)."""
        if epochs > self.epochs:
            return (f"Your class allows at most {self.epochs:,} epochs a run (your teacher sets this): lower Epochs "
                    f"to {self.epochs:,} or fewer.")
        if mine >= self.per_learner:
            return (f"Your class allows {self.per_learner} run{'s' if self.per_learner != 1 else ''} of yours at a "
                    "time: stop one, or let it finish, then start this one.")
        if self.per_class and class_active >= self.per_class:
            return (f"Your class has {class_active} run{'s' if class_active != 1 else ''} training or waiting, the "
                    f"most your teacher allows at once ({self.per_class}): try again when one finishes.")
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
