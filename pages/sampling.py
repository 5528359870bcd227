"""Lab 4, Sampling: draws what core.labs.sampling computes (settings, figures, readings all there)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core.i18n import _, current, sentences
from core.labs import controls_of, sampling as lab
from core.nn import probe, sampling
from ui import exercises, model_choice, url_state
from ui.common import plain
from ui.lab import lab_body, lab_intro, metric_row
from ui.plots import frozen_chart, show_chart
from ui.shading import shaded, surprisal_legend

CONTROLS = controls_of(lab.KEY)


def _next_seed() -> None:  # a callback runs before the widgets, so it may change the seed widget's state
    st.session_state["sampling.seed"] = (st.session_state["sampling.seed"] + 1) % 1_000_001


def controls() -> lab.Settings:
    model = url_state.draw(CONTROLS["model"], choices=model_choice.available(), default=model_choice.PRETRAINED,
                           format_func=lambda n: _("Pretrained") if n == model_choice.PRETRAINED else n)
    vocab_size = len(model_choice.get(model).vocab)
    # The default ends with a space: the next character (a word's first letter) is genuinely uncertain, so the
    # temperature has a visible effect (after "the time traveller" without it, a space has probability 1).
    prefix = url_state.draw(CONTROLS["prefix"])
    temperature = url_state.draw(CONTROLS["temperature"])
    length = url_state.draw(CONTROLS["length"])
    top_k = url_state.draw(CONTROLS["top_k"], hi=min(CONTROLS["top_k"].hi, vocab_size),
                           help=_("Keep only the k likeliest tokens (this model has {V}).").format(V=vocab_size))
    top_p = url_state.draw(CONTROLS["top_p"])
    seed = url_state.draw(CONTROLS["seed"])
    st.button(_("Regenerate"), icon=":material/casino:", width="stretch", on_click=_next_seed,
              help=_("Draw a new sample: the seed goes up by one."))
    return lab.Settings(model, prefix, temperature, length, top_k, top_p, seed)


# A fixed seed gives one draw, so draws and views are cached by model and settings: the pretrained model's are
# shared by a whole class moving the same sliders (its key is the same for every session), a session's own model's
# stay its own. A chart is never changed after it is made, so sessions can share it.
def model_key(name: str, lm) -> str:
    return f"{name}:{lm.uid}"  # a session's model never shares cache entries with another's


@st.cache_data(show_spinner=False, max_entries=256)
def drawn(key: str, s: lab.Settings, _lm) -> sampling.Sample:
    return lab.draw(_lm, s)


@st.cache_data(show_spinner=False, max_entries=256)
def greedy_of(key: str, prefix: str, length: int, _lm) -> str:
    return lab.greedy(_lm, lab.Settings(prefix=prefix, length=length))


@st.cache_resource(show_spinner=False, max_entries=256)
def next_token_of(key: str, prefix: str, temperature: float, top_k: int, top_p: float, lang: str, _lm) -> tuple:
    """What comes next after the prefix, at T = 1 and as the sampler draws: the numbers and the chart (its words in
    the language lang)."""
    n = lab.next_token(_lm, lab.Settings(prefix=prefix, temperature=temperature, top_k=top_k, top_p=top_p))
    return n, frozen_chart(lab.next_token_chart(n))


@st.cache_resource(show_spinner=False, max_entries=128)
def hidden_of(key: str, text: str, start: int, lang: str, _lm) -> tuple[lab.Hidden | None, object]:
    """The hidden state along the text shown and its chart (its words in the language lang), drawn for every learner
    at these settings."""
    h = lab.hidden(_lm, text, start)
    return h, None if h is None else frozen_chart(lab.hidden_chart(h))


@st.cache_resource(show_spinner=False, max_entries=256)
def scored_of(key: str, text: str, _lm) -> probe.Score:
    """A text's surprisal under the model (it does not depend on the sliders: a temperature change reuses it)."""
    return probe.score_text(_lm, text)


def generated_text(r: lab.Result) -> None:
    out, s = r.sample, r.settings
    if out.unknown:
        st.warning(_("The model does not know {chars}: dropped from the prefix.").format(
            chars=plain(", ".join(map(repr, out.unknown)))), icon=":material/warning:")
    if s.prefix and out.prefix != s.prefix:
        st.caption(_("The model reads the prefix cleaned as its training text: {text}").format(
            text=plain(repr(out.prefix), 240)))
    bits = out.surprisal_bits
    st.markdown(shaded(out.token_texts, bits, bold=out.prefix), unsafe_allow_html=True)
    st.markdown(surprisal_legend(), unsafe_allow_html=True)
    metric_row(lab.metrics(r))
    with st.expander(_("Each generated character's probability (the shading in numbers)")):
        st.dataframe(pd.DataFrame({_("position"): np.arange(1, len(bits) + 1),
                                   _("character"): ["␣" if t == " " else t for t in out.token_texts],
                                   _("probability (T = 1)"): np.round(out.probabilities, 4),
                                   _("surprisal (bits)"): np.round(bits, 2)}), hide_index=True, height=260)


def hidden_state_section(key: str, lm, out: sampling.Sample) -> None:
    st.subheader(_("Inside the model: the hidden state"))
    text = lab.shown_text(out)
    first = url_state.draw(CONTROLS["hidden_from"], choices=lab.window_starts(text),
                           format_func=lambda w: f"{w}-{min(w + lab.HIDDEN_SPAN - 1, len(text))}")
    chart = hidden_of(key, text, first - 1, current(), lm)[1]
    if chart is not None:
        show_chart(chart)


def score_section(key: str, lm) -> None:
    st.subheader(_("How surprised is the model by your text?"))
    st.markdown(_(lab.SCORE_INTRO))
    for col, name in zip(st.columns(2), ("score_a", "score_b")):
        with col:
            typed = url_state.draw(CONTROLS[name])
            scored = scored_of(key, typed, lm)
            if scored.text != typed:
                st.caption(_("The model reads this cleaned as its training text: {text}").format(
                    text=plain(repr(scored.text), 240)))
            if scored.unknown:
                st.caption(_("Not in the model's vocabulary, dropped: {chars}").format(
                    chars=plain(", ".join(map(repr, scored.unknown)))))
            if scored.text:
                st.markdown(shaded(scored.tokens, scored.bits), unsafe_allow_html=True)
                st.metric(_("Surprisal"), _("{bits:.2f} bits/char").format(bits=scored.bits_per_char),
                          help=_("Total surprisal divided by the number of characters (perplexity {ppl:.2f} per "
                                 "token); a model that guessed uniformly among its {V} tokens would score {uniform:.2f} "
                                 "bits per token.").format(ppl=scored.perplexity, V=len(lm.vocab),
                                                            uniform=np.log2(len(lm.vocab))))


def greedy_vs_sampled(r: lab.Result) -> None:
    st.subheader(_("Greedy against sampled"))
    c, said = r.comparison, lab.comparison_readings(r)
    shares = next(x for x in said if x.kind.startswith("variety.")).numbers   # the shares the claim is built from
    g1, g2 = st.columns(2)
    g1.markdown(_("**Greedy (T = 0)**: distinct 3-grams {share:.0f}%").format(share=100 * shares["greedy"]))
    g1.text(c.greedy)
    g2.markdown(_("**Sampled ({words})**: distinct 3-grams {share:.0f}%").format(words=plain(c.sampled_words),
                                                                               share=100 * shares["sampled"]))
    g2.text(c.sampled)
    st.caption(plain(sentences(*said), 2000))   # quotes a model's text


def view(s: lab.Settings) -> None:
    """Everything the controls move: the model's caption, the sample, the next-token figure and the sections."""
    exercises.hold_figures(lab.KEY)
    lm = model_choice.get(s.model)
    key = model_key(s.model, lm)
    if s.model == model_choice.PRETRAINED:
        st.caption(lab.model_words(lm))
    out = drawn(key, s, lm)
    nxt, next_chart = next_token_of(key, s.prefix, s.temperature, s.top_k, s.top_p, current(), lm)
    r = lab.assemble(lm, s, out, nxt, greedy_of(key, s.prefix, min(s.length, lab.GREEDY_SHOWN), lm), None)
    generated_text(r)
    st.subheader(_("What comes next?"))
    show_chart(next_chart)
    hidden_state_section(key, lm, out)
    score_section(key, lm)
    greedy_vs_sampled(r)


def main() -> None:
    url_state.page("sampling")
    lab_intro(lab)
    exercises.assignment(lab.KEY)
    lab_body(lab, controls, view)
    exercises.section(lab.KEY)


if __name__ == "__main__":
    main()
