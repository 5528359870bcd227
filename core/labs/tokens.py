"""Lab 2, Text to tokens: cleaning, character, word and BPE tokens, n-gram statistics, a counting language model
against an RNN, and the parameters of an n-gram table against an RNN's.

The whole lab in one place (see core.labs): settings, computation, metrics, figures, tables, readings and texts.
Its page caches each part per text and setting (ui.texts: the corpus, an upload, the tokenizers), so the parts are
separate functions, which compute() puts together for the notebook."""
from __future__ import annotations

import functools
import hashlib
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import plotly.graph_objects as go

from core.i18n import N_, _, listing, sentences
from core.claims import Claim
from core.labs import sampling
from core.figures import Chart, Metric, number_ticks, style
from core.nn import param_counts, probe
from core.text import bpe_merges, corpus, ngrams, readings as tr, tokens
from core.settings import setting

KEY = "tokens"
TITLE = N_("Text to tokens")   # the menu shows it translated (core.i18n)
ICON = ":material/text_fields:"
BLURB = N_("Clean text, cut it into characters, words or BPE subwords, see Zipf's law, and count n-grams until the "
           "table runs out of data.")
SECTION = "9.2 Converting Raw Text into Sequence Data and 9.3 Language Models"
BPE_SIZES = (256, 512, 1024, 2048, 4096)
ALPHAS = (0.001, 0.01, 0.1, 0.5, 1.0)
PASSAGE = 320           # characters of the passage shown raw, cleaned and tokenized
TOP = 12                # rows of the commonest n-grams
MERGES_SHOWN = 20       # BPE's first merges listed


@dataclass(frozen=True)
class Settings:
    source: Literal["timemachine", "upload"] = setting(
        "timemachine", N_("Text"), widget="radio",
        words={"timemachine": N_("The Time Machine"), "upload": N_("My upload")})
    cleaning: Literal[corpus.CLEANINGS] = setting(
        "letters", N_("Cleaning"), widget="radio",
        words={"letters": N_("letters and spaces (the book)"), "punctuation": N_("keep punctuation")})
    tokenizer: Literal["char", "word", "bpe"] = setting(
        "char", N_("Tokenizer"), widget="radio", url="tok",
        words={"char": N_("characters"), "word": N_("words"), "bpe": "BPE"})
    bpe_size: int = setting(1024, N_("BPE vocabulary size"), widget="select_slider", choices=BPE_SIZES, url="bpe")
    start: int = setting(2000, N_("Passage start (character in the raw text)"), lo=0, hi=10_000_000)
    top_n: int = setting(1, N_("Most frequent"), widget="radio", choices=(1, 2, 3), url="topn",
                         words={1: N_("1-grams"), 2: N_("2-grams"), 3: N_("3-grams")})
    bpe_text: str = setting("the time traveller, unfathomable", N_("Text to cut"), hi=200, url="bpetext")
    alpha: float = setting(0.1, N_("Smoothing α"), N_("Added to every n-gram count; smaller trusts the counts more."),
                           widget="select_slider", choices=ALPHAS)
    V: int = setting(10_000, N_("Vocabulary |V|"), lo=2, hi=1_000_000, widget="input")
    k: int = setting(20, N_("Context length k"), lo=1, hi=100, widget="input")
    h: int = setting(256, N_("Hidden units h"), lo=1, hi=100_000, widget="input")
    d: int = setting(256, N_("Embedding size d (0 = one-hot)"), lo=0, hi=100_000, widget="input")


@dataclass(frozen=True)
class Statistics:
    """The n-gram statistics of a text under a tokenizer: Zipf curves for 1-3-grams and the coverage for n = 1..5."""
    curves: list
    coverage: list


@dataclass(frozen=True)
class Calculator:
    """The parameter calculator: the RNN's terms and the (k+1)-gram table's size."""
    V: int
    k: int
    h: int
    d: int
    terms: dict
    table_size: int


@dataclass(frozen=True)
class Result:
    settings: Settings
    text: str                       # the text after cleaning
    vocab: object
    ids: list
    statistics: Statistics
    comparison: probe.Comparison | None   # the counting model against the RNN (None: not computed)
    calculator: Calculator


def statistics(ids) -> Statistics:
    return Statistics([ngrams.zipf_curve(ids, n) for n in (1, 2, 3)], ngrams.ngram_coverage(ids, 5))


def calculator(V: int, k: int, h: int, d: int) -> Calculator:
    return Calculator(V, k, h, d, param_counts.rnn_parameter_terms(V, d, h), param_counts.ngram_table_size(V, k))


def check_cleaned(text: str) -> str:
    """A cleaned text, or ValueError when nothing is left of it."""
    if not text.strip():
        raise ValueError(_("Nothing is left of this text after cleaning: try 'keep punctuation' or another file."))
    return text


def cleaned(raw: str, how: str) -> str:
    return check_cleaned(corpus.clean(raw, how))


@functools.lru_cache(maxsize=16)
def vocab_of(text: str, kind: str, size: int):
    """The text's tokenizer of this kind (and size, for BPE), trained once per process (a BPE takes seconds)."""
    return tokens.build_vocab(text, kind, size)


_MODEL_PPL: dict = {}     # (the model's uid, the text's digest) -> {"ppl": its score, alpha: the comparison}


def comparison_of(lm, raw: str, alpha: float) -> probe.Comparison:
    """The counting models against lm on the text's held-out tenth, once per model, text and alpha in a process;
    lm's own score, which alpha does not change, once per model and text."""
    key = (lm.uid, hashlib.sha1(raw.encode("utf-8", "surrogatepass")).hexdigest())
    if key not in _MODEL_PPL:
        _MODEL_PPL.clear()       # one text at a time: a notebook or a sweep walks one
        _MODEL_PPL[key] = {}
    done = _MODEL_PPL[key]
    if "ppl" not in done:
        done["ppl"] = probe.model_perplexity(lm, raw)
    if alpha not in done:
        done[alpha] = probe.compare_with_model(lm, raw, alpha, model_ppl=done["ppl"])
    return done[alpha]


def compute(s: Settings, raw: str | None = None, lm=None) -> Result:
    """Everything the lab shows for these settings, for the corpus (or `raw`), its counting model against the
    pretrained RNN (or `lm`)."""
    raw = corpus.load_corpus() if raw is None else raw
    text = cleaned(raw, s.cleaning)
    vocab = vocab_of(text, s.tokenizer, s.bpe_size)
    ids, stats = counted(text, s.tokenizer, s.bpe_size)
    lm = sampling.pretrained() if lm is None else lm
    return Result(s, text, vocab, ids, stats, comparison_of(lm, raw, s.alpha), calculator(s.V, s.k, s.h, s.d))


@functools.lru_cache(maxsize=4)
def counted(text: str, kind: str, size: int) -> tuple[tuple, Statistics]:
    """The text's token ids and their n-gram statistics, once per text and tokenizer in a process."""
    ids = tuple(vocab_of(text, kind, size).encode(text))
    return ids, statistics(ids)


def text_metrics(text: str, vocab, ids) -> list[Metric]:
    return [Metric(_("Characters after cleaning"), f"{len(text):,}"), Metric(_("Tokens"), f"{len(ids):,}"),
            Metric(_("Vocabulary size"), f"{len(vocab):,}"),
            Metric(_("Bytes per token"), f"{tokens.bytes_per_token(vocab, text, ids):.3f}")]


def calculator_metrics(c: Calculator) -> list[Metric]:
    return [Metric(_("({k}+1)-gram table entries, |V|^(k+1)").format(k=c.k), param_counts.power_of_ten(c.table_size)),
            Metric(_("RNN parameters"), f"{sum(c.terms.values()):,}")]


def metrics(r: Result) -> list[Metric]:
    return text_metrics(r.text, r.vocab, r.ids) + calculator_metrics(r.calculator)


def visible(token: str) -> str:
    """Spaces and line breaks shown as symbols in tables (a blank cell would hide them)."""
    return token.replace(" ", "␣").replace("\n", "⏎")


def word_start(raw: str, at: int) -> int:
    """The first character of the first word at or after position at (so a passage never starts mid-word)."""
    for i in range(at, min(len(raw), at + 200)):
        if (i == 0 or raw[i - 1].isspace()) and not raw[i].isspace():
            return i
    return at


def vocabulary_rows(vocab, ids) -> list[dict]:
    """Every token with its id and its count in the text, commonest first."""
    counts = ngrams.token_counts(ids, len(vocab))
    token, count = _("token"), _("count")
    rows = [{token: visible(vocab.token_text(i)), "id": i, count: int(counts[i])} for i in range(len(vocab))]
    return sorted(rows, key=lambda row: -row[count])


def zipf_figure(curves: list[np.ndarray]) -> go.Figure:
    """Frequency against rank of the 1-, 2- and 3-grams, log-log, with Zipf's law fitted to the 1-grams."""
    fig = go.Figure()
    for n, curve in zip((1, 2, 3), curves):
        fig.add_trace(go.Scatter(x=np.arange(1, len(curve) + 1), y=curve, name=_("{n}-grams").format(n=n),
                                 mode="lines"))
    if len(curves[0]) >= 2:
        fit = ngrams.zipf_fit(curves[0])
        ranks = np.arange(fit.first, fit.last + 1)
        fig.add_trace(go.Scatter(x=ranks, y=fit.counts(ranks), name=_("Zipf fit to 1-grams, α = {alpha:.2f}").format(
                                     alpha=fit.alpha),
                                 mode="lines", line=dict(dash="dash", color="#444")))
    return style(fig, _("Zipf's law: frequency against rank (log-log)"), _("rank"), _("count"), log_x=True,
                 log_y=True)


def coverage_figure(cov: list[ngrams.Coverage]) -> go.Figure:
    """Distinct n-grams seen against the possible ones and the n-grams in the text, for n = 1..5."""
    n = [c.n for c in cov]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=n, y=[c.distinct for c in cov], name=_("distinct n-grams seen"), mode="lines+markers"))
    fig.add_trace(go.Scatter(x=n, y=[float(c.possible) for c in cov],
                             name=_("possible Sⁿ ({types} token types occur)").format(types=cov[0].symbols),
                             mode="lines+markers", line=dict(dash="dash")))
    fig.add_trace(go.Scatter(x=n, y=[c.total for c in cov], name=_("n-grams in the text"), mode="lines",
                             line=dict(dash="dot", color="gray")))
    style(fig, _("The table runs out of data"), "n", _("count"), log_y=True)
    fig.update_layout(xaxis=dict(dtick=1))
    return fig


def zipf_reading(st_: Statistics, kind: str) -> Claim:
    return ngrams.zipf_reading(st_.curves, kind)


def coverage_reading(st_: Statistics) -> Claim:
    return coverage_claim(st_.coverage)


def coverage_claim(cov: list[ngrams.Coverage]) -> Claim:
    return tr.coverage(cov)


def coverage_chart(cov: list[ngrams.Coverage]) -> Chart:
    seen = listing(_("n = {n}: {distinct:,} of {possible:,}").format(n=c.n, distinct=c.distinct, possible=c.possible)
                   for c in cov)
    return Chart("coverage", coverage_figure(cov),
                 _("Distinct n-grams seen in the text against the possible ones: {seen}.").format(seen=seen))


def statistics_charts(st_: Statistics, kind: str) -> list[Chart]:
    parts = []
    for n, curve in zip((1, 2, 3), st_.curves):
        text = (_("{n}-grams: {distinct:,} distinct, the commonest seen {first:,} times, the 10th {tenth:,}, {once:,} "
                  "seen once") if len(curve) >= 10 else
                _("{n}-grams: {distinct:,} distinct, the commonest seen {first:,} times, {once:,} seen once"))
        parts.append(text.format(n=n, distinct=len(curve), first=int(curve[0]), tenth=int(curve[9]) if len(curve) >= 10
                                 else 0, once=int(np.sum(curve == 1))))
    summary = sentences(_("Frequency against rank. {parts}.").format(parts=_("; ").join(parts)), zipf_reading(st_, kind))
    return [Chart("zipf", zipf_figure(st_.curves), summary), coverage_chart(st_.coverage)]


def sweep_chart(rows: list[dict]) -> Chart:
    """Bytes per token for characters and each BPE size (rows: ui.texts.bytes_per_token_sweep's)."""
    names = [_(r["tokenizer"]) for r in rows]    # "characters" (marked in ui.texts) or "BPE 256"
    fig = style(go.Figure(go.Bar(x=names, y=[r["bytes per token"] for r in rows])), None, None, _("bytes per token"),
                height=320)
    return Chart("bpe-sweep", fig, _("Bytes per token: {each}.").format(
        each=listing(f"{name} {r['bytes per token']:.2f}" for name, r in zip(names, rows))))


def segmentation_rows(bpes: dict, typed: str) -> list[dict]:
    """The typed text cut by a BPE vocabulary of every size (bpes: size -> the tokenizer trained on the text)."""
    vocabulary, count, cut = _("vocabulary"), _("tokens"), _("cut into")
    return [{vocabulary: _("{size:,} (bytes only, no merge)").format(size=size) if size == tokens.BPE_MIN else
             f"{size:,}", count: len(pieces), cut: " | ".join(pieces)}
            for size, pieces in ((size, bpe_merges.segment(v, typed)) for size, v in bpes.items())]


def merge_rows(history: list[bpe_merges.Merge]) -> list[dict]:
    merge, token_id, pair, new, count = _("merge"), _("token id"), _("pair"), _("new token"), _("pair count")
    return [{merge: m.rank, token_id: 255 + m.rank, pair: f"{m.left} + {m.right}", new: m.merged, count: m.count}
            for m in history]


def ngram_model_figure(c: probe.Comparison) -> go.Figure:
    """Held-out and training perplexity of the n-gram models against n, and the RNN's held-out perplexity."""
    n = [r["n"] for r in c.rows]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=n, y=[r["heldout_ppl"] for r in c.rows], name=_("n-gram, held-out text"),
                             mode="lines+markers", line=dict(width=3)))
    fig.add_trace(go.Scatter(x=n, y=[r["train_ppl"] for r in c.rows], name=_("n-gram, its own training text"),
                             mode="lines+markers", line=dict(dash="dash")))
    fig.add_trace(go.Scatter(x=[n[0], n[-1]], y=[c.model_ppl] * 2, name=_("pretrained RNN, held-out text"),
                             mode="lines", line=dict(color="#e45756", width=3)))
    style(fig, _("n-grams against an RNN (lower is better)"), _("n (tokens in each n-gram)"),
          _("perplexity"), height=380, log_y=True, legend_below=True)
    fig.update_layout(xaxis=dict(dtick=1))
    number_ticks(fig, "y", [1, 2, 3, 4, 5, 7, 10, 15, 20, 30])
    return fig


def counting_model(c: probe.Comparison, alpha: float) -> list[Claim]:
    return tr.counting_model(c.rows, c.model_ppl, c.held_out_chars, alpha)


def ngram_model_chart(c: probe.Comparison, alpha: float) -> Chart:
    return Chart("ngram-model", ngram_model_figure(c), sentences(*counting_model(c, alpha)))


def calculator_words(c: Calculator) -> str:
    return sentences(_("Every extra token of context multiplies the table by |V| = {V:,} (adds {log:.1f} to the "
                       "exponent). The RNN's count does not depend on k at all: the same weights are applied at every "
                       "step, and only the fixed-size state carries the context.").format(V=c.V, log=math.log10(c.V)),
                     param_counts.largest_terms(c.terms))


def charts(r: Result) -> list[Chart]:
    out = statistics_charts(r.statistics, r.settings.tokenizer)
    return out + ([ngram_model_chart(r.comparison, r.settings.alpha)] if r.comparison is not None else [])


def readings(r: Result) -> list[Claim]:
    """Every sentence of the lab that states a number, a trend or a comparison."""
    said = [zipf_reading(r.statistics, r.settings.tokenizer), coverage_reading(r.statistics)]
    if r.comparison is not None:
        said += counting_model(r.comparison, r.settings.alpha)
    return said + [param_counts.largest_terms(r.calculator.terms)]


def numbers(r: Result) -> dict:
    return dict(tokens=len(r.ids), types=len(r.vocab), distinct_5grams=r.statistics.coverage[-1].distinct)


INTRO = N_("A language model never sees letters or words, only **token ids**. This lab follows the road from raw text "
           "to ids: clean it, cut it into tokens (single characters, whole words, or subwords learnt by byte-pair "
           "encoding), number them, and count which tokens follow which. The counts show why a lookup table of "
           "n-grams runs out of data so fast, and why a model with a hidden state is needed.")
FORMULA = ""
NOTATION = ""
BPE_INTRO = N_("Byte-level BPE starts with the 256 byte values as its tokens, so a vocabulary of 256 is just the "
               "bytes and holds **no merge**. Each further token is one merge: the pair of adjacent tokens that "
               "occurs most often in the training text becomes a new token, the text is rewritten with it, and the "
               "counting starts again. Type anything to see how each vocabulary size, trained on this lab's text, "
               "cuts it:")
COUNTING_INTRO = N_("Turn the counts into a language model: the probability of the next character is how often it "
                    "followed the previous n − 1 characters in the training text. A count of zero would give "
                    "probability zero, so add α to every count (add-α smoothing; α = 1 is Laplace smoothing). Fitted "
                    "on the first 90% of the text (cleaned to letters and spaces, the pretrained RNN's alphabet) and "
                    "scored on the last 10%:")
SWEEP_NOTE = N_("More token types cover longer pieces of text, so each token carries more bytes. To compare a "
                "character model with a BPE model fairly, divide each one's bits per token by its bytes per token: "
                "bits per byte.")


def notes(r: Result) -> str:
    return f"{coverage_reading(r.statistics)}\n\n{calculator_words(r.calculator)}"


SOURCE = (corpus.clean_letters, tokens.CharVocab.encode, tokens.train_bpe, ngrams.ngram_counts,
          param_counts.rnn_parameter_terms)
