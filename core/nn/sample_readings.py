"""What the Sampling lab says about a sample, as claims (core.claims) built from the text and states it shows:
whether greedy decoding fell into a loop, whether the sample is more varied than greedy text, and how much of the
hidden state sits near tanh's limits."""
from __future__ import annotations

import numpy as np

from core.checks import check_real
from core.claims import Claim, claim
from core.i18n import _
from core.nn.probe import distinct_ngram_share

NEAR_LIMIT = 0.9     # |h| beyond this is "near tanh's limits"
MUCH = 0.3           # "much of their time" when at least this share of the cells shown is near a limit


def loop_of(text: str) -> tuple[int, int] | None:
    """(period, start) of the repeating tail of text: the shortest period p whose repetition covers the text from
    `start` to the end at least twice over (text[j] == text[j + p] for every j >= start); None when no tail repeats
    twice."""
    best = None
    for p in range(1, len(text) // 2 + 1):
        start = len(text) - p
        while start > 0 and text[start - 1] == text[start - 1 + p]:
            start -= 1
        if len(text) - start >= 2 * p and (best is None or start < best[1]):
            best = (p, start)
    return best


def greedy(greedy_text: str, sampled_text: str) -> Claim:
    """Greedy decoding on the prefix: the loop it fell into (if any) and its share of distinct 3-grams (the sample's
    share against it is variety's to say)."""
    g, s = distinct_ngram_share(greedy_text), distinct_ngram_share(sampled_text)
    loop = loop_of(greedy_text)
    if loop and len(greedy_text) - loop[1] >= max(3 * loop[0], 12):
        p, start = loop
        piece = greedy_text[start:start + p]
        text = (_("Greedy decoding always takes the single likeliest next character. Here from the start it is caught "
                  "in a phrase that leads back to itself, “{piece}” ({p} characters), and repeats it to the end, so "
                  "only {share:.0f}% of its 3-grams are distinct.") if start == 0 else
                _("Greedy decoding always takes the single likeliest next character. Here after {start} characters it "
                  "is caught in a phrase that leads back to itself, “{piece}” ({p} characters), and repeats it to the "
                  "end, so only {share:.0f}% of its 3-grams are distinct."))
        return claim("greedy.loop", text.format(start=start, piece=piece, p=p, share=100 * g),
                     period=p, start=start, greedy=g, sampled=s)
    return claim("greedy.no_loop", _("Greedy decoding always takes the single likeliest next character. Here it has "
                                     "not fallen into a repeating loop within {n} characters; {share:.0f}% of its "
                                     "3-grams are distinct.").format(n=len(greedy_text), share=100 * g),
                 greedy=g, sampled=s)


SAME_VARIETY = 1.2   # two texts whose shares of distinct 3-grams are within this factor either way are as varied


def variety(greedy_text: str, sampled_text: str) -> Claim:
    """Whether the sampled text is more varied than greedy decoding's, by their shares of distinct 3-grams: more
    varied only beyond SAME_VARIETY times greedy's share, as repetitive within that factor either way."""
    g, s = distinct_ngram_share(greedy_text), distinct_ngram_share(sampled_text)
    at = dict(sampled=100 * s, greedy=100 * g, within=SAME_VARIETY)
    if s > SAME_VARIETY * g:
        return claim("variety.more", _("Sampling keeps the text varied: {sampled:.0f}% of the sample's 3-grams are "
                                       "distinct, against {greedy:.0f}% of greedy decoding's.").format(**at),
                     greedy=g, sampled=s)
    if s * SAME_VARIETY < g:
        return claim("variety.less", _("Here the sample repeats itself more than greedy decoding: {sampled:.0f}% of "
                                       "the sample's 3-grams are distinct, against {greedy:.0f}% of greedy "
                                       "decoding's.").format(**at), greedy=g, sampled=s)
    return claim("variety.same", _("Here the sample is about as repetitive as greedy decoding ({sampled:.0f}% of the "
                                   "sample's 3-grams are distinct, against {greedy:.0f}% of greedy decoding's, within "
                                   "{within:g} times): at this temperature and filter it keeps to the likeliest "
                                   "characters too.").format(**at), greedy=g, sampled=s)


def saturation(states: np.ndarray) -> Claim:
    """How many of the hidden-state cells shown are near tanh's limits (|h| > NEAR_LIMIT)."""
    states = np.asarray(states, dtype=np.float64)
    if states.size == 0:
        raise ValueError(_("No hidden states to read: the text is empty."))
    share = check_real("share", float(np.mean(np.abs(states) > NEAR_LIMIT)), 0.0, 1.0)
    at = dict(share=100 * share, limit=NEAR_LIMIT)
    if share >= MUCH:
        return claim("hidden.saturated", _("{share:.0f}% of the cells shown are beyond ±{limit:g}: these tanh units "
                                           "spend much of their time near their limits, so watch where a row switches "
                                           "rather than its shade.").format(**at), share=share)
    return claim("hidden.inside", _("{share:.0f}% of the cells shown are beyond ±{limit:g}: most of these units work "
                                    "inside tanh's range here, so shades between the limits carry information "
                                    "too.").format(**at), share=share)
