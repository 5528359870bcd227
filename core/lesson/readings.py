"""What Act 4 says about a passage run's curves, as claims (core.claims) built from its history: whether training
perplexity fell, and whether the held-out perplexity turned back up (overfitting)."""
from __future__ import annotations

import math

from core.claims import Claim, claim
from core.lesson.store import COMMAND
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


# bench/passage_paths.py, seed 0 on three code paths of one CPU (docs/performance.md, "Act 4 on other CPUs"): the
# last held-out perplexity ranged over 78.8-107.9, while the training perplexity (1.142-1.143) and the lowest
# held-out point (epoch 6, 10.83-10.84) repeated to the digits the page prints.
CLIMB_SPREAD = (78.8, 107.9)


def what_repeats(history: list[HistoryRow]) -> Claim | None:
    """Which of an overfitting run's numbers a retrain on another CPU repeats (None when it does not overfit)."""
    said = passage_run(history, 2, None)
    if said[-1].kind != "passage.overfits":
        return None
    lo, hi = CLIMB_SPREAD
    return claim("passage.repeats", "On another CPU the same seed repeats the training perplexity and the lowest "
                 "held-out point to the digits shown, but not the height of the climb: deep in overfitting the "
                 "network's confident mistakes on new text magnify the last bits of each sum, which CPUs round "
                 f"differently (seed 0 ended anywhere from {lo:.0f} to {hi:.0f} on three code paths of one CPU). On "
                 "the machine that stored the run, a retrain with seed 0 repeats every digit.", lo=lo, hi=hi)


def against_stored(mine: list[HistoryRow], stored: list[HistoryRow]) -> Claim:
    """A finished retrain with the stored run's seed, set beside the stored run: every digit, or what differs."""
    if not mine or not stored:
        raise ValueError("Compare two finished runs.")
    same = [(r.train_ppl, r.val_ppl) for r in mine] == [(r.train_ppl, r.val_ppl) for r in stored]
    if same:
        return claim("passage.same_as_stored", f"Your run repeats the stored run to every digit: "
                     f"{mine[-1].val_ppl:.1f} held out after {mine[-1].epoch} epochs, as stored.", same=True)
    best_m, best_s = (min(h, key=lambda r: r.val_ppl) for h in (mine, stored))
    agree = (f"{mine[-1].train_ppl:.2f}" == f"{stored[-1].train_ppl:.2f}" and best_m.epoch == best_s.epoch
             and f"{best_m.val_ppl:.1f}" == f"{best_s.val_ppl:.1f}")
    head = f"Your run ended at {mine[-1].val_ppl:.1f} held out where the stored run ended at {stored[-1].val_ppl:.1f}."
    if agree:
        return claim("passage.rounding", f"{head} Its training perplexity and lowest held-out point agree to the "
                     "digits shown: this server rounds some sums differently from the machine that stored the run, "
                     "and overfitting magnifies the difference.", same=False, agree=True)
    return claim("passage.differs", f"{head} Even its training perplexity or lowest point differ, so more than "
                 "rounding has changed since the run was stored (the code or its libraries): `{COMMAND}` stores it "
                 "anew.", same=False, agree=False)
