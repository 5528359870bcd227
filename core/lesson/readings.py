"""What Act 4 says about a passage run's curves, as claims (core.claims) built from its history: whether training
perplexity fell, and whether the held-out perplexity turned back up (overfitting)."""
from __future__ import annotations

import math

from core.claims import Claim, claim
from core.i18n import N_, _
from core.lesson.store import COMMAND
from core.runs.record import HistoryRow

OVERFIT = 1.5    # overfitting is named when the last held-out perplexity is over 1.5 times its lowest, later on


def passage_run(history: list[HistoryRow], vocab_size: int, seconds: float | None,
                where: str = N_("here")) -> list[Claim]:
    """The run in numbers; `where` says where its time was measured (this server, or the machine that stored it)."""
    if not history:
        raise ValueError(_("The run has no epochs yet."))
    first, last = history[0], history[-1]
    falls = last.train_ppl < first.train_ppl
    text = {(True, True): _("Training perplexity falls from {first:.1f} (a uniform guess over {V} characters is {V}) "
                            "to {last:.2f} after {epochs} epochs in {seconds:.1f} s ({where})."),
            (True, False): _("Training perplexity falls from {first:.1f} (a uniform guess over {V} characters is {V}) "
                             "to {last:.2f} after {epochs} epochs."),
            (False, True): _("Training perplexity goes from {first:.1f} (a uniform guess over {V} characters is {V}) "
                             "to {last:.2f} after {epochs} epochs in {seconds:.1f} s ({where})."),
            (False, False): _("Training perplexity goes from {first:.1f} (a uniform guess over {V} characters is {V}) "
                              "to {last:.2f} after {epochs} epochs.")}[(falls, bool(seconds))]
    out = [claim(f"passage.train_{'falls' if falls else 'not_falling'}",
                 text.format(first=first.train_ppl, V=vocab_size, last=last.train_ppl, epochs=last.epoch,
                             seconds=seconds or 0.0, where=_(where)), first=first.train_ppl, last=last.train_ppl)]
    held = [r for r in history if math.isfinite(r.val_ppl)]
    if not held:
        return out
    best = min(held, key=lambda r: r.val_ppl)
    if best.epoch < last.epoch and last.val_ppl > OVERFIT * best.val_ppl:
        out.append(claim("passage.overfits", _(
            "On the text after the passage, perplexity is lowest at epoch {epoch} ({best:.1f}) and then climbs to "
            "{last:.1f}: from there on the network overfits, memorising the passage rather than learning anything that "
            "carries over to new text.").format(epoch=best.epoch, best=best.val_ppl, last=last.val_ppl),
            best=best.val_ppl, best_epoch=best.epoch, last=last.val_ppl))
    else:
        out.append(claim("passage.held_out", _("On the text after the passage it goes from {first:.1f} to "
                                               "{last:.1f}.").format(first=held[0].val_ppl, last=last.val_ppl),
                         first=held[0].val_ppl, last=last.val_ppl))
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
    return claim("passage.repeats", _(
        "On another CPU the same seed repeats the training perplexity and the lowest held-out point to the digits "
        "shown, but not the height of the climb: deep in overfitting the network's confident mistakes on new text "
        "magnify the last bits of each sum, which CPUs round differently (seed 0 ended anywhere from {lo:.0f} to "
        "{hi:.0f} on three code paths of one CPU). On the machine that stored the run, a retrain with seed 0 repeats "
        "every digit.").format(lo=lo, hi=hi), lo=lo, hi=hi)


def against_stored(mine: list[HistoryRow], stored: list[HistoryRow]) -> Claim:
    """A finished retrain with the stored run's seed, set beside the stored run: every digit, or what differs."""
    if not mine or not stored:
        raise ValueError(_("Compare two finished runs."))
    same = [(r.train_ppl, r.val_ppl) for r in mine] == [(r.train_ppl, r.val_ppl) for r in stored]
    if same:
        return claim("passage.same_as_stored", _("Your run repeats the stored run to every digit: {ppl:.1f} held out "
                                                 "after {epochs} epochs, as stored.").format(
            ppl=mine[-1].val_ppl, epochs=mine[-1].epoch), same=True)
    best_m, best_s = (min(h, key=lambda r: r.val_ppl) for h in (mine, stored))
    agree = (f"{mine[-1].train_ppl:.2f}" == f"{stored[-1].train_ppl:.2f}" and best_m.epoch == best_s.epoch
             and f"{best_m.val_ppl:.1f}" == f"{best_s.val_ppl:.1f}")
    at = dict(mine=mine[-1].val_ppl, stored=stored[-1].val_ppl)
    if agree:
        return claim("passage.rounding", _(
            "Your run ended at {mine:.1f} held out where the stored run ended at {stored:.1f}. Its training perplexity "
            "and lowest held-out point agree to the digits shown: this server rounds some sums differently from the "
            "machine that stored the run, and overfitting magnifies the difference.").format(**at),
            same=False, agree=True)
    return claim("passage.differs", _(
        "Your run ended at {mine:.1f} held out where the stored run ended at {stored:.1f}. Even its training "
        "perplexity or lowest point differ, so more than rounding has changed since the run was stored (the code or "
        "its libraries): `{command}` stores it anew.").format(command=COMMAND, **at), same=False, agree=False)
