"""Issue 41's sweep: every lab and every act of the chapter, each declared control walked over its range (both ends,
the default, every choice, with the other controls at their defaults, plus the values the issue names and points
drawn by hypothesis), the page's claims computed by the same core functions the page prints, and each claim's
condition checked against the data the page draws by a rule written independently of the one that chose the claim.
A lab built as one module (issue 62) is walked whole from the registry: its rules are in tests/test_lab_<key>.py,
with a planted wrong claim that fails them.

Controls that change only read-outs (numbers printed as they are, with no trend, comparison or regime said about
them) are listed in READOUTS with why, so the coverage test knows every control is accounted for. Forecasting and
Act 1 have their own, finer sweep in tests/test_claims.py; this file checks that it exists."""
from __future__ import annotations

import dataclasses
import math
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from claims_sweep import check_module_lab, module_labs, sweep_points
from conftest import corpus_path
from core.labs import CHAPTER_ACTS, LABS, PAGES, controls_of
from core.labs.gradient_flow import Settings as GradientFlow
from core.nn import gradflow, gradflow_readings, param_counts


def band(rate: float) -> str:
    return "vanishing" if rate < 0.99 else "exploding" if rate > 1.01 or not math.isfinite(rate) else "stable"


# --- Labs built as one module: every control of each, each claim by its kind's rule -----------------------------


@pytest.mark.parametrize("page", module_labs(), ids=lambda p: p.key)
def test_every_module_lab_over_every_control(page):
    """Every control of every lab built as one module, at both ends, its default and every choice (the others at
    their defaults), and at the settings the issues named: each claim its readings() make holds by the rule in
    tests/test_lab_<key>.py."""
    if page.corpus_charts and corpus_path() is None:
        pytest.skip("needs The Time Machine")
    points = sweep_points(page)
    kinds, refused = set(), 0
    for s in points:
        claims = check_module_lab(page, s)
        refused += claims is None
        kinds |= {c.kind for c in claims or []}
    assert kinds and refused < len(points) / 4, (kinds, refused)     # it said something, and mostly computed


# --- Act 5 and the claims it links to labs --------------------------------------------------------------------


def test_act_five_bptt_figure_at_every_weight_scale():
    """Act 5's control is the weight scale: 'times smaller' and 'the edge sits at a larger ρ' only where tanh's
    oldest term really is smaller than the linear one."""
    for scale in controls_of("chapter")["scale"].choices:
        a = gradflow.analyse(n=32, scale=scale, T=24)
        c = gradflow_readings.through_tanh(a)
        smaller = float(a.tanh[-1]) < float(a.linear[-1])
        assert (c.kind == "bptt.tanh_smaller") == smaller, (scale, c.text)
        assert c.text.endswith(f"is {band(gradflow.growth_factor(a.tanh))}.")


def test_act_fives_claims_hold_at_the_settings_they_link_to():
    """'Three claims, yours to poke at': each links to a lab at settings where the claim is what that lab says."""
    from core.sequences import forecast, readings
    from ui.chapter_after import CLAIMS
    links = {lab: query for _, lab, _, query in CLAIMS}
    f = dataclasses.replace(PAGES["forecasting"].settings(), **links["forecasting"])
    a = forecast.analyse(forecast.make_series(f.T, f.sigma, f.seed), f.tau, f.n_train, f.k)
    assert readings.far_horizon(a).kind == "forecast.far_no_better"
    g = dataclasses.replace(GradientFlow(), **links["gradient_flow"])
    lab = PAGES["gradient_flow"].module
    assert lab.readings(lab.compute(g))[0].kind == "gradflow.exploding"
    lab = PAGES["sampling"].module          # the page's own sample: its default seed, length and prefix
    kinds = {c.kind for c in lab.readings(lab.compute(dataclasses.replace(lab.Settings(), **links["sampling"])))}
    assert "sample.like_text" in kinds, kinds      # "captures its statistics": as predictable as real text


# --- Act 4: the stored run -----------------------------------------------------------------------------------


def test_act_four_claims_on_the_stored_run(corpus_file):
    """Act 4's seed retrains the run live (the browser and chapter tests do that); its claims are checked here on
    the stored run, every stored epoch: the curves' words, the gradient's reach by the lab's regime rule, and where
    the free-running text leaves the passage."""
    from core.lesson import passage, readings as lesson_readings, store
    from core.text.corpus import load_corpus
    baked = store.load_baked()
    history = baked.history
    for c in lesson_readings.passage_run(history, baked.vocab_size, None):
        if c.kind == "passage.train_falls":
            assert history[-1].train_ppl < history[0].train_ppl
        elif c.kind == "passage.overfits":
            held = [r.val_ppl for r in history if math.isfinite(r.val_ppl)]
            at = held.index(min(held))
            assert at < len(held) - 1 and held[-1] > 1.5 * held[at], c.text
        elif c.kind == "passage.held_out":
            held = [r.val_ppl for r in history if math.isfinite(r.val_ppl)]
            assert not held[-1] > 1.5 * min(held[:-1] or held), c.text
        else:
            assert c.kind == "passage.train_not_falling" and history[-1].train_ppl >= history[0].train_ppl
    raw = load_corpus(corpus_file, download=False)
    text = passage.passage(raw)
    window = text[: passage.config().num_steps + 1]
    for epoch, model in baked.models.items():
        r = passage.gradient_reach(model, window)
        c = gradflow_readings.reach(r.norms, epoch)
        rate = (r.norms[-1] / r.norms[0]) ** (1 / (len(r.norms) - 1))
        assert c.kind == f"reach.{band(rate)}", (epoch, rate, c.text)
        tf = passage.teacher_forcing(model, text)
        said, truth = tf.free_words(), tf.text[tf.prefix:]
        agree = next((i for i, (x, y) in enumerate(zip(tf.free, truth)) if x != y), None)
        if agree is None:
            assert said == "never leaves it"
        elif agree == 0:
            assert said == "leaves it at the first character"
        else:
            assert said.startswith(f"follows it for {agree} character")


# --- Text to tokens and Act 2 --------------------------------------------------------------------------------


def test_a_short_text_can_show_most_of_its_ngrams():
    """The other branch: a text over two letters shows most of their 5-grams, and the claim says so."""
    from core.text import ngrams, readings
    rng = np.random.default_rng(0)
    c = readings.coverage(ngrams.ngram_coverage(rng.integers(0, 2, 5000), 5))
    assert c.kind == "ngrams.mostly_seen" and "32 that its 2 token types" in c.text


@settings(max_examples=60, deadline=None)
@given(V=st.integers(2, 1_000_000), d=st.integers(0, 100_000), h=st.integers(1, 100_000))
def test_the_calculators_largest_terms_at_any_sizes(V, d, h):
    """The calculator's |V|, d and h (its k changes only the table): W_hh is called smaller than the largest only
    when it is, and the sizes it names are those of the largest term's shape."""
    terms = param_counts.rnn_parameter_terms(V, d, h)
    c = param_counts.largest_terms(terms)
    top = sorted(terms.values(), reverse=True)
    assert (c.kind == "params.hh_small") == (h * h < top[1]), (V, d, h, c.text)
    if c.kind == "params.hh_small":
        largest = max(terms, key=terms.get)
        assert ("|V|" in c.text.split("grow with")[1]) == ("|V|" in largest)


# --- coverage: every lab and act, every control ---------------------------------------------------------------

SWEPT = {   # page -> the controls whose claims a test above (or tests/test_claims.py) walks
    "training": {"preset"},                                               # test_claims.py: the partitions
    "chapter": {"act", "tau", "scale"},
}
READOUTS = {   # page -> control: why no claim depends on it
    "training": {name: "the run it trains: its curve's claims are checked on any history "
                 "(tests/test_lab_training.py)" for name in controls_of("training") if name != "preset"},
    "chapter": {"h": "Act 3's parameter counts, printed as counted",
                "seed": "Act 4's live retrain: its claims are the stored run's functions on the new history"},
}
ACTS_SWEPT = {1: "test_claims.py: test_every_window_of_act_one",
              2: "test_every_module_lab_over_every_control (tokens: characters, letters)",
              3: "Act 3 states counts only", 4: "test_act_four_claims_on_the_stored_run",
              5: "test_act_five_bptt_figure_at_every_weight_scale"}


def test_every_lab_and_act_and_every_control_is_swept():
    for page in [p.key for p in LABS] + ["chapter"]:
        controls = set(controls_of(page))
        if PAGES[page] in module_labs():     # walked whole by test_every_module_lab_over_every_control
            assert page not in SWEPT and page not in READOUTS, page
            continue
        accounted = SWEPT.get(page, set()) | set(READOUTS.get(page, {}))
        assert controls == accounted, (page, controls ^ accounted)
        assert not SWEPT.get(page, set()) & set(READOUTS.get(page, {})), page
    assert set(ACTS_SWEPT) == set(CHAPTER_ACTS)


def test_a_planted_claim_fails_the_token_rules():
    from core.text import ngrams, readings
    c = readings.coverage(ngrams.ngram_coverage(np.random.default_rng(0).integers(0, 2, 5000), 5))
    assert c.kind == "ngrams.mostly_seen"    # so "most_unseen" here would be the planted error the token test catches
