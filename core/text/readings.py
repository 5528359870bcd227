"""What Text to tokens and Act 2 say about counting n-grams, as claims (core.claims) built from the counts: how much
of the possible contexts a text shows, and how a counting model fares against an RNN as n grows."""
from __future__ import annotations

from core.claims import Claim, claim
from core.text.ngrams import Coverage

MOST = 0.5     # "most possible n-grams never occur" when the text shows fewer than half of them


def coverage(cov: list[Coverage]) -> Claim:
    """The longest n counted: distinct n-grams against the possible ones, and how often those seen are seen."""
    if not cov:
        raise ValueError("Count the n-grams of a text first.")
    last = cov[-1]
    each = last.total / last.distinct if last.distinct else 0.0
    head = (f"With n = {last.n}, the text shows {last.distinct:,} distinct n-grams out of the {last.possible:,} "
            f"that its {last.symbols} token types could form ({100 * last.share:.2g}%), each seen {each:.1f} times "
            "on average.")
    if last.share < MOST:
        return claim("ngrams.most_unseen", f"{head} Most possible contexts never occur even once, so a count table "
                     "cannot say anything about them. Smoothing patches this; a recurrent network avoids it by "
                     "squeezing the whole past into a fixed-size state.", share=last.share, each=each, n=last.n)
    return claim("ngrams.mostly_seen", f"{head} This text is long enough, or its alphabet small enough, that most "
                 f"possible {last.n}-grams do occur; with longer n the possible ones multiply by {last.symbols} at "
                 "each step and the table soon runs out of data.", share=last.share, each=each, n=last.n)


def _falls(values: list[float]) -> bool:
    return all(b <= a for a, b in zip(values, values[1:]))


def counting_model(rows: list[dict], model_ppl: float, held_out_chars: int, alpha: float) -> list[Claim]:
    """The n-gram models (rows from core.text.ngram_lm.sweep, n = 1, 2, ...) against the RNN on held-out text."""
    if not rows:
        raise ValueError("Score at least one n-gram model first.")
    best = min(rows, key=lambda r: r["heldout_ppl"])
    last = rows[-1]
    head = (f"On the last {held_out_chars:,} characters, held out: the best n-gram model (n = {best['n']}, "
            f"α = {alpha:g}) reaches perplexity {best['heldout_ppl']:.2f} ({best['heldout_bits']:.2f} bits per "
            "character)")
    if best is last:
        out = [claim("ngram_lm.best_last", f"{head}, at the longest n counted; only "
                     f"{100 * last['seen_share']:.0f}% of the held-out {last['n']}-grams were ever seen in "
                     "training.", best=best["n"])]
    else:
        out = [claim("ngram_lm.turns_up", f"{head}; at n = {last['n']} it is back up at {last['heldout_ppl']:.2f}, "
                     f"with only {100 * last['seen_share']:.0f}% of the held-out {last['n']}-grams ever seen in "
                     "training: longer contexts help until the table runs out of data.", best=best["n"])]
    train = [r["train_ppl"] for r in rows]
    if _falls(train):
        out.append(claim("ngram_lm.train_falls", f"On its own training text the table's perplexity keeps falling, "
                         f"from {train[0]:.2f} to {train[-1]:.2f}: it memorises the text it counted.",
                         first=train[0], last=train[-1]))
    else:
        out.append(claim("ngram_lm.train_not_falling", f"On its own training text the table's perplexity goes from "
                         f"{train[0]:.2f} to {train[-1]:.2f}, not falling at every n (with α = {alpha:g} the added "
                         "counts outweigh the real ones for long contexts).", first=train[0], last=train[-1]))
    better = model_ppl < best["heldout_ppl"]
    out.append(claim("ngram_lm.rnn_better" if better else "ngram_lm.rnn_not_better",
                     f"The pretrained RNN scores {model_ppl:.2f}, "
                     + (f"{best['heldout_ppl'] / model_ppl:.2f} times lower than the best table: it reads the whole "
                        "past through its state and does not run out of data this way." if better else
                        "no better than the best table on this text."), rnn=model_ppl, best=best["heldout_ppl"]))
    return out
