"""What Act 4 says about a passage run's curves, as claims (core.claims) built from its history: whether training
perplexity fell, and whether the held-out perplexity turned back up (overfitting)."""
from __future__ import annotations

import math

from core.claims import Claim, claim
from core.runs.record import HistoryRow

OVERFIT = 1.5    # overfitting is named when the last held-out perplexity is over 1.5 times its lowest, later on


def passage_run(history: list[HistoryRow], vocab_size: int, seconds: float | None, where: str = "here") -> list[Claim]:
    """The run in numbers; `where` says where its time was measured (this server, or the machine that stored it)."""
    if not history:
        raise ValueError("The run has no epochs yet.")
    first, last = history[0], history[-1]
    took = f" in {seconds:.1f} s ({where})" if seconds else ""
    moved = "falls" if last.train_ppl < first.train_ppl else "goes"
    out = [claim(f"passage.train_{'falls' if moved == 'falls' else 'not_falling'}",
                 f"Training perplexity {moved} from {first.train_ppl:.1f} (a uniform guess over {vocab_size} "
                 f"characters is {vocab_size}) to {last.train_ppl:.2f} after {last.epoch} epochs{took}.",
                 first=first.train_ppl, last=last.train_ppl)]
    held = [r for r in history if math.isfinite(r.val_ppl)]
    if not held:
        return out
    best = min(held, key=lambda r: r.val_ppl)
    if best.epoch < last.epoch and last.val_ppl > OVERFIT * best.val_ppl:
        out.append(claim("passage.overfits", f"On the text after the passage, perplexity is lowest at epoch "
                         f"{best.epoch} ({best.val_ppl:.1f}) and then climbs to {last.val_ppl:.1f}: from there on the "
                         "network overfits, memorising the passage rather than learning anything that carries over "
                         "to new text.", best=best.val_ppl, best_epoch=best.epoch, last=last.val_ppl))
    else:
        out.append(claim("passage.held_out", f"On the text after the passage it goes from {held[0].val_ppl:.1f} to "
                         f"{last.val_ppl:.1f}.", first=held[0].val_ppl, last=last.val_ppl))
    return out
