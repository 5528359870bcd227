"""What Text to tokens and Act 2 say about counting n-grams, as claims (core.claims) built from the counts: how much
of the possible contexts a text shows, and how a counting model fares against an RNN as n grows."""
from __future__ import annotations

from core.claims import Claim, claim
from core.i18n import _
from core.text.ngrams import Coverage

MOST = 0.5     # "most possible n-grams never occur" when the text shows fewer than half of them


def coverage(cov: list[Coverage]) -> Claim:
    """The longest n counted: distinct n-grams against the possible ones, and how often those seen are seen."""
    if not cov:
        raise ValueError(_("Count the n-grams of a text first."))
    last = cov[-1]
    each = last.total / last.distinct if last.distinct else 0.0
    at = dict(n=last.n, distinct=last.distinct, possible=last.possible, types=last.symbols, share=100 * last.share,
              each=each)
    if last.share < MOST:
        return claim("ngrams.most_unseen", _(
            "With n = {n}, the text shows {distinct:,} distinct n-grams out of the {possible:,} that its {types} token "
            "types could form ({share:.2g}%), each seen {each:.1f} times on average. Most possible contexts never "
            "occur even once, so a count table cannot say anything about them. Smoothing patches this; a recurrent "
            "network avoids it by squeezing the whole past into a fixed-size state.").format(**at),
            share=last.share, each=each, n=last.n)
    return claim("ngrams.mostly_seen", _(
        "With n = {n}, the text shows {distinct:,} distinct n-grams out of the {possible:,} that its {types} token "
        "types could form ({share:.2g}%), each seen {each:.1f} times on average. This text is long enough, or its "
        "alphabet small enough, that most possible {n}-grams do occur; with longer n the possible ones multiply by "
        "{types} at each step and the table soon runs out of data.").format(**at), share=last.share, each=each,
        n=last.n)


def _falls(values: list[float]) -> bool:
    return all(b <= a for a, b in zip(values, values[1:]))


def counting_model(rows: list[dict], model_ppl: float, held_out_chars: int, alpha: float) -> list[Claim]:
    """The n-gram models (rows from core.text.ngram_lm.sweep, n = 1, 2, ...) against the RNN on held-out text."""
    if not rows:
        raise ValueError(_("Score at least one n-gram model first."))
    best = min(rows, key=lambda r: r["heldout_ppl"])
    last = rows[-1]
    at = dict(chars=held_out_chars, best=best["n"], alpha=alpha, ppl=best["heldout_ppl"], bits=best["heldout_bits"],
              seen=100 * last["seen_share"], n=last["n"], back=last["heldout_ppl"])
    if best is last:
        out = [claim("ngram_lm.best_last", _(
            "On the last {chars:,} characters, held out: the best n-gram model (n = {best}, α = {alpha:g}) reaches "
            "perplexity {ppl:.2f} ({bits:.2f} bits per character), at the longest n counted; only {seen:.0f}% of the "
            "held-out {n}-grams were ever seen in training.").format(**at), best=best["n"])]
    else:
        out = [claim("ngram_lm.turns_up", _(
            "On the last {chars:,} characters, held out: the best n-gram model (n = {best}, α = {alpha:g}) reaches "
            "perplexity {ppl:.2f} ({bits:.2f} bits per character); at n = {n} it is back up at {back:.2f}, with only "
            "{seen:.0f}% of the held-out {n}-grams ever seen in training: longer contexts help until the table runs "
            "out of data.").format(**at), best=best["n"])]
    train = [r["train_ppl"] for r in rows]
    if _falls(train):
        out.append(claim("ngram_lm.train_falls", _("On its own training text the table's perplexity keeps falling, "
                                                   "from {first:.2f} to {last:.2f}: it memorises the text it "
                                                   "counted.").format(first=train[0], last=train[-1]),
                         first=train[0], last=train[-1]))
    else:
        out.append(claim("ngram_lm.train_not_falling", _(
            "On its own training text the table's perplexity goes from {first:.2f} to {last:.2f}, not falling at "
            "every n (with α = {alpha:g} the added counts outweigh the real ones for long contexts).").format(
            first=train[0], last=train[-1], alpha=alpha), first=train[0], last=train[-1]))
    better = model_ppl < best["heldout_ppl"]
    text = (_("The pretrained RNN scores {rnn:.2f}, {times:.2f} times lower than the best table: it reads the whole "
              "past through its state and does not run out of data this way.") if better else
            _("The pretrained RNN scores {rnn:.2f}, no better than the best table on this text."))
    out.append(claim("ngram_lm.rnn_better" if better else "ngram_lm.rnn_not_better",
                     text.format(rnn=model_ppl, times=best["heldout_ppl"] / model_ppl), rnn=model_ppl,
                     best=best["heldout_ppl"]))
    return out
