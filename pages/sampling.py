"""Lab 4, Sampling: a pretrained character RNN; prefix, temperature, and what the model 'thinks'."""
import html

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core import sampling
from ui import model_choice, url_state
from ui.common import cite, learner_errors, show_source

url_state.page("sampling")
st.title("✍️ Sampling")
st.markdown(
    "A trained language model turns any prefix into a probability for every possible next character. "
    "**Sampling** draws one, feeds it back in, and repeats. The **temperature** T reshapes the distribution "
    "before drawing: T < 1 sharpens it towards the likeliest character, T > 1 flattens it towards uniform, "
    "T = 0 always takes the top choice (greedy)."
)
st.latex(r"p_T(c) = \frac{\exp(o_c / T)}{\sum_{c'} \exp(o_{c'} / T)}")
cite("9.5 Recurrent Neural Network Implementation from Scratch (prediction)")

controls, view = st.columns([1, 3], gap="large")
with controls:
    st.subheader("Controls")
    names = model_choice.available()
    model_name = url_state.choice("Model", "model", model_choice.PRETRAINED, names,
                               format_func=lambda n: "Pretrained (The Time Machine)" if n == model_choice.PRETRAINED else n)
    prefix = url_state.text("Prefix", "prefix", "the time traveller", 200)
    temperature = url_state.float_slider("Temperature T", "temp", 0.8, 0.0, 2.0, 0.05)
    length = url_state.int_slider("Characters to generate", "len", 300, 20, 1000, step=10)
    top_k = url_state.int_slider("Top-k (0 = off)", "topk", 0, 0, 50)
    top_p = url_state.float_slider("Top-p (1 = off)", "topp", 1.0, 0.05, 1.0, 0.05)
    seed = url_state.int_input("Seed", "seed", 0, 0, 1_000_000)

    def _next_seed() -> None:  # a callback runs before the widgets, so it may change the seed widget's state
        st.session_state["sampling.seed"] = (st.session_state["sampling.seed"] + 1) % 1_000_001

    st.button("Regenerate", icon="🎲", width="stretch", on_click=_next_seed,
              help="Draw a new sample: the seed goes up by one.")

def tint(bits: float) -> str:
    level = min(bits / 6.0, 1.0)  # 0 bits: white, 6+ bits: strong red
    return f"rgba(228, 87, 86, {0.08 + 0.72 * level:.2f})"


def shaded(tokens: list[str], bits: np.ndarray, bold: str = "") -> str:
    """Tokens as HTML, each shaded by its surprisal (hover: probability and bits), after an optional bold lead."""
    spans = "".join(f'<span title="p = {2.0 ** -b:.3f} ({b:.1f} bits)" style="background:{tint(b)}">'
                    f'{html.escape(t)}</span>' for t, b in zip(tokens, bits))
    return (f'<div style="font-family:monospace;font-size:1.05em;line-height:1.7;white-space:pre-wrap;'
            f'border:1px solid #e5e7eb;border-radius:6px;padding:12px"><b>{html.escape(bold)}</b>{spans}</div>')


@st.cache_data(show_spinner=False, max_entries=64)
def greedy(model_key: str, prefix: str, length: int, _lm) -> sampling.Sample:
    """Greedy text does not depend on temperature or seed: computed once per model, prefix and length."""
    return sampling.sample(_lm, prefix, length, 0.0)


with view, learner_errors():
    lm = model_choice.get(model_name)
    model_key = f"{model_name}:{id(lm)}"  # a session's model never shares cache entries with another's
    meta = lm.meta
    if model_name == model_choice.PRETRAINED:
        layers = lm.net.spec.num_layers
        st.caption(f"Plain tanh RNN (no gates), {layers} layer{'s' if layers > 1 else ''} of {lm.net.spec.hidden_size} "
                   f"units, {len(lm.vocab)} characters; held-out "
                   f"perplexity {meta.get('val_ppl', float('nan')):.2f} ({meta.get('val_bits_per_char', float('nan')):.2f} "
                   "bits per character).")
    out = sampling.sample(lm, prefix, length, temperature, top_k or None, top_p if top_p < 1 else None, seed)
    if out.unknown:
        st.warning(f"The model does not know {', '.join(map(repr, out.unknown))}: dropped from the prefix.", icon="⚠️")
    if prefix and out.prefix != prefix:
        st.caption(f"The model reads the prefix cleaned as its training text: {out.prefix!r}")

    surprisal = -np.log2(np.clip(out.probabilities, 1e-12, 1.0))
    st.markdown(shaded(out.token_texts, surprisal, bold=out.prefix), unsafe_allow_html=True)
    legend = "".join(f'<span style="background:{tint(b)};padding:0 6px;margin-right:4px">{b} bits</span>' for b in (0, 1, 2, 4, 6))
    st.markdown(f'<div style="font-size:0.85em">Shade = surprisal −log₂ p of each generated character under the '
                f'model at T = 1: {legend} (bold: your prefix)</div>', unsafe_allow_html=True)
    st.metric("Mean surprisal of the generated text", f"{surprisal.mean():.2f} bits/char",
              help="Low: the model found its own text predictable. Greedy text scores lowest, high T highest.")

    st.subheader("What comes next?")
    logits = sampling.next_logits(lm, prefix)
    p_t, p_1 = sampling.distribution(logits, temperature), sampling.distribution(logits, 1.0)
    top = np.argsort(-p_1)[:15]
    labels = [repr(lm.vocab.token_text(int(i))) for i in top]
    bfig = go.Figure()
    bfig.add_trace(go.Bar(x=labels, y=p_1[top], name="T = 1 (the model)", marker_color="#9aa5b1"))
    bfig.add_trace(go.Bar(x=labels, y=p_t[top], name=f"T = {temperature:g} (sampled from)", marker_color="#3f6fd8"))
    bfig.update_layout(barmode="group", yaxis_title="probability", height=330, margin=dict(t=20, b=40),
                       title=f"Entropy {sampling.entropy_bits(p_1):.2f} bits at T = 1, "
                             f"{sampling.entropy_bits(p_t):.2f} bits at T = {temperature:g}")
    st.plotly_chart(bfig, width="stretch")

    st.subheader("Inside the model: the hidden state")
    shown = (out.prefix + out.text)[:160]
    H = sampling.hidden_states(lm, shown)
    if len(H):
        strongest = np.argsort(-H.std(axis=0))[:24]           # units whose value changes most along the text
        most_active = np.argsort(-np.abs(H).mean(axis=0))[:5]  # units furthest from zero on average
        cleaned_shown, _ = lm.prepare_prefix(shown)
        labels = [lm.vocab.token_text(int(i)) for i in lm.vocab.encode(cleaned_shown)]
        hfig = go.Figure(go.Heatmap(z=H[:, strongest].T, x=[f"{i}:{c}" for i, c in enumerate(labels)],
                                    y=[f"unit {u}" for u in strongest], colorscale="RdBu", zmid=0, zmin=-1, zmax=1))
        hfig.update_layout(height=460, margin=dict(t=20, b=40), xaxis=dict(tickangle=0, tickfont=dict(size=8), nticks=40))
        st.plotly_chart(hfig, width="stretch")
        st.caption("Rows: the 24 units (of the top layer's "
                   f"{H.shape[1]}) whose activation varies most along this text; columns: characters read. Look for "
                   "units that flip at spaces or stay on inside words: a first glimpse of what the state remembers. "
                   "Most active units (largest mean |h|): "
                   + ", ".join(f"{u} ({np.abs(H[:, u]).mean():.2f})" for u in most_active) + ".")

    st.subheader("How surprised is the model by your text?")
    st.markdown("The same surprisal, now for text you write: every character is scored given all the ones before "
                "it. Compare a sentence with the same words shuffled, or with a misspelling: the model has learnt "
                "spelling and word order only as far as its fewer bits per character show. (The first character is "
                "read from a blank state, so it always costs a few bits.)")
    s1, s2 = st.columns(2)
    for col, label, name, default in ((s1, "Your text", "score_a", "the machine stood in the laboratory"),
                                      (s2, "Compare with", "score_b", "laboratory the in stood machine the")):
        with col:
            typed = url_state.text(label, name, default, 200)
            scored = sampling.score_text(lm, typed)
            if scored.text != typed:
                st.caption(f"The model reads this cleaned as its training text: {scored.text!r}")
            if scored.unknown:
                st.caption(f"Not in the model's vocabulary, dropped: {', '.join(map(repr, scored.unknown))}")
            if scored.text:
                st.markdown(shaded(scored.tokens, scored.bits), unsafe_allow_html=True)
                st.metric("Surprisal", f"{scored.bits_per_char:.2f} bits/char",
                          help=f"Total surprisal divided by the number of characters (perplexity "
                               f"{scored.perplexity:.2f} per token); a model that guessed uniformly among its "
                               f"{len(lm.vocab)} tokens would score {np.log2(len(lm.vocab)):.2f} bits per token.")

    st.subheader("Greedy against sampled")
    shown_len = min(length, 300)
    greedy_out = greedy(model_key, prefix, shown_len, lm)
    if temperature >= 0.05:  # the same draw as above (same seed): its first characters, not a second run
        sampled_text = lm.vocab.decode(out.token_ids[:shown_len])
    else:
        sampled_text = sampling.sample(lm, prefix, shown_len, 0.05, top_k or None, top_p if top_p < 1 else None,
                                       seed).text
    g1, g2 = st.columns(2)
    g1.markdown(f"**Greedy (T = 0)**: distinct 3-grams {100 * sampling.distinct_ngram_share(greedy_out.text):.0f}%")
    g1.text(greedy_out.text)
    g2.markdown(f"**Sampled (T = {max(temperature, 0.05):g})**: distinct 3-grams "
                f"{100 * sampling.distinct_ngram_share(sampled_text):.0f}%")
    g2.text(sampled_text)
    st.caption("Greedy decoding always takes the single likeliest next character. Once it lands in a phrase "
               "that leads back to itself it repeats forever, so few of its 3-grams are distinct. Sampling keeps "
               "some randomness and stays varied, at the price of occasional odd choices.")

show_source(sampling.sample, sampling.distribution, sampling.score_text)
