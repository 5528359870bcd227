"""Solvers of the RNN cell lab's exercises: each reads a word with the lab's own cell (core.nn.cell_demo) or the
hand-written reference (core.nn.rnn_ref) and returns a Solution built from that run's numbers (core.exercises.bank
pairs them with their questions)."""
from __future__ import annotations

import numpy as np

from core.exercises.types import Solution
from core.i18n import _
from core.nn import cell_demo
from core.text import tokens


def state_size(s: dict) -> Solution:
    short, long = cell_demo.read_word(s["short"], s["h"]), cell_demo.read_word(s["long"], s["h"])
    n_short, n_long = short.cache.H[-1].shape[-1], long.cache.H[-1].shape[-1]
    text = (_("A step reads one letter and predicts the next, so a word of n letters takes n - 1 steps (its last letter "
              "is only predicted). Reading '{short}' ({short_steps} steps) the state holds {n_short} numbers; reading "
              "'{long}' ({long_steps} steps) it holds {n_long}. The state is overwritten at every step, never appended "
              "to.") if n_short == n_long else
            _("A step reads one letter and predicts the next, so a word of n letters takes n - 1 steps (its last letter "
              "is only predicted). Reading '{short}' ({short_steps} steps) the state holds {n_short} numbers; reading "
              "'{long}' ({long_steps} steps) it holds {n_long}. The state grew with the text."))
    at = dict(short=s["short"], short_steps=short.steps, n_short=n_short, long=s["long"], long_steps=long.steps,
              n_long=n_long, all=n_long * long.steps)
    return Solution(float(n_long), text.format(**at),
                    {_("state after the short word"): n_short, _("state after the long word"): n_long},
                    {float(long.steps): _("{long_steps} is the number of steps it read; the state is overwritten at "
                                          "each step, not lengthened.").format(**at),
                     float(n_long * long.steps): _("{all} is {n_long} numbers for every step: the state is not "
                                                   "appended to.").format(**at)})


def lookup_is_a_row(s: dict) -> Solution:
    run = cell_demo.read_word(s["word"], s["h"])
    look = cell_demo.one_hot_lookup(run, s["t"])
    row_sum = run.params["W_xh"].sum(axis=0)
    answer = "a row of W_xh" if look.difference == 0 else "the sum of W_xh's rows" \
        if np.allclose(look.product, row_sum) else "something else"
    text = (_("At step {t} the product X_t·W_xh and row {row} of W_xh differ by at most {diff:.1e}: the single 1 in "
              "the one-hot row picks that row.") if answer == "a row of W_xh" else
            _("At step {t} the product X_t·W_xh and row {row} of W_xh differ by at most {diff:.1e}."))
    return Solution(answer, text.format(t=s["t"], row=look.token_id, diff=look.difference),
                    {_("largest difference from the row"): look.difference,
                     _("largest difference from the sum of rows"): float(np.max(np.abs(look.product - row_sum)))})


def shared_matrices(s: dict) -> Solution:
    """Recompute every step from the previous state with the one W_hh the network holds: if each matches the
    forward pass, one matrix served every step."""
    run = cell_demo.read_word(s["word"], s["h"])
    p, worst = run.params, 0.0
    for t in range(1, run.steps + 1):
        step = run.step(t)
        again = np.tanh(step.X @ p["W_xh"] + step.H_prev @ p["W_hh"] + p["b_h"])
        worst = max(worst, float(np.max(np.abs(again - step.H))))
    distinct = 1.0 if worst < 1e-12 else float(run.steps)
    text = (_("Recomputing each of the {n} steps of '{word}' from the previous state with the network's one W_hh "
              "reproduces the forward pass to {worst:.1e}: the same matrix is reused at every step, which is also why "
              "its gradient is a sum over steps.") if distinct == 1 else
            _("Recomputing each of the {n} steps of '{word}' from the previous state with the network's one W_hh "
              "reproduces the forward pass to {worst:.1e}: the steps did not all use that matrix."))
    at = dict(n=run.steps, word=s["word"], worst=worst, letters=run.steps + 1)
    return Solution(distinct, text.format(**at), {_("steps"): run.steps, _("largest mismatch"): worst},
                    {float(run.steps): _("{n} is one per step, but every arrow carries the same W_hh.").format(**at),
                     float(run.steps + 1): _("{letters} counts the letters; the arrows all carry one W_hh.").format(
                         **at)})


def output_size(s: dict) -> Solution:
    """The book's exercise 1: the output layer scores every token of the vocabulary, counted from the corpus."""
    from core.text.corpus import clean, load_corpus
    vocab = tokens.CharVocab.build(clean(load_corpus(), "letters"))
    V = len(vocab)
    letters = sum(t.isalpha() for t in vocab.idx_to_token)
    at = dict(V=V, letters=letters, fewer=V - 1)
    return Solution(float(V), _("The cleaned book has {V} tokens: {letters} letters, the space and one id for anything "
                                "unknown. At each step the output layer gives each of them a score (O_t has {V} "
                                "numbers per example), and softmax turns the scores into the next character's "
                                "probabilities.").format(**at), {_("tokens"): V},
                    {float(V - 1): _("{fewer} leaves out the id for unknown characters, which is a token too.").format(
                        **at),
                     float(letters): _("{letters} counts the letters only: the space and the unknown id are tokens "
                                       "too.").format(**at),
                     1.0: _("1 would be a single guess; the model gives every one of the {V} tokens a "
                            "probability.").format(**at)})


def reaches_back(s: dict) -> Solution:
    """The book's exercise 2: change only the first character and see the last state move, with a state that
    stays h numbers long."""
    from core.nn import rnn_ref
    vocab = tokens.CharVocab([tokens.UNK] + sorted(set("abcdefghijklmnopqrstuvwxyz ")))
    params = rnn_ref.init_params(len(vocab), s["h"], None, seed=0, scale=1.0)
    text, other = s["text"], s["swap"] + s["text"][1:]
    finals = [rnn_ref.forward(params, vocab.encode(t)[None, :]).H[-1][0] for t in (text, other)]
    moved = float(np.max(np.abs(finals[0] - finals[1])))
    answer = "its hidden state carries a summary of every earlier token forward" if moved > 1e-9 else \
        "it keeps every earlier token in memory"
    return Solution(answer, _("Reading {text} and {other}, which differ only in their first character, the state after "
                              "reading all {n} characters (one per step, {n} steps) differs by up to {moved:.3g}, and it "
                              "is {size} numbers either way: the first character still reaches the last prediction, "
                              "through a state of fixed size that each step rewrites.").format(
                        text=repr(text), other=repr(other), n=len(text), moved=moved, size=finals[0].shape[0]),
                    {_("largest change in the last state"): moved, _("state size"): int(finals[0].shape[0])})
