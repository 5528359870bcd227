"""What the Training lab says about a run's curve, as claims (core.claims) built from its history."""
from __future__ import annotations

import math

from core.claims import Claim, claim
from core.i18n import _
from core.runs.record import HistoryRow


def train_above_val(rows: list[HistoryRow]) -> Claim | None:
    """Why training perplexity can sit above validation perplexity, said only when it does (None otherwise)."""
    last = rows[-1] if rows else None
    if last is None or last.epoch == 0 or not math.isfinite(last.train_ppl) or not last.train_ppl > last.val_ppl:
        return None
    return claim("run.train_above_val", _(
        "After epoch {epoch} the training perplexity ({train:.2f}) is above the validation perplexity ({val:.2f}): the "
        "training figure is averaged over the epoch's steps while the weights were still improving (and with dropout "
        "on, if any), the validation figure is measured after the epoch with the final weights. It is not a sign that "
        "the validation text is easier.").format(epoch=last.epoch, train=last.train_ppl, val=last.val_ppl),
        train=last.train_ppl, val=last.val_ppl)
