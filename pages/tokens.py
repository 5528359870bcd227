"""Lab 2, Text to tokens: cleaning, character and BPE tokenization, n-gram statistics."""
import html
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core import corpus, tokens
from ui import texts, url_state
from ui.common import cite, learner_errors, show_source

url_state.page("tokens")
st.title("🔤 Text to tokens")
st.markdown(
    "A language model never sees letters or words, only **token ids**. This lab follows the road from raw "
    "text to ids: clean it, cut it into tokens (single characters, or subwords learnt by byte-pair encoding), "
    "number them, and count which tokens follow which. The counts show why a lookup table of n-grams runs out "
    "of data so fast, and why a model with a hidden state is needed."
)
cite("9.2 Converting Raw Text into Sequence Data and 9.3 Language Models")

SIZES = [256, 512, 1024, 2048, 4096]
PASSAGE = 320
TOKEN_COLOURS = ("#dbeafe", "#fde68a", "#bbf7d0", "#fbcfe8")


def visible(token: str) -> str:
    """Spaces and line breaks shown as symbols in tables (a blank cell would hide them)."""
    return token.replace(" ", "␣").replace("\n", "⏎")


controls, view = st.columns([1, 3], gap="large")
with controls:
    st.subheader("Controls")
    source = url_state.choice("Text", "source", "timemachine", ("timemachine", "upload"), widget="radio",
                           format_func=lambda s: {"timemachine": "The Time Machine", "upload": "My upload"}[s])
    texts.upload_widget("tokens_upload")
    cleaning = url_state.choice("Cleaning", "cleaning", "letters", corpus.CLEANINGS, widget="radio",
                             format_func=lambda s: {"letters": "letters and spaces (the book)",
                                                    "punctuation": "keep punctuation"}[s])
    kind = url_state.choice("Tokenizer", "tok", "char", ("char", "bpe"), widget="radio", horizontal=True,
                         format_func=lambda s: {"char": "characters", "bpe": "BPE"}[s])
    size = url_state.select_slider("BPE vocabulary size", "bpe", 1024, SIZES, disabled=kind != "bpe")

raw = None
if source == "upload":
    up = texts.uploaded()
    if up is None:
        view.info("Upload a .txt file on the left to see it tokenized.", icon="⬆️")
        st.stop()
    raw, label = up["text"], up["name"]
else:
    raw, label = texts.time_machine_or_none(), "The Time Machine"
    if raw is None:
        with view:
            texts.missing_corpus_message()
            texts.download_button()
            st.caption("Or switch the text to *My upload* and upload any .txt file.")
        st.stop()

with view, learner_errors():
    text = texts.cleaned(raw, cleaning)
    if not text.strip():
        raise ValueError("Nothing is left of this text after cleaning: try 'keep punctuation' or another file.")
    vocab = texts.vocab(text, kind, size)
    ids = texts.encoded(text, kind, size)

    st.subheader(f"One passage of {label}")
    max_start = max(0, len(raw) - PASSAGE)
    start = url_state.int_slider("Passage start (character in the raw text)", "start", min(2000, max_start), 0,
                              max(1, max_start), step=20)
    passage = raw[start:start + PASSAGE]
    passage_clean = corpus.clean(passage, cleaning)
    passage_ids = vocab.encode(passage_clean)
    c1, c2, c3 = st.columns(3)
    c1.markdown("**Raw**")
    c1.text(passage)
    c2.markdown("**Cleaned**")
    c2.text(passage_clean)
    c3.markdown(f"**{len(passage_ids)} tokens** ({'characters' if kind == 'char' else f'BPE, {size} types'})")
    spans = "".join(
        f'<span title="id {int(i)}" style="background:{TOKEN_COLOURS[n % len(TOKEN_COLOURS)]};'
        f'border-radius:3px;padding:1px 0;white-space:pre-wrap">{html.escape(vocab.token_text(int(i)))}</span>'
        for n, i in enumerate(passage_ids))
    c3.markdown(f'<div style="font-family:monospace;line-height:1.9">{spans}</div>', unsafe_allow_html=True)
    c3.caption("Alternating colours mark token boundaries; hover a token for its id.")
    st.code(" ".join(str(int(i)) for i in passage_ids[:120]) + (" ..." if len(passage_ids) > 120 else ""),
            language=None)

    bpt = tokens.bytes_per_token(vocab, text, ids)
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Characters after cleaning", f"{len(text):,}")
    m2.metric("Tokens", f"{len(ids):,}")
    m3.metric("Vocabulary size", f"{len(vocab):,}")
    m4.metric("Bytes per token", f"{bpt:.3f}")

    left, right = st.columns(2)
    with left:
        st.markdown("**Vocabulary** (token, id, count in the text)")
        counts = np.bincount(ids, minlength=len(vocab))
        table = pd.DataFrame({"token": [visible(vocab.token_text(i)) for i in range(len(vocab))],
                              "id": np.arange(len(vocab)), "count": counts})
        st.dataframe(table.sort_values("count", ascending=False), hide_index=True, height=300, width="stretch")
    with right:
        n_top = url_state.choice("Most frequent", "topn", 1, (1, 2, 3), widget="radio", horizontal=True,
                              format_func=lambda n: f"{n}-grams")
        top = [(visible(gram), count) for gram, count in texts.top_ngrams(text, kind, size, n_top, 12)]
        st.dataframe(pd.DataFrame(top, columns=["n-gram", "count"]),
                     hide_index=True, height=300, width="stretch")

    curves, cov = texts.ngram_statistics(text, kind, size)
    zipf = go.Figure()
    for n, curve in zip((1, 2, 3), curves):
        zipf.add_trace(go.Scatter(x=np.arange(1, len(curve) + 1), y=curve, name=f"{n}-grams", mode="lines"))
    zipf.update_layout(title="Zipf's law: frequency against rank (log-log)", xaxis_title="rank", yaxis_title="count",
                       xaxis_type="log", yaxis_type="log", height=360, margin=dict(t=50, b=40))
    cfig = go.Figure()
    cfig.add_trace(go.Scatter(x=[c.n for c in cov], y=[c.distinct for c in cov], name="distinct n-grams seen",
                              mode="lines+markers"))
    cfig.add_trace(go.Scatter(x=[c.n for c in cov], y=[float(c.possible) for c in cov], name="possible |V|ⁿ",
                              mode="lines+markers", line=dict(dash="dash")))
    cfig.add_trace(go.Scatter(x=[c.n for c in cov], y=[c.total for c in cov], name="n-grams in the text",
                              mode="lines", line=dict(dash="dot", color="gray")))
    cfig.update_layout(title="The table runs out of data", xaxis_title="n", yaxis_title="count", yaxis_type="log",
                       height=360, margin=dict(t=50, b=40), xaxis=dict(dtick=1))
    z1, z2 = st.columns(2)
    z1.plotly_chart(zipf, width="stretch")
    z2.plotly_chart(cfig, width="stretch")
    last = cov[-1]
    st.markdown(
        f"With n = {last.n}, the text shows {last.distinct:,} distinct n-grams out of {last.possible:.3g} possible "
        f"({100 * last.share:.2g}%). Most possible contexts never occur even once, so a count table cannot say "
        "anything about them, and the few that occur are seen only a handful of times. Smoothing patches this; "
        "a recurrent network avoids it by squeezing the whole past into a fixed-size state."
    )

    with st.expander("Bytes per token as the BPE vocabulary grows"):
        if st.toggle("Compute the sweep (trains one tokenizer per size, then cached)", key="tokens.sweep"):
            sweep = pd.DataFrame(texts.bytes_per_token_sweep(text, tuple(SIZES)))
            sfig = go.Figure(go.Bar(x=sweep["tokenizer"], y=sweep["bytes per token"]))
            sfig.update_layout(yaxis_title="bytes per token", height=320, margin=dict(t=20, b=40))
            st.plotly_chart(sfig, width="stretch")
            st.caption("More token types cover longer pieces of text, so each token carries more bytes. To compare "
                       "a character model with a BPE model fairly, divide each one's bits per token by its bytes per "
                       "token: bits per byte.")

st.subheader("How many parameters? An n-gram table against an RNN")
k1, k2, k3, k4 = st.columns(4)
with k1:
    V = url_state.int_input("Vocabulary |V|", "V", 10_000, 2, 1_000_000)
with k2:
    k = url_state.int_input("Context length k", "k", 20, 1, 100)
with k3:
    h = url_state.int_input("Hidden units h", "h", 256, 1, 100_000)
with k4:
    d = url_state.int_input("Embedding size d (0 = one-hot)", "d", 256, 0, 100_000)
with learner_errors():
    terms = tokens.rnn_parameter_terms(V, d, h)
    table_size = tokens.ngram_table_size(V, k)
    rnn_total = sum(terms.values())
    p1, p2 = st.columns(2)
    p1.metric(f"({k}+1)-gram table entries, |V|^(k+1)", f"10^{math.log10(table_size):.1f}")
    p2.metric("RNN parameters", f"{rnn_total:,}")
    st.dataframe(pd.DataFrame({"term": list(terms), "parameters": list(terms.values())}), hide_index=True)
    st.markdown(
        f"Every extra token of context multiplies the table by |V| = {V:,} (adds {math.log10(V):.1f} to the exponent). "
        "The RNN's count does not depend on k at all: the same weights are applied at every step, and only "
        "the fixed-size state carries the context. Its largest terms are the embedding and output layer, which "
        "grow with |V|, and the recurrent matrix, which grows with h²."
    )

show_source(corpus.clean_letters, tokens.CharVocab.encode, tokens.train_bpe, tokens.ngram_counts, tokens.rnn_parameter_terms)
