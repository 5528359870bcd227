"""Lab 2, Text to tokens: cleaning, character and BPE tokenization, n-gram statistics."""
from __future__ import annotations

import html
import math
import threading
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.text import bpe_merges, corpus, ngrams, readings as text_readings, tokens
from core.nn import param_counts
from core.labs import BPE_SIZES, controls_of
from ui import exercises, texts, url_state
from ui.notebook import download_button
from ui.common import cite, controls_beside_view, header, learner_errors, plain, show_source
from core.figures import number_ticks, style
from ui.plots import frozen, show

SIZES = list(BPE_SIZES)
PASSAGE = 320
# Two fills far apart in lightness (distinct under every colour-vision deficiency), and a bar between tokens, so
# a boundary never depends on colour alone.
TOKEN_COLOURS = ("#dbeafe", "#fcd34d")


@dataclass(frozen=True)
class Settings:
    """The text and its tokenizer, as chosen in controls()."""
    source: str
    cleaning: str
    kind: str
    size: int


CONTROLS = controls_of("tokens")   # declared in core.labs


def controls() -> Settings:
    source = url_state.draw(CONTROLS["source"])
    texts.upload_widget("tokens_upload")
    cleaning = url_state.draw(CONTROLS["cleaning"])
    kind = url_state.draw(CONTROLS["tokenizer"], horizontal=True)
    size = url_state.draw(CONTROLS["bpe_size"], disabled=kind != "bpe")
    return Settings(source, cleaning, kind, size)


def visible(token: str) -> str:
    """Spaces and line breaks shown as symbols in tables (a blank cell would hide them)."""
    return token.replace(" ", "␣").replace("\n", "⏎")


def token_spans(vocab, ids) -> str:
    """The tokens as HTML, alternately coloured so their boundaries show; hover for the id."""
    return "".join(
        f'<span title="id {int(i)}" style="background:{TOKEN_COLOURS[n % len(TOKEN_COLOURS)]};'
        f'border-left:1px solid #1f2937;padding:1px 0;white-space:pre-wrap">{html.escape(vocab.token_text(int(i)))}'
        '</span>' for n, i in enumerate(ids))


def zipf_figure(curves: list[np.ndarray]) -> go.Figure:
    """Frequency against rank of the 1-, 2- and 3-grams, log-log, with Zipf's law fitted to the 1-grams."""
    fig = go.Figure()
    for n, curve in zip((1, 2, 3), curves):
        fig.add_trace(go.Scatter(x=np.arange(1, len(curve) + 1), y=curve, name=f"{n}-grams", mode="lines"))
    if len(curves[0]) >= 2:
        fit = ngrams.zipf_fit(curves[0])
        ranks = np.arange(fit.first, fit.last + 1)
        fig.add_trace(go.Scatter(x=ranks, y=fit.counts(ranks), name=f"Zipf fit to 1-grams, α = {fit.alpha:.2f}",
                                 mode="lines", line=dict(dash="dash", color="#444")))
    return style(fig, "Zipf's law: frequency against rank (log-log)", "rank", "count", log_x=True, log_y=True)


def coverage_figure(cov: list[ngrams.Coverage]) -> go.Figure:
    """Distinct n-grams seen against the possible ones and the n-grams in the text, for n = 1..5."""
    n = [c.n for c in cov]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=n, y=[c.distinct for c in cov], name="distinct n-grams seen", mode="lines+markers"))
    fig.add_trace(go.Scatter(x=n, y=[float(c.possible) for c in cov], name=f"possible Sⁿ ({cov[0].symbols} token "
                             "types occur)", mode="lines+markers",
                             line=dict(dash="dash")))
    fig.add_trace(go.Scatter(x=n, y=[c.total for c in cov], name="n-grams in the text", mode="lines",
                             line=dict(dash="dot", color="gray")))
    style(fig, "The table runs out of data", "n", "count", log_y=True)
    fig.update_layout(xaxis=dict(dtick=1))
    return fig


def zipf_summary(curves: list[np.ndarray], kind: str) -> str:
    parts = []
    for n, curve in zip((1, 2, 3), curves):
        tenth = f", the 10th {int(curve[9]):,}" if len(curve) >= 10 else ""
        parts.append(f"{n}-grams: {len(curve):,} distinct, the commonest seen {int(curve[0]):,} times{tenth}, "
                     f"{int(np.sum(curve == 1)):,} seen once")
    return f"Frequency against rank. {'; '.join(parts)}. {ngrams.zipf_reading(curves, kind)}"


def coverage_summary(cov: list[ngrams.Coverage]) -> str:
    parts = ", ".join(f"n = {c.n}: {c.distinct:,} of {c.possible:,}" for c in cov)
    return f"Distinct n-grams seen in the text against the possible ones: {parts}."


def sweep_figure(sweep: pd.DataFrame) -> go.Figure:
    return style(go.Figure(go.Bar(x=sweep["tokenizer"], y=sweep["bytes per token"])), None, None, "bytes per token",
                 height=320)


def source_text(s: Settings, view) -> tuple[str, str] | None:
    """The raw text and its name, or None after saying how to get one."""
    if s.source == "upload":
        up = texts.uploaded()
        if up is None:
            view.info("Upload a .txt file on the left to see it tokenized.", icon=":material/upload:")
            return None
        return up["text"], up["name"]
    raw = texts.time_machine_or_none()
    if raw is None:
        with view:
            texts.missing_corpus_message()
            texts.download_button()
            st.caption("Or switch the text to *My upload* and upload any .txt file.")
        return None
    return raw, "The Time Machine"


def word_start(raw: str, at: int) -> int:
    """The first character of the first word at or after position at (so a passage never starts mid-word)."""
    for i in range(at, min(len(raw), at + 200)):
        if (i == 0 or raw[i - 1].isspace()) and not raw[i].isspace():
            return i
    return at


@st.fragment
def passage_view(s: Settings, raw: str, label: str, vocab) -> None:
    """One passage, raw, cleaned and tokenized, and the slider that picks it: a fragment, so moving the slider
    reruns this part only (nothing else on the page depends on where the passage starts)."""
    with learner_errors():   # a fragment's own reruns do not pass through the page's
        passage_at(s, raw, label, vocab)


def passage_at(s: Settings, raw: str, label: str, vocab) -> None:
    st.subheader(f"One passage of {plain(label)}")
    max_start = max(0, len(raw) - PASSAGE)
    start = url_state.draw(CONTROLS["start"], default=word_start(raw, min(CONTROLS["start"].default, max_start)),
                           hi=max(1, max_start))
    passage = raw[start:start + PASSAGE]
    passage_clean = corpus.clean(passage, s.cleaning)
    passage_ids = vocab.encode(passage_clean)
    c1, c2, c3 = st.columns(3)
    c1.markdown("**Raw**")
    c1.text(passage)
    c2.markdown("**Cleaned**")
    c2.text(passage_clean)
    unit = {"char": "characters", "word": "words"}.get(s.kind, f"BPE, {s.size} types")
    c3.markdown(f"**{len(passage_ids)} tokens** ({unit})")
    c3.markdown(f'<div style="font-family:monospace;line-height:1.9">{token_spans(vocab, passage_ids)}</div>',
                unsafe_allow_html=True)
    c3.caption("A thin bar and alternating light and dark fills mark the token boundaries; hover a token for its id.")
    st.code(" ".join(str(int(i)) for i in passage_ids[:120]) + (" ..." if len(passage_ids) > 120 else ""),
            language=None, wrap_lines=True)   # ids wrap on a phone rather than run off its right edge


def tables(s: Settings, text: str, vocab, ids) -> None:
    bpt = tokens.bytes_per_token(vocab, text, ids)
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Characters after cleaning", f"{len(text):,}")
    m2.metric("Tokens", f"{len(ids):,}")
    m3.metric("Vocabulary size", f"{len(vocab):,}")
    m4.metric("Bytes per token", f"{bpt:.3f}")
    left, right = st.columns(2)
    with left:
        st.markdown("**Vocabulary** (token, id, count in the text)")
        table = pd.DataFrame({"token": [visible(vocab.token_text(i)) for i in range(len(vocab))],
                              "id": np.arange(len(vocab)), "count": ngrams.token_counts(ids, len(vocab))})
        st.dataframe(table.sort_values("count", ascending=False), hide_index=True, height=300, width="stretch")
    with right:
        n_top = url_state.draw(CONTROLS["top_n"], horizontal=True)
        top = [(visible(gram), count) for gram, count in texts.top_ngrams(text, s.kind, s.size, n_top, 12)]
        st.dataframe(pd.DataFrame(top, columns=["n-gram", "count"]), hide_index=True, height=300, width="stretch")


# The figures below depend on the text and the tokenizer only (not on the passage slider above them): built once
# per text and setting for every learner, then shared, so nothing changes them after.
@st.cache_resource(show_spinner=False, max_entries=32)
def statistics_views(text: str, kind: str, size: int) -> tuple:
    curves, cov = texts.ngram_statistics(text, kind, size)
    zipf = frozen(zipf_figure(curves)), zipf_summary(curves, kind)
    return zipf, (frozen(coverage_figure(cov)), coverage_summary(cov)), cov


@st.cache_resource(show_spinner=False, max_entries=32)
def ngram_model_view(raw: str, alpha: float) -> tuple:
    c = texts.ngram_vs_rnn(raw, alpha)
    return c, frozen(ngram_model_figure(c)), ngram_model_summary(c, alpha)


def ngram_statistics(s: Settings, text: str) -> None:
    zipf, coverage, cov = statistics_views(text, s.kind, s.size)
    z1, z2 = st.columns(2)
    show(*zipf, "zipf", z1)
    show(*coverage, "coverage", z2)
    st.markdown(text_readings.coverage(cov).text)
    with st.expander("Bytes per token as the BPE vocabulary grows"):
        if st.toggle("Compute the sweep (trains one tokenizer per size, then cached)", key="tokens.sweep"):
            sweep = pd.DataFrame(texts.bytes_per_token_sweep(text, tuple(SIZES)))
            show(sweep_figure(sweep), "Bytes per token: " + ", ".join(
                f"{t} {b:.2f}" for t, b in zip(sweep["tokenizer"], sweep["bytes per token"])) + ".", "bpe-sweep")
            st.caption("More token types cover longer pieces of text, so each token carries more bytes. To compare "
                       "a character model with a BPE model fairly, divide each one's bits per token by its bytes per "
                       "token: bits per byte.")


MERGES_SHOWN = 20


def segmentation_table(text: str, typed: str) -> pd.DataFrame:
    """The typed text cut by a BPE vocabulary of every size, trained on the lab's text."""
    rows = []
    for size in SIZES:
        pieces = bpe_merges.segment(texts.bpe(text, size), typed)
        rows.append({"vocabulary": f"{size:,}" + (" (bytes only, no merge)" if size == tokens.BPE_MIN else ""),
                     "tokens": len(pieces), "cut into": " | ".join(pieces)})
    return pd.DataFrame(rows).set_index("vocabulary")


def merges_table(history: list[bpe_merges.Merge]) -> pd.DataFrame:
    return pd.DataFrame([{"merge": m.rank, "token id": 255 + m.rank, "pair": f"{m.left} + {m.right}",
                          "new token": m.merged, "pair count": m.count} for m in history]).set_index("merge")


def how_bpe_learns(text: str) -> None:
    st.subheader("How BPE learns")
    st.markdown(
        "Byte-level BPE starts with the 256 byte values as its tokens, so a vocabulary of 256 is just the bytes "
        "and holds **no merge**. Each further token is one merge: the pair of adjacent tokens that occurs most "
        "often in the training text becomes a new token, the text is rewritten with it, and the counting starts "
        "again. Type anything to see how each vocabulary size, trained on this lab's text, cuts it:")
    typed = url_state.draw(CONTROLS["bpe_text"])
    with learner_errors():
        st.table(segmentation_table(text, typed))
        history = texts.bpe_merge_history(text, MERGES_SHOWN)
    st.markdown(f"**The first {len(history)} merges** learnt on this text, in order (␣ is a space; each count is "
                "how often the pair occurred just before it was merged):")
    st.dataframe(merges_table(history), width="stretch", height=300)
    if history:
        st.caption(f"The first merge joins “{plain(history[0].left)}” and “{plain(history[0].right)}” "
                   f"({history[0].count:,} "
                   f"times); by merge {history[-1].rank} the most frequent pair left occurs {history[-1].count:,} "
                   "times. Frequent pairs go first, so common words and word starts become single tokens early.")


def ngram_model_figure(c) -> go.Figure:
    """Held-out and training perplexity of the n-gram models against n, and the RNN's held-out perplexity."""
    n = [r["n"] for r in c.rows]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=n, y=[r["heldout_ppl"] for r in c.rows], name="n-gram, held-out text",
                             mode="lines+markers", line=dict(width=3)))
    fig.add_trace(go.Scatter(x=n, y=[r["train_ppl"] for r in c.rows], name="n-gram, its own training text",
                             mode="lines+markers", line=dict(dash="dash")))
    fig.add_trace(go.Scatter(x=[n[0], n[-1]], y=[c.model_ppl] * 2, name="pretrained RNN, held-out text",
                             mode="lines", line=dict(color="#e45756", width=3)))
    style(fig, "n-grams against an RNN (lower is better)", "n (tokens in each n-gram)",
          "perplexity", height=380, log_y=True, legend_below=True)
    fig.update_layout(xaxis=dict(dtick=1))
    number_ticks(fig, "y", [1, 2, 3, 4, 5, 7, 10, 15, 20, 30])
    return fig


def ngram_model_summary(c, alpha: float) -> str:
    return " ".join(x.text for x in text_readings.counting_model(c.rows, c.model_ppl, c.held_out_chars, alpha))


def ngram_language_model(raw: str) -> None:
    st.subheader("A counting language model against an RNN")
    st.markdown(
        "Turn the counts into a language model: the probability of the next character is how often it followed "
        "the previous n − 1 characters in the training text. A count of zero would give probability zero, so "
        "add α to every count (add-α smoothing; α = 1 is Laplace smoothing). Fitted on the first 90% of the "
        "text (cleaned to letters and spaces, the pretrained RNN's alphabet) and scored on the last 10%:")
    alpha = url_state.draw(CONTROLS["alpha"])
    with learner_errors():
        c, figure, summary = ngram_model_view(raw, alpha)
    show(figure, summary, "ngram-model")
    if c.used_chars < c.total_chars:
        st.caption(f"Your text has {c.total_chars:,} characters once cleaned; this comparison uses its first "
                   f"{c.used_chars:,} (90% to fit, 10% held out), which keeps it to seconds.")
    st.caption("The RNN is the shipped model, trained on the same first 90% of The Time Machine; on another text "
               "it is scored on text it has never seen.")


def parameter_calculator() -> None:
    st.subheader("How many parameters? An n-gram table against an RNN")
    k1, k2, k3, k4 = st.columns(4)
    with k1:
        V = url_state.draw(CONTROLS["V"])
    with k2:
        k = url_state.draw(CONTROLS["k"])
    with k3:
        h = url_state.draw(CONTROLS["h"])
    with k4:
        d = url_state.draw(CONTROLS["d"])
    with learner_errors():
        terms = param_counts.rnn_parameter_terms(V, d, h)
        table_size = param_counts.ngram_table_size(V, k)
        p1, p2 = st.columns(2)
        p1.metric(f"({k}+1)-gram table entries, |V|^(k+1)", param_counts.power_of_ten(table_size))
        p2.metric("RNN parameters", f"{sum(terms.values()):,}")
        st.dataframe(pd.DataFrame({"term": list(terms), "parameters": list(terms.values())}), hide_index=True)
        st.markdown(
            f"Every extra token of context multiplies the table by |V| = {V:,} (adds {math.log10(V):.1f} to the "
            "exponent). The RNN's count does not depend on k at all: the same weights are applied at every step, "
            f"and only the fixed-size state carries the context. {largest_terms(terms)}")


def largest_terms(terms: dict[str, int]) -> str:
    return param_counts.largest_terms(terms).text


def warm(stop: threading.Event | None = None) -> None:
    """What the lab's first open computes at its defaults, done ahead: app.py runs this once per server in the
    background, so the first learner to open the lab finds it cached (it took seconds otherwise). Once `stop` is
    set (the server is stopping), no further piece starts."""
    raw = texts.time_machine_or_none()
    if raw is None:
        return
    text = texts.cleaned(raw, CONTROLS["cleaning"].default)
    kind, size = CONTROLS["tokenizer"].default, CONTROLS["bpe_size"].default
    for piece in (lambda: texts.encoded(text, kind, size),
                  lambda: texts.ngram_statistics(text, kind, size),
                  lambda: texts.top_ngrams(text, kind, size, CONTROLS["top_n"].default, 12),
                  lambda: texts.bytes_per_token_sweep(text, tuple(SIZES)),
                  lambda: texts.bpe_merge_history(text, MERGES_SHOWN),
                  lambda: texts.ngram_vs_rnn(raw, CONTROLS["alpha"].default)):
        if stop is not None and stop.is_set():
            return
        piece()


def main() -> None:
    url_state.page("tokens")
    header("tokens")
    download_button("tokens")
    st.markdown(
        "A language model never sees letters or words, only **token ids**. This lab follows the road from raw "
        "text to ids: clean it, cut it into tokens (single characters, whole words, or subwords learnt by "
        "byte-pair encoding), number them, and count which tokens follow which. The counts show why a lookup "
        "table of n-grams runs out of data so fast, and why a model with a hidden state is needed.")
    cite("9.2 Converting Raw Text into Sequence Data and 9.3 Language Models")
    exercises.assignment("tokens")
    s, view = controls_beside_view(controls)
    exercises.hold_figures("tokens")
    # The lab's two topics, one tab each (a long page otherwise): tokens, then what counting them can do.
    to_tokens, counting = view.tabs(["From text to tokens", "Counting n-grams"])
    found = source_text(s, to_tokens)
    if found is not None:
        raw, label = found
        with to_tokens, learner_errors():
            text = texts.cleaned(raw, s.cleaning)
            if not text.strip():
                raise ValueError("Nothing is left of this text after cleaning: try 'keep punctuation' or another file.")
            vocab = texts.vocab(text, s.kind, s.size)
            ids = texts.encoded(text, s.kind, s.size)
            passage_view(s, raw, label, vocab)
            tables(s, text, vocab, ids)
            how_bpe_learns(text)
        with counting, learner_errors():
            ngram_statistics(s, text)
            ngram_language_model(raw)
    with counting:
        parameter_calculator()  # needs no text
    show_source(corpus.clean_letters, tokens.CharVocab.encode, tokens.train_bpe, ngrams.ngram_counts,
                param_counts.rnn_parameter_terms)
    exercises.section("tokens")


if __name__ == "__main__":
    main()
