"""Lab 4, Sampling: a pretrained character RNN; prefix, temperature, top-k and top-p, and what the model 'thinks'.

The whole lab in one place (see core.labs): settings, computation, metrics, figures, readings and texts. Its page
caches each part on its own (a new seed draws again but reuses the next-token view), so the computation comes in
parts: draw, next_token, comparison and hidden, which compute() puts together for the notebook."""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace

import numpy as np
import plotly.graph_objects as go

from core.i18n import N_, _, ngettext, listing, sentences
from core.assets import HELD_OUT_BPC, HELD_OUT_PPL
from core.claims import Claim
from core.figures import Chart, Metric, chart_text, style
from core.nn import probe, sample_readings, sampling
from core.settings import setting

KEY = "sampling"
TITLE = N_("Sampling")   # the menu shows it translated (core.i18n)
ICON = ":material/edit_note:"
BLURB = N_("Talk to a pretrained character RNN: prefix, temperature, top-k/top-p, and a look at its hidden state.")
SECTION = "9.5 Recurrent Neural Network Implementation from Scratch (prediction)"
PRETRAINED = "pretrained"
HIDDEN_SPAN = 32                                # characters in one view of the hidden-state heatmap
HIDDEN_WINDOWS = tuple(range(1, 161, HIDDEN_SPAN))   # its first characters: 1, 33, 65, 97, 129 (of the first 160)
GREEDY_SHOWN = 300                              # characters of greedy and sampled text compared
COLDEST = 0.05                                  # below this the comparison samples at COLDEST (T = 0 is greedy itself)


@dataclass(frozen=True)
class Settings:
    model: str = setting(PRETRAINED, N_("Model"), widget="select")    # choices: the pretrained model and the session's
    prefix: str = setting("the time traveller ", N_("Prefix"), N_("Spaces count: after a space the model must guess "
                                                               "a new word."), hi=200)
    temperature: float = setting(0.8, N_("Temperature T"), lo=0.0, hi=2.0, step=0.05, url="temp")
    length: int = setting(300, N_("Characters to generate"), lo=20, hi=1000, step=10, url="len")
    top_k: int = setting(0, N_("Top-k (0 = off)"), N_("Keep only the k likeliest tokens."), lo=0, hi=50, url="topk")
    top_p: float = setting(1.0, N_("Top-p (1 = off)"), lo=0.05, hi=1.0, step=0.05, url="topp")
    seed: int = setting(0, N_("Seed"), lo=0, hi=1_000_000, widget="input")
    hidden_from: int = setting(1, N_("Characters shown"), N_("Which 32 of the first 160 characters the hidden-state "
                                                             "heatmap shows, each one written under its column."),
                               widget="segmented",
                               choices=HIDDEN_WINDOWS, url="hfrom")
    score_a: str = setting("the machine stood in the laboratory", N_("Your text"), hi=200)
    score_b: str = setting("laboratory the in stood machine the", N_("Compare with"), hi=200)

    def filters(self, vocab_size: int) -> tuple[int | None, float | None]:
        """top-k and top-p as the sampler takes them: None where the control is off (0 and 1), and top-k None too
        where it keeps every token of a vocabulary this size (the page's control stops there)."""
        top_k = self.top_k if 0 < self.top_k < vocab_size else None
        return top_k, (self.top_p if self.top_p < 1 else None)

    def sampler_words(self, vocab_size: int) -> str:
        """The sampler's settings in words: 'T = 0.8', 'T = 0.1, top-k 1', 'T = 1, top-p 0.9'."""
        top_k, top_p = self.filters(vocab_size)
        return f"T = {self.temperature:g}" + (f", top-k {top_k}" if top_k else "") + (
            f", top-p {top_p:g}" if top_p else "")


@dataclass(frozen=True)
class NextToken:
    """What comes after the prefix: the model's distribution (T = 1) and the one the sampler draws from."""
    labels: list            # the 15 likeliest tokens at T = 1, as text
    top: np.ndarray         # their ids
    p_model: np.ndarray     # every token's probability at T = 1
    p_sampled: np.ndarray   # the sampler's: temperature, top-k, top-p and its own rules (sampling.sampler_distribution)
    words: str              # the sampler's settings in words


@dataclass(frozen=True)
class Comparison:
    """Greedy decoding's text against the sample's first characters (or a sample at COLDEST when T is below it)."""
    greedy: str
    sampled: str
    sampled_words: str


@dataclass(frozen=True)
class Hidden:
    """The top layer's hidden state along the text shown, and the window of it the heatmap draws."""
    H: np.ndarray
    units: np.ndarray       # the most variable units of the window, ordered by where they first switch
    labels: list            # every character read, as text
    start: int              # the window's first character (0-based)
    switching: list         # (unit, times it switches) for the three that switch most


@dataclass(frozen=True)
class Result:
    settings: Settings
    sample: sampling.Sample
    next: NextToken
    comparison: Comparison
    hidden: Hidden | None
    real_bits: float        # the model's bits per character on held-out text (NaN when unknown)
    vocab_size: int


def draw(lm, s: Settings) -> sampling.Sample:
    return sampling.sample(lm, s.prefix, s.length, s.temperature, *s.filters(len(lm.vocab)), s.seed)


def next_token(lm, s: Settings) -> NextToken:
    logits = probe.next_logits(lm, s.prefix)
    p_model = sampling.distribution(logits, 1.0)
    top = np.argsort(-p_model, kind="stable")[:15]
    V = len(lm.vocab)
    return NextToken([lm.vocab.token_text(int(i)) for i in top], top, p_model,
                     sampling.sampler_distribution(lm, logits, s.temperature, *s.filters(V)), s.sampler_words(V))


def comparison(lm, s: Settings, out: sampling.Sample, greedy_text: str) -> Comparison:
    """greedy_text: greedy decoding's first GREEDY_SHOWN characters after the prefix (the page caches it)."""
    shown, V = min(s.length, GREEDY_SHOWN), len(lm.vocab)
    if s.temperature >= COLDEST:   # the same draw (same seed): its first characters, not a second run
        return Comparison(greedy_text, lm.vocab.decode(out.token_ids[:shown]), s.sampler_words(V))
    cold = replace(s, temperature=COLDEST)
    return Comparison(greedy_text, draw(lm, replace(cold, length=shown)).text, cold.sampler_words(V))


def greedy(lm, s: Settings) -> str:
    return sampling.sample(lm, s.prefix, min(s.length, GREEDY_SHOWN), 0.0).text


def shown_text(out: sampling.Sample) -> str:
    """The text the hidden-state heatmap reads: the prefix and the sample, up to its last window's end."""
    return (out.prefix + out.text)[:HIDDEN_WINDOWS[-1] + HIDDEN_SPAN - 1]


def window_starts(text: str) -> list[int]:
    """The heatmap's windows (first characters, from 1) that this text reaches."""
    return [w for w in HIDDEN_WINDOWS if w <= len(text)]


def hidden(lm, text: str, start: int = 0) -> Hidden | None:
    """The hidden states of reading the whole text from its first character, and the window from `start` (None for
    an empty text)."""
    H = probe.hidden_states(lm, text)
    if not len(H):
        return None
    cleaned = lm.prepare_prefix(text)[0]
    labels = [lm.vocab.token_text(int(i)) for i in lm.vocab.encode(cleaned)]
    start = min(start, (len(labels) - 1) // HIDDEN_SPAN * HIDDEN_SPAN)
    window = H[start: start + HIDDEN_SPAN]
    units = probe.most_variable_units(window, min(24, H.shape[1]))
    switching = probe.most_switching_units(window, units, 3)
    return Hidden(H, probe.order_by_first_flip(window, units), labels, start, switching)


@functools.cache
def pretrained():
    """The shipped character RNN, loaded once per process for the notebooks and sweeps that compute without one
    (its uid names it in caches such as core.labs.tokens')."""
    from core.runs.saved import load_pretrained
    return load_pretrained()


def compute(s: Settings, lm=None) -> Result:
    """Everything the page shows for these settings (lm: the pretrained model unless another is given)."""
    lm = pretrained() if lm is None else lm
    out = draw(lm, s)
    return assemble(lm, s, out, next_token(lm, s), greedy(lm, s), hidden(lm, shown_text(out), s.hidden_from - 1))


def assemble(lm, s: Settings, out, nxt: NextToken, greedy_text: str, view: Hidden | None) -> Result:
    return Result(s, out, nxt, comparison(lm, s, out, greedy_text), view,
                  float(lm.meta.get(HELD_OUT_BPC, float("nan"))), len(lm.vocab))


def metrics(r: Result) -> list[Metric]:
    return [Metric(_("Mean surprisal of the generated text"),
                   _("{bits:.2f} bits/char").format(bits=r.sample.surprisal_bits.mean()),
                   _("Low: the model found its own text predictable. Greedy text scores lowest, high T highest."))]


def next_token_figure(n: NextToken) -> go.Figure:
    """The 15 likeliest next tokens at T = 1 and under the sampler's settings (what it really draws from)."""
    labels = [repr(t) for t in n.labels]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=labels, y=n.p_model[n.top], name=_("T = 1 (the model)"), marker_color="#9aa5b1"))
    fig.add_trace(go.Bar(x=labels, y=n.p_sampled[n.top], name=_("{words} (sampled from)").format(words=n.words),
                         marker_color="#3f6fd8"))
    fig.update_layout(barmode="group")
    title = _("Entropy {model:.2f} bits at T = 1, {sampled:.2f} bits sampled from ({words})").format(
        model=sampling.entropy_bits(n.p_model), sampled=sampling.entropy_bits(n.p_sampled), words=n.words)
    return style(fig, title, _("next character (the 15 likeliest at T = 1)"), _("probability"), height=330)


def next_token_summary(n: NextToken) -> str:
    each = _("{token} {p:.3f} (sampled: {q:.3f})")
    likeliest = listing(each.format(token=repr(t), p=n.p_model[i], q=n.p_sampled[i]) for t, i in
                        zip(n.labels[:3], n.top[:3]))
    kept = int(np.sum(n.p_sampled > 0))
    text = ngettext("After the prefix, the likeliest next characters at T = 1 are {likeliest}; entropy {model:.2f} "
                    "bits at T = 1 and {sampled:.2f} bits in the distribution the sampler draws from ({words}), which "
                    "leaves {kept} token possible.",
                    "After the prefix, the likeliest next characters at T = 1 are {likeliest}; entropy {model:.2f} "
                    "bits at T = 1 and {sampled:.2f} bits in the distribution the sampler draws from ({words}), which "
                    "leaves {kept} tokens possible.", kept)
    return text.format(
        likeliest=likeliest, model=sampling.entropy_bits(n.p_model), sampled=sampling.entropy_bits(n.p_sampled),
        words=n.words, kept=kept)


def hidden_state_figure(h: Hidden) -> go.Figure:
    """The chosen hidden units (rows, ordered by where they first switch) along HIDDEN_SPAN characters read from
    h.start (columns, each character written under its own column; its position is in the hover)."""
    start, stop = h.start, min(h.start + HIDDEN_SPAN, len(h.labels))
    window = np.asarray(h.H)[start:stop]
    shown = ["␣" if c == " " else chart_text(c) for c in h.labels[start:stop]]
    x = list(range(start + 1, stop + 1))
    # The colour bar lies under the chart and the rows are named by number, so on a 390 px phone the 32 columns get
    # the whole width and each character under its column stays legible.
    fig = go.Figure(go.Heatmap(z=window[:, h.units].T, x=x, y=[str(u) for u in h.units],
                               colorscale="RdBu", zmid=0, zmin=-1, zmax=1,
                               colorbar=dict(title=dict(text=_("activation h"), side="top"), orientation="h",
                                             thickness=10, len=0.6, y=-0.2, yanchor="top"),
                               customdata=[shown] * len(h.units),
                               hovertemplate=_("character %{x}: '%{customdata}'<br>unit %{y}: %{z:.2f}")
                               + "<extra></extra>"))
    style(fig, None, _("characters {first}-{last} of the {read} read (␣ is a space)").format(
        first=start + 1, last=stop, read=len(h.labels)), _("unit"), height=520)
    fig.update_layout(xaxis=dict(tickmode="array", tickvals=list(x), ticktext=shown,
                                 tickangle=0, tickfont=dict(size=13, family="monospace")),
                      yaxis=dict(autorange="reversed", tickfont=dict(size=10), type="category"),
                      margin=dict(l=60, r=10, b=120))
    return fig


def saturation(h: Hidden) -> Claim:
    window = h.H[h.start: h.start + HIDDEN_SPAN]
    return sample_readings.saturation(window[:, h.units])


def hidden_summary(h: Hidden) -> str:
    flips = (listing(ngettext("unit {unit} ({n} time)", "unit {unit} ({n} times)", n).format(unit=u, n=n)
                     for u, n in h.switching if n)
             or _("none: no row jumps by more than 1 between two characters here"))
    end = min(h.start + HIDDEN_SPAN, len(h.labels))
    rows = _("Rows: the {shown} units (of the top layer's {units}) whose activation varies most along characters "
             "{first}-{last}; columns: the characters read, each written under its column; colour: the activation, "
             "-1 (red) to 1 (blue).").format(shown=len(h.units), units=h.H.shape[1], first=h.start + 1, last=end)
    look = _("Look for units that flip at spaces or stay on inside words: a first glimpse of what the state "
             "remembers. The rows that switch most often here: {flips}.").format(flips=flips)
    return sentences(rows, saturation(h), look)


def next_token_chart(n: NextToken) -> Chart:
    return Chart("next-token", next_token_figure(n), next_token_summary(n))


def hidden_chart(h: Hidden) -> Chart:
    return Chart("hidden-state", hidden_state_figure(h), hidden_summary(h))


def charts(r: Result) -> list[Chart]:
    return [next_token_chart(r.next)] + ([hidden_chart(r.hidden)] if r.hidden is not None else [])


def comparison_readings(r: Result) -> list[Claim]:
    """'Greedy against sampled': greedy's loop, the sample's variety against greedy's, and how predictable the model
    finds its own sample."""
    c = r.comparison
    return [sample_readings.greedy(c.greedy, c.sampled), sample_readings.variety(c.greedy, c.sampled),
            sampling.odd_choices(float(r.sample.surprisal_bits.mean()), r.real_bits, r.vocab_size)]


def readings(r: Result) -> list[Claim]:
    return ([saturation(r.hidden)] if r.hidden is not None else []) + comparison_readings(r)


def numbers(r: Result) -> dict:
    return dict(mean_bits=float(r.sample.surprisal_bits.mean()), text=r.sample.text)


def model_words(lm) -> str:
    """The pretrained model's description: its size, vocabulary and held-out score, and how it differs from the
    chapter's."""
    layers, meta = lm.net.spec.num_layers, lm.meta
    return ngettext(
        "Plain tanh RNN (no gates), {layers} layer of {units} units, {V} characters; held-out perplexity {ppl:.2f} "
        "({bpc:.2f} bits per character). Not the chapter's model: the chapter trains one layer of 32 units with plain "
        "SGD; this one has {layers} layers of {units}, dropout and Adam (`python -m core pretrain`). To sample from "
        "the chapter's own model, train the Book preset in the Training lab and pick it in Model above.",
        "Plain tanh RNN (no gates), {layers} layers of {units} units, {V} characters; held-out perplexity {ppl:.2f} "
        "({bpc:.2f} bits per character). Not the chapter's model: the chapter trains one layer of 32 units with plain "
        "SGD; this one has {layers} layers of {units}, dropout and Adam (`python -m core pretrain`). To sample from "
        "the chapter's own model, train the Book preset in the Training lab and pick it in Model above.",
        layers).format(layers=layers, units=lm.net.spec.hidden_size, V=len(lm.vocab),
                       ppl=meta.get(HELD_OUT_PPL, float("nan")), bpc=meta.get(HELD_OUT_BPC, float("nan")))


INTRO = N_("A trained language model turns any prefix into a probability for every possible next character. "
           "**Sampling** draws one, feeds it back in, and repeats. The **temperature** T reshapes the distribution "
           "before drawing: T < 1 sharpens it towards the likeliest character, T > 1 flattens it towards uniform, "
           "T = 0 always takes the top choice (greedy). **Top-k** then keeps only the k likeliest characters and "
           "**top-p** the fewest whose probabilities add up to p, and what is kept is scaled back to a total of 1.")
FORMULA = r"p_T(c) = \frac{\exp(o_c / T)}{\sum_{c'} \exp(o_{c'} / T)}"
NOTATION = ""
SCORE_INTRO = N_("The same surprisal, now for text you write: every character is scored given all the ones before "
                 "it. Compare a sentence with the same words shuffled, or with a misspelling: the model has learnt "
                 "spelling and word order only as far as its fewer bits per character show. (The first character is "
                 "read from a blank state, so it always costs a few bits.)")


def notes(r: Result) -> str:
    """The notes under the figures: greedy against sampled, in words."""
    c = r.comparison
    return sentences(_("**Greedy against sampled** ({words} for the sample).").format(words=c.sampled_words),
                     *comparison_readings(r))


SOURCE = (sampling.sample, sampling.sampler_distribution, sampling.distribution, probe.score_text)
