"""How many parameters: an n-gram table, a fixed-window network, an RNN language model term by term, and a
trained model of any cell (core.nn.cells: its gates) and depth. Pure arithmetic, each checked against the model's
own parameter count in the tests."""
from __future__ import annotations

import math

from core.claims import Claim, claim
from core.checks import check_int
from core.i18n import N_, _, listing, ngettext, sentences

def ngram_table_size(vocab_size: int, k: int) -> int:
    """Entries of a (k+1)-gram table: a probability for each next token after each k-token context, |V|^(k+1)."""
    return check_int("vocab_size", vocab_size, 1) ** (check_int("k", k, 0, 1000) + 1)


def rnn_parameter_terms(vocab_size: int, embed_dim: int, hidden: int) -> dict[str, int]:
    """Parameters of a one-layer RNN language model, term by term (embedding, recurrent, output).
    embed_dim 0: one-hot inputs, so no embedding and W_xh is |V| x h."""
    V = check_int("vocab_size", vocab_size, 1)
    d = check_int("embed_dim", embed_dim, 0)
    h = check_int("hidden", hidden, 1)
    inputs = {N_("embedding E (|V| x d)"): V * d, N_("input weights W_xh (d x h)"): d * h} if d else \
        {N_("input weights W_xh (|V| x h)"): V * h}
    return {   # each term's name is data (its shape is read from it); _() translates it where it is shown
        **inputs,
        N_("recurrent weights W_hh (h x h)"): h * h,
        N_("hidden bias b_h (h)"): h,
        N_("output weights W_hq (h x |V|)"): h * V,
        N_("output bias b_q (|V|)"): V,
    }


def window_model_parameters(vocab_size: int, window: int, hidden: int) -> int:
    """Parameters of a fixed-window neural language model (the step from n-grams to RNNs): the last `window`
    tokens one-hot and side by side (window x |V| inputs), one hidden layer of h units, scores over |V|.
    Its input weights grow with the window; an RNN's do not, because it reads one token at a time."""
    V = check_int("vocab_size", vocab_size, 1)
    n = check_int("window", window, 1, 10_000)
    h = check_int("hidden", hidden, 1)
    return n * V * h + h + h * V + V


def input_parameters(vocab_size: int, hidden: int, embed_dim: int) -> int:
    """Weights between a token and the cell: |V| x h with one-hot inputs (embed_dim 0), else an embedding
    table |V| x d and then W_xh, d x h."""
    V = check_int("vocabulary size", vocab_size, 1)
    h = check_int("hidden units", hidden, 1)
    d = check_int("embedding size", embed_dim, 0)
    return V * h if d == 0 else V * d + d * h


def embedding_saves(vocab_size: int, hidden: int, embed_dim: int) -> int:
    """One-hot's input weights minus an embedding's (positive: the embedding is cheaper)."""
    return input_parameters(vocab_size, hidden, 0) - input_parameters(vocab_size, hidden, embed_dim)


def input_choice(cases: list[tuple[int, int, int]]) -> Claim:
    """Which input is cheaper, one-hot or an embedding, for each (|V|, h, d), and the rule that decides it."""
    if not cases:
        raise ValueError(_("Give at least one (|V|, h, d) to compare."))
    parts, cheaper = [], 0
    for V, h, d in cases:
        saves = embedding_saves(V, h, d)
        cheaper += saves > 0
        text = (_("|V| = {V:,}, h = {h}, d = {d}: the embedding is cheaper ({embedding:,} against {one_hot:,})")
                if saves > 0 else
                _("|V| = {V:,}, h = {h}, d = {d}: one-hot is cheaper ({embedding:,} against {one_hot:,})") if saves < 0
                else _("|V| = {V:,}, h = {h}, d = {d}: they cost the same ({embedding:,} against {one_hot:,})"))
        parts.append(text.format(V=V, h=h, d=d, embedding=input_parameters(V, h, d), one_hot=input_parameters(V, h, 0)))
    return claim("params.input_choice", _("An embedding costs |V|·d + d·h weights against one-hot's |V|·h, so it is "
                                          "cheaper exactly when d < |V|·h / (|V| + h), whether the vocabulary is small "
                                          "or large. In the table: {cases}.").format(cases=_("; ").join(parts)),
                 cheaper=cheaper, cases=len(cases))


def largest_terms(terms: dict[str, int]) -> Claim:
    """The RNN's parameter terms (rnn_parameter_terms) ranked: the two largest (every term tied with them named
    too), and W_hh against the largest when it is not among them, with the sizes the largest term grows with (the
    letters in its shape)."""
    if len(terms) < 2:
        raise ValueError(_("Give the RNN's parameter terms, at least two."))
    ranked = sorted(terms.items(), key=lambda kv: kv[1], reverse=True)
    (first, n1), n2 = ranked[0], ranked[1][1]
    top = [(k, v) for k, v in ranked if v >= n2]           # the two largest and any term tied with them
    if len({v for k, v in top}) == 1:
        names = [_(k) for k, v in top]
        text = _("Its largest terms here, tied at {n:,} each, are {names} and {last}.").format(
            n=n1, names=listing(names[:-1]), last=names[-1])
    else:
        named = [_("{term} ({n:,})").format(term=_(k), n=v) for k, v in top]
        text = _("Its largest terms here are {named} and {last}.").format(named=listing(named[:-1]), last=named[-1])
    recurrent = next(v for k, v in terms.items() if "W_hh" in k)
    if recurrent >= n2:                           # W_hh among the two largest (ties included)
        return claim("params.hh_large", text, largest=n1, recurrent=recurrent)
    shape = first[first.rindex("(") + 1: first.rindex(")")]
    sizes = list(dict.fromkeys(f for k, v in top if k == first or terms[k] == n1
                               for f in k[k.rindex("(") + 1: k.rindex(")")].split(" x ") if f != "h"))
    grows = _("{a} and {b}").format(a=sizes[0], b=sizes[1]) if len(sizes) == 2 else " ".join(sizes)
    ratio = max(n1, 1) / max(recurrent, 1)
    times = f"{ratio:,.0f}" if ratio >= 100 else f"{ratio:.3g}"
    more = ngettext("The recurrent matrix W_hh has {recurrent:,} parameter (the largest term has {times} times as "
                    "many): at these sizes the terms that grow with {grows} outweigh the h × h recurrence.",
                    "The recurrent matrix W_hh has {recurrent:,} parameters (the largest term has {times} times as "
                    "many): at these sizes the terms that grow with {grows} outweigh the h × h recurrence.", recurrent)
    return claim("params.hh_small", sentences(text, more.format(recurrent=recurrent, times=times,
                                                                grows=grows or shape)),
                 largest=n1, recurrent=recurrent)


def power_of_ten(n: int) -> str:
    """A count as a learner reads it at once: written out below a million (4, 531,441), else a power of ten:
    10^84, or 10^84.3 between whole powers."""
    n = check_int("count", n, 1)
    if n < 1_000_000:
        return f"{n:,}"
    exp = math.log10(n)
    return f"10^{exp:.0f}" if abs(exp - round(exp)) < 0.05 else f"10^{exp:.1f}"


def model_parameters(vocab_size: int, hidden: int, embed_dim: int, layers: int, gates: int) -> int:
    """Parameters of an RNNLM (core.nn.models): an embedding if embed_dim, then `layers` layers of a cell with
    `gates` pre-activations per unit (each with its input and recurrent weights and two biases, as torch keeps
    them), then the output layer."""
    V, h, d, L, g = vocab_size, hidden, embed_dim, layers, gates
    return V * d + g * h * ((d or V) + h + 2) + (L - 1) * g * h * (2 * h + 2) + h * V + V
