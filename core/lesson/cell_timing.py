"""The passage run with the recurrence written two ways (the scratch loop, torch's nn.RNN), timed on the
machine it runs on: what "the concise version" after the chapter's acts shows."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from core.claims import Claim, claim
from core.i18n import _
from core.checks import check_int
from core.lesson.passage import config


@dataclass(frozen=True)
class CellTiming:
    cell: str
    label: str
    seconds_per_epoch: float   # median over the epochs: training steps, a validation pass and a sample
    perplexity: float          # training perplexity after the last epoch


def time_cells(raw_text: str, cells: tuple[str, ...] = ("scratch", "torch"), epochs: int = 4,
               seed: int = 0, on_progress: Callable[[float, str], None] | None = None) -> list[CellTiming]:
    """The passage run for a few epochs with each cell: the same recurrence written two ways, timed here.
    on_progress(fraction done, the cell's label) is called as the runs go (a few times a second)."""
    from core.nn.cells import get_cell
    from core.runs.loop import train

    epochs = check_int("epochs", epochs, 2, 100)
    out = []
    for i, name in enumerate(cells):
        def report(p, i=i, label=get_cell(name).label):
            if on_progress is not None and p.total_steps:
                on_progress((i + p.step / p.total_steps) / len(cells), label)
        result = train(replace(config(seed), cell=get_cell(name).name, epochs=epochs), text=raw_text,
                       on_progress=report, report_every=0.2)
        times = np.diff([row.elapsed for row in result.history])
        out.append(CellTiming(name, get_cell(name).label, float(np.median(times)), result.history[-1].train_ppl))
    return out


def comparison(timings: list[CellTiming]) -> Claim:
    """Which of two timed cells was faster here, by how much, from the seconds per epoch measured."""
    if len(timings) != 2:
        raise ValueError(_("Compare exactly two timed cells."))
    a, b = sorted(timings, key=lambda t: t.seconds_per_epoch)
    ratio = b.seconds_per_epoch / a.seconds_per_epoch if a.seconds_per_epoch > 0 else float("inf")
    numbers = dict(faster=a.cell, ratio=ratio)
    if ratio < 1.1:
        return claim("timing.even", _("On this server the two took about the same time: {a:.3f} s and {b:.3f} s per "
                                      "epoch. They compute the same recurrence; at this model's size (128 units), "
                                      "neither way's overheads decide much.").format(a=a.seconds_per_epoch,
                                                                                     b=b.seconds_per_epoch), **numbers)
    return claim("timing.faster", _("On this server {fast} was {ratio:.1f} times as fast as {slow} ({a:.3f} s against "
                                    "{b:.3f} s per epoch), measured just now, so it can come out either way on another "
                                    "machine or under load. They compute the same recurrence: the difference is in how "
                                    "each is run, not in the maths.").format(
        fast=_(a.label), ratio=ratio, slow=_(b.label), a=a.seconds_per_epoch, b=b.seconds_per_epoch), **numbers)


CLOSE = 0.1    # perplexities within 10% of each other "differ a little"


def perplexities(timings: list[CellTiming]) -> Claim:
    """How far apart the two cells' training perplexities ended, and why they are not equal."""
    if len(timings) != 2:
        raise ValueError(_("Compare exactly two timed cells."))
    a, b = sorted(timings, key=lambda t: t.perplexity)
    apart = b.perplexity / a.perplexity - 1 if a.perplexity > 0 else float("inf")
    at = dict(a=a.perplexity, b=b.perplexity, apart=100 * apart)
    if apart <= CLOSE:
        return claim("timing.ppl_close", _("The training perplexities ({a:.2f} and {b:.2f}) differ a little because "
                                           "the two draw their random starting weights in a different order.").format(
            **at), apart=apart)
    return claim("timing.ppl_apart", _("The training perplexities ({a:.2f} and {b:.2f}) differ by {apart:.0f}% after "
                                       "these few epochs: the two draw their random starting weights in a different "
                                       "order, and a run this short has not yet forgotten where it started.").format(
        **at), apart=apart)

