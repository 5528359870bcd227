"""Lab 4, Sampling: a pretrained character RNN; prefix, temperature, and what the model 'thinks'."""
from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.assets import HELD_OUT_BPC, HELD_OUT_PPL
from core.nn import probe, sample_readings, sampling
from core.labs import HIDDEN_SPAN, HIDDEN_WINDOWS, controls_of
from ui import exercises, model_choice, url_state
from ui.common import chart_text, cite, header, plain, show_source
from ui.lab import lab_fragment
from ui.plots import frozen, show, style



@dataclass(frozen=True)
class Settings:
    """The lab's controls (each declared once, with its default and range, in controls())."""
    model: str
    prefix: str
    temperature: float
    length: int
    top_k: int | None
    top_p: float | None
    seed: int


def _next_seed() -> None:  # a callback runs before the widgets, so it may change the seed widget's state
    st.session_state["sampling.seed"] = (st.session_state["sampling.seed"] + 1) % 1_000_001


CONTROLS = controls_of("sampling")   # declared in core.labs


def controls() -> Settings:
    model = url_state.draw(CONTROLS["model"], choices=model_choice.available(), default=model_choice.PRETRAINED,
                           format_func=lambda n: "Pretrained" if n == model_choice.PRETRAINED else n)
    vocab_size = len(model_choice.get(model).vocab)
    # The default ends with a space: the next character (a word's first letter) is genuinely uncertain, so the
    # temperature has a visible effect (after "the time traveller" without it, a space has probability 1).
    prefix = url_state.draw(CONTROLS["prefix"])
    temperature = url_state.draw(CONTROLS["temperature"])
    length = url_state.draw(CONTROLS["length"])
    top_k = url_state.draw(CONTROLS["top_k"], hi=min(CONTROLS["top_k"].hi, vocab_size),
                           help=f"Keep only the k likeliest tokens (this model has {vocab_size}).")
    top_p = url_state.draw(CONTROLS["top_p"])
    seed = url_state.draw(CONTROLS["seed"])
    st.button("Regenerate", icon=":material/casino:", width="stretch", on_click=_next_seed,
              help="Draw a new sample: the seed goes up by one.")
    return Settings(model, prefix, temperature, length, top_k or None, top_p if top_p < 1 else None, seed)


def tint(bits: float) -> str:
    level = min(bits / 6.0, 1.0)  # 0 bits: white, 6+ bits: strong red
    return f"rgba(228, 87, 86, {0.08 + 0.72 * level:.2f})"


def shaded(tokens: list[str], bits: np.ndarray, bold: str = "") -> str:
    """Tokens as HTML, each shaded by its surprisal (hover: probability and bits), after an optional bold lead."""
    spans = "".join(f'<span title="p = {2.0 ** -b:.3f} ({b:.1f} bits)" style="background:{tint(b)}">'
                    f'{html.escape(t)}</span>' for t, b in zip(tokens, bits))
    return (f'<div style="font-family:monospace;font-size:1.05em;line-height:1.7;white-space:pre-wrap;'
            f'border:1px solid #e5e7eb;border-radius:6px;padding:12px"><b>{html.escape(bold)}</b>{spans}</div>')


def surprisal_legend() -> str:
    legend = "".join(f'<span style="background:{tint(b)};padding:0 6px;margin-right:4px;white-space:nowrap">'
                     f'{b} bits</span>'
                     for b in (0, 1, 2, 4, 6))
    return (f'<div style="font-size:0.85em">Shade = surprisal −log₂ p of each generated character under the '
            f'model at T = 1: {legend} (bold: your prefix)</div>')


# A fixed seed gives one draw, so draws and hidden-state views are cached by model and settings: the pretrained
# model's are shared by a whole class moving the same sliders (its key is the same for every session), a
# session's own model's stay its own. The figure is never changed after it is made, so sessions can share it.
def model_key(name: str, lm) -> str:
    return f"{name}:{lm.uid}"  # a session's model never shares cache entries with another's


@st.cache_data(show_spinner=False, max_entries=256)
def drawn(key: str, prefix: str, length: int, temperature: float, top_k, top_p, seed, _lm) -> sampling.Sample:
    return sampling.sample(_lm, prefix, length, temperature, top_k, top_p, seed)


@st.cache_resource(show_spinner=False, max_entries=128)
def hidden_view_of(key: str, shown: str, start: int, _lm) -> tuple[go.Figure, str] | None:
    """hidden_view, its figure frozen: drawn for every learner at these settings, its dict made once (0.8 ms a draw)."""
    view = hidden_view(_lm, shown, start)
    return None if view is None else (frozen(view[0]), view[1])


@st.cache_resource(show_spinner=False, max_entries=256)
def next_token_view(key: str, prefix: str, temperature: float, _lm) -> tuple[go.Figure, str]:
    """What comes next after the prefix, at T = 1 and at this temperature: the figure and its summary."""
    logits = probe.next_logits(_lm, prefix)
    return frozen(next_token_figure(_lm, logits, temperature)), next_token_summary(_lm, logits, temperature)


@st.cache_resource(show_spinner=False, max_entries=256)
def scored_of(key: str, text: str, _lm) -> probe.Score:
    """A text's surprisal under the model (it does not depend on the sliders: a temperature change reuses it)."""
    return probe.score_text(_lm, text)


def next_token_summary(lm, logits: np.ndarray, temperature: float) -> str:
    p_t, p_1 = sampling.distribution(logits, temperature), sampling.distribution(logits, 1.0)
    top = np.argsort(-p_1)[:3]
    likeliest = ", ".join(f"{lm.vocab.token_text(int(i))!r} {p_1[i]:.3f} (at T = {temperature:g}: {p_t[i]:.3f})"
                          for i in top)
    return (f"After the prefix, the likeliest next characters at T = 1 are {likeliest}; entropy "
            f"{sampling.entropy_bits(p_1):.2f} bits at T = 1 and {sampling.entropy_bits(p_t):.2f} bits at "
            f"T = {temperature:g}.")


def next_token_figure(lm, logits: np.ndarray, temperature: float) -> go.Figure:
    """The 15 likeliest next tokens at T = 1 and at the chosen temperature."""
    p_t, p_1 = sampling.distribution(logits, temperature), sampling.distribution(logits, 1.0)
    top = np.argsort(-p_1)[:15]
    labels = [repr(lm.vocab.token_text(int(i))) for i in top]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=labels, y=p_1[top], name="T = 1 (the model)", marker_color="#9aa5b1"))
    fig.add_trace(go.Bar(x=labels, y=p_t[top], name=f"T = {temperature:g} (sampled from)", marker_color="#3f6fd8"))
    fig.update_layout(barmode="group")
    return style(fig, f"Entropy {sampling.entropy_bits(p_1):.2f} bits at T = 1, "
                      f"{sampling.entropy_bits(p_t):.2f} bits at T = {temperature:g}",
                 "next character (the 15 likeliest at T = 1)", "probability", height=330)


def hidden_state_figure(H: np.ndarray, units: np.ndarray, labels: list[str], start: int = 0) -> go.Figure:
    """Chosen hidden units (rows, ordered by where they first switch) along HIDDEN_SPAN characters read from
    position `start` (columns, each character written under its own column; its position is in the hover)."""
    stop = min(start + HIDDEN_SPAN, len(labels))
    window = np.asarray(H)[start:stop]
    units = probe.order_by_first_flip(window, units)
    shown = ["␣" if c == " " else chart_text(c) for c in labels[start:stop]]
    x = list(range(start + 1, stop + 1))
    # The colour bar lies under the chart and the rows are named by number, so on a 390 px phone the 32 columns get
    # the whole width and each character under its column stays legible.
    fig = go.Figure(go.Heatmap(z=window[:, units].T, x=x, y=[str(u) for u in units],
                               colorscale="RdBu", zmid=0, zmin=-1, zmax=1,
                               colorbar=dict(title=dict(text="activation h", side="top"), orientation="h", thickness=10,
                                             len=0.6, y=-0.2, yanchor="top"),
                               customdata=[shown] * len(units),
                               hovertemplate="character %{x}: '%{customdata}'<br>unit %{y}: %{z:.2f}<extra></extra>"))
    style(fig, None, f"characters {start + 1}-{stop} of the {len(labels)} read (␣ is a space)", "unit",
          height=520)
    fig.update_layout(xaxis=dict(tickmode="array", tickvals=list(x), ticktext=shown,
                                 tickangle=0, tickfont=dict(size=13, family="monospace")),
                      yaxis=dict(autorange="reversed", tickfont=dict(size=10), type="category"),
                      margin=dict(l=60, r=10, b=120))
    return fig


def model_caption(lm, name: str) -> None:
    if name != model_choice.PRETRAINED:
        return
    layers, meta = lm.net.spec.num_layers, lm.meta
    st.caption(f"Plain tanh RNN (no gates), {layers} layer{'s' if layers > 1 else ''} of {lm.net.spec.hidden_size} "
               f"units, {len(lm.vocab)} characters; held-out perplexity {meta.get(HELD_OUT_PPL, float('nan')):.2f} "
               f"({meta.get(HELD_OUT_BPC, float('nan')):.2f} bits per character). Not the chapter's "
               f"model: the chapter trains one layer of 32 units with plain SGD; this one has {layers} layers of "
               f"{lm.net.spec.hidden_size}, dropout and Adam (`python -m core pretrain`). To sample from the "
               "chapter's own model, train the Book preset in the Training lab and pick it in Model above.")


def generated_text(lm, s: Settings) -> sampling.Sample:
    out = drawn(model_key(s.model, lm), s.prefix, s.length, s.temperature, s.top_k, s.top_p, s.seed, lm)
    if out.unknown:
        st.warning(f"The model does not know {plain(', '.join(map(repr, out.unknown)))}: dropped from the prefix.",
                   icon=":material/warning:")
    if s.prefix and out.prefix != s.prefix:
        st.caption(f"The model reads the prefix cleaned as its training text: {plain(repr(out.prefix), 240)}")
    bits = out.surprisal_bits
    st.markdown(shaded(out.token_texts, bits, bold=out.prefix), unsafe_allow_html=True)
    st.markdown(surprisal_legend(), unsafe_allow_html=True)
    st.metric("Mean surprisal of the generated text", f"{bits.mean():.2f} bits/char",
              help="Low: the model found its own text predictable. Greedy text scores lowest, high T highest.")
    with st.expander("Each generated character's probability (the shading in numbers)"):
        st.dataframe(pd.DataFrame({"position": np.arange(1, len(bits) + 1),
                                   "character": ["␣" if t == " " else t for t in out.token_texts],
                                   "probability (T = 1)": np.round(out.probabilities, 4),
                                   "surprisal (bits)": np.round(bits, 2)}), hide_index=True, height=260)
    return out


def hidden_view(lm, shown: str, start: int = 0) -> tuple[go.Figure, str] | None:
    """The hidden-state heatmap of HIDDEN_SPAN characters of the text shown, from position start, and its summary
    (None for an empty text). The states are those of reading the whole text from its first character."""
    H = probe.hidden_states(lm, shown)
    if not len(H):
        return None
    cleaned_shown, _ = lm.prepare_prefix(shown)
    labels = [lm.vocab.token_text(int(i)) for i in lm.vocab.encode(cleaned_shown)]
    start = min(start, (len(labels) - 1) // HIDDEN_SPAN * HIDDEN_SPAN)
    window = H[start: start + HIDDEN_SPAN]
    units = probe.most_variable_units(window, min(24, H.shape[1]))
    switching = probe.most_switching_units(window, units, 3)
    flips = (", ".join(f"unit {u} ({n} time{'s' if n != 1 else ''})" for u, n in switching if n)
             or "none: no row jumps by more than 1 between two characters here")
    return hidden_state_figure(H, units, labels, start), (
        f"Rows: the {len(units)} units (of the top layer's {H.shape[1]}) whose activation varies most along "
        f"characters {start + 1}-{start + len(window)}; columns: the characters read, each written under its "
        f"column; colour: the activation, -1 (red) to 1 (blue). {sample_readings.saturation(window[:, units])} "
        "Look for units that flip at spaces or stay on inside words: a first glimpse of "
        f"what the state remembers. The rows that switch most often here: {flips}.")


def hidden_state_section(lm, s: Settings, out: sampling.Sample) -> None:
    st.subheader("Inside the model: the hidden state")
    text = (out.prefix + out.text)[:HIDDEN_WINDOWS[-1] + HIDDEN_SPAN - 1]
    starts = [w for w in HIDDEN_WINDOWS if w <= len(text)]
    first = url_state.draw(CONTROLS["hidden_from"], choices=starts,
                           format_func=lambda w: f"{w}-{min(w + HIDDEN_SPAN - 1, len(text))}")
    view = hidden_view_of(model_key(s.model, lm), text, first - 1, lm)
    if view is not None:
        show(*view, "hidden-state")


def score_section(lm, model_name: str) -> None:
    st.subheader("How surprised is the model by your text?")
    st.markdown("The same surprisal, now for text you write: every character is scored given all the ones before "
                "it. Compare a sentence with the same words shuffled, or with a misspelling: the model has learnt "
                "spelling and word order only as far as its fewer bits per character show. (The first character is "
                "read from a blank state, so it always costs a few bits.)")
    for col, name in zip(st.columns(2), ("score_a", "score_b")):
        with col:
            typed = url_state.draw(CONTROLS[name])
            scored = scored_of(model_key(model_name, lm), typed, lm)
            if scored.text != typed:
                st.caption(f"The model reads this cleaned as its training text: {plain(repr(scored.text), 240)}")
            if scored.unknown:
                st.caption(f"Not in the model's vocabulary, dropped: {plain(', '.join(map(repr, scored.unknown)))}")
            if scored.text:
                st.markdown(shaded(scored.tokens, scored.bits), unsafe_allow_html=True)
                st.metric("Surprisal", f"{scored.bits_per_char:.2f} bits/char",
                          help=f"Total surprisal divided by the number of characters (perplexity "
                               f"{scored.perplexity:.2f} per token); a model that guessed uniformly among its "
                               f"{len(lm.vocab)} tokens would score {np.log2(len(lm.vocab)):.2f} bits per token.")


def greedy_vs_sampled(lm, s: Settings, out: sampling.Sample) -> None:
    st.subheader("Greedy against sampled")
    shown_len = min(s.length, 300)
    greedy_out = drawn(model_key(s.model, lm), s.prefix, shown_len, 0.0, None, None, None, lm)  # greedy
    if s.temperature >= 0.05:  # the same draw as above (same seed): its first characters, not a second run
        sampled_text = lm.vocab.decode(out.token_ids[:shown_len])
    else:
        sampled_text = sampling.sample(lm, s.prefix, shown_len, 0.05, s.top_k, s.top_p, s.seed).text
    g1, g2 = st.columns(2)
    g1.markdown(f"**Greedy (T = 0)**: distinct 3-grams {100 * probe.distinct_ngram_share(greedy_out.text):.0f}%")
    g1.text(greedy_out.text)
    g2.markdown(f"**Sampled (T = {max(s.temperature, 0.05):g})**: distinct 3-grams "
                f"{100 * probe.distinct_ngram_share(sampled_text):.0f}%")
    g2.text(sampled_text)
    real = float(lm.meta.get(HELD_OUT_BPC, float("nan")))
    odd = sampling.odd_choices(float(out.surprisal_bits.mean()), real, len(lm.vocab))
    st.caption(plain(f"{sample_readings.greedy(greedy_out.text, sampled_text)} {odd}", 2000))   # a model's text


def view(s: Settings) -> None:
    """Everything the controls move: the model's caption, the next-token figure, the sample and its sections."""
    exercises.hold_figures("sampling")
    lm = model_choice.get(s.model)
    model_caption(lm, s.model)
    out = generated_text(lm, s)
    st.subheader("What comes next?")
    show(*next_token_view(model_key(s.model, lm), s.prefix, s.temperature, lm), "next-token")
    hidden_state_section(lm, s, out)
    score_section(lm, s.model)
    greedy_vs_sampled(lm, s, out)


def main() -> None:
    url_state.page("sampling")
    header("sampling")
    st.markdown(
        "A trained language model turns any prefix into a probability for every possible next character. "
        "**Sampling** draws one, feeds it back in, and repeats. The **temperature** T reshapes the distribution "
        "before drawing: T < 1 sharpens it towards the likeliest character, T > 1 flattens it towards uniform, "
        "T = 0 always takes the top choice (greedy).")
    st.latex(r"p_T(c) = \frac{\exp(o_c / T)}{\sum_{c'} \exp(o_{c'} / T)}")
    cite("9.5 Recurrent Neural Network Implementation from Scratch (prediction)")
    exercises.assignment("sampling")
    lab_fragment("sampling", controls, view)
    show_source(sampling.sample, sampling.distribution, probe.score_text)
    exercises.section("sampling")


if __name__ == "__main__":
    main()
