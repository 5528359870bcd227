"""Issue 41's sweep: every lab and every act of the chapter, each declared control walked over its range (both ends,
the default, every choice, with the other controls at their defaults, plus the values the issue names and points
drawn by hypothesis), the page's claims computed by the same core functions the page prints, and each claim's
condition checked against the data the page draws by a rule written here, independently of the one that chose the
claim. A deliberately wrong claim fails the same rules (test_a_planted_claim_fails_every_rule_book).

Controls that change only read-outs (numbers printed as they are, with no trend, comparison or regime said about
them) are listed in READOUTS with why, so the coverage test knows every control is accounted for. Forecasting and
Act 1 have their own, finer sweep in tests/test_claims.py; this file checks that it exists."""
from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from core.claims import Claim
from core.labs import CHAPTER_ACTS, LABS, SCALES, GradientFlow, controls_of
from core.nn import gradflow, gradflow_readings, param_counts, sample_readings
from core.settings import Setting

# --- the walk: every control's ends, default and choices ---------------------------------------------------------


def values_of(s: Setting) -> list:
    """The values the sweep tries for one control: its choices, both truth values, or its ends and default."""
    if s.choices:
        return list(s.choices)
    if s.kind is bool:
        return [False, True]
    if s.kind in (int, float) and s.lo is not None and s.hi is not None:
        lo = s.lo if not s.lo_open else s.lo + (s.step or 0.1)
        return sorted({s.kind(lo), s.default, s.kind(s.hi)})
    return [s.default]


def walk(page: str, names: list[str], base=None) -> list:
    """The page's settings dataclass at each value of each named control, the others at their defaults."""
    from core.labs import SETTINGS_OF
    cls = SETTINGS_OF[page]
    base = base or cls()
    controls = controls_of(page)
    return [dataclasses.replace(base, **{n: v}) for n in names for v in values_of(controls[n])]


# --- Gradient flow: its claims, and the rules that check them -------------------------------------------------


def gradflow_claims(s: GradientFlow) -> tuple[list[Claim], gradflow.Analysis]:
    a = gradflow.analyse(s.n, s.scale, s.T, s.kind, s.input_scale, s.seed, s.use_tanh, s.theta)
    claims = [gradflow_readings.regime(a), gradflow_readings.outside(a), gradflow_readings.clip_action(a, s.theta),
              gradflow_readings.clip_share(a)]
    damped = gradflow_readings.damping(a)
    return claims + ([damped] if damped else []), a


def band(rate: float) -> str:
    return "vanishing" if rate < 0.99 else "exploding" if rate > 1.01 or not math.isfinite(rate) else "stable"


def said_outside(text: str) -> int | None:
    m = re.search(r"; (none|\d+) lies? outside", text)
    return None if m is None else 0 if m.group(1) == "none" else int(m.group(1))


def gradflow_holds(c: Claim, s: GradientFlow, a: gradflow.Analysis) -> bool:
    curve = a.linear if a.tanh is None else a.tanh
    T = len(curve) - 1
    end = curve[-1] / curve[0]
    rate = end ** (1 / T) if end > 0 else 0.0
    sq = curve.astype(np.float64) ** 2
    older = float(sq[T // 2 + 1:].sum() / sq.sum()) if sq.sum() > 0 else 0.0
    norm = float(np.sqrt(sq.sum()))
    rho = float(np.max(np.abs(np.linalg.eigvals(a.W))))
    rules = {
        "gradflow.vanishing": lambda: band(rate) == "vanishing" and ("shrinks" in c.text) == (rate < 1),
        "gradflow.stable": lambda: band(rate) == "stable",
        "gradflow.exploding": lambda: band(rate) == "exploding" and ("grows" in c.text) == (rate > 1),
        "gradflow.outside": lambda: said_outside(c.text) == int(np.sum(np.abs(np.linalg.eigvals(a.W)) > 1 + 1e-9))
        and f"is {rho:.3f};" in c.text,
        "clip.leaves": lambda: norm <= s.theta and np.allclose(a.clipped, curve),
        "clip.scales": lambda: norm > s.theta and np.allclose(a.clipped, curve * s.theta / norm, rtol=1e-12),
        "clip.share_vanished": lambda: band(rate) == "vanishing" and older < 0.01,
        "clip.share_distant": lambda: older > 0.5,
        "clip.share_kept": lambda: older <= 0.5,
        "gradflow.damped_vanishing": lambda: s.use_tanh and rho > 1 and rate < 0.9 * rho and band(rate) == "vanishing",
        "gradflow.damped_stable": lambda: s.use_tanh and rho > 1 and rate < 0.9 * rho and band(rate) == "stable",
        "gradflow.damped_exploding": lambda: s.use_tanh and rho > 1 and rate < 0.9 * rho and band(rate) == "exploding",
    }
    return rules[c.kind]()


def check_gradflow(s: GradientFlow) -> None:
    claims, a = gradflow_claims(s)
    for c in claims:
        assert gradflow_holds(c, s, a), (s, c.kind, c.text)
    curve = a.shown
    rate = gradflow.growth_factor(curve)
    rho = float(np.max(np.abs(np.linalg.eigvals(a.W))))
    said_damped = any(c.kind.startswith("gradflow.damped") for c in claims)
    assert said_damped == (s.use_tanh and rho > 1 and rate < 0.9 * rho), (s, "damping said when not, or not said")


def test_gradient_flow_every_control_over_its_range():
    names = list(controls_of("gradient_flow"))
    points = walk("gradient_flow", names)
    named = [GradientFlow(scale=4.0, input_scale=5.0), GradientFlow(scale=1.05, use_tanh=False),
             GradientFlow(kind="orthogonal"), GradientFlow(kind="orthogonal", scale=0.95, use_tanh=False),
             GradientFlow(scale=4.0, T=200, n=256, use_tanh=False), GradientFlow(scale=0.25, T=200)]
    for s in points + named:
        check_gradflow(s)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scale=st.sampled_from(SCALES), n=st.integers(2, 256), T=st.integers(1, 200),
       kind=st.sampled_from(["gaussian", "orthogonal"]), tanh=st.booleans(),
       input_scale=st.floats(0.0, 5.0).map(lambda v: round(v, 1)), theta=st.floats(0.1, 10.0).map(lambda v: round(v, 1)),
       seed=st.integers(0, 10_000))
def test_gradient_flow_at_points_drawn_by_hypothesis(scale, n, T, kind, tanh, input_scale, theta, seed):
    check_gradflow(GradientFlow(scale=scale, n=n, T=T, kind=kind, use_tanh=tanh, input_scale=input_scale,
                                theta=theta, seed=seed))


def test_the_saturation_note_says_what_its_rates_do():
    """'What to try' quotes four rates at fixed settings: 'falls' only where the second is lower, and the regime
    word for each second rate."""
    rates = gradflow_readings.saturation_rates()
    c = gradflow_readings.saturation(rates)
    for scale in (2.0, 4.0):
        before, after = rates[scale, 0.0], rates[scale, 5.0]
        said = re.search(rf"scale {scale:g}.*?(falls|rises|stays) from {before:.2f} to {after:.2f}, ([a-z ]+)", c.text)
        assert said, c.text
        assert said.group(1) == ("falls" if after < before else "rises" if after > before else "stays")
        assert said.group(2) == {"vanishing": "vanishing", "stable": "holding its size",
                                 "exploding": "still growing"}[band(after)]


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
    f = dataclasses.replace(__import__("core.labs", fromlist=["Forecasting"]).Forecasting(), **links["forecasting"])
    a = forecast.analyse(forecast.make_series(f.T, f.sigma, f.seed), f.tau, f.n_train, f.k)
    assert readings.far_horizon(a).kind == "forecast.far_no_better"
    g = dataclasses.replace(GradientFlow(), **links["gradient_flow"])
    assert gradflow_claims(g)[0][0].kind == "gradflow.exploding"
    from core.assets import HELD_OUT_BPC
    from core.nn import sampling
    from core.runs.saved import load_pretrained
    lm = load_pretrained()
    out = sampling.sample(lm, controls_of("sampling")["prefix"].default, 300, links["sampling"]["temperature"])
    odd = sampling.odd_choices(float(out.surprisal_bits.mean()), float(lm.meta[HELD_OUT_BPC]), len(lm.vocab))
    assert odd.kind == "sample.like_text", odd.text      # "captures its statistics": as predictable as real text


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


def test_tokens_counts_at_every_cleaning_tokenizer_and_size(corpus_file):
    """Text to tokens' cleaning, tokenizer and BPE size (Act 2: characters, letters): 'most never occur' only where
    the text shows under half the possible n-grams, with the mean count it quotes."""
    from core.text import corpus, ngrams, readings, tokens
    raw = corpus.load_corpus(corpus_file, download=False)
    seen = set()
    for cleaning in controls_of("tokens")["cleaning"].choices:
        text = corpus.clean(raw, cleaning)
        vocabs = [tokens.CharVocab.build(text), tokens.WordVocab.build(text)] + [
            tokens.train_bpe(text, size) for size in controls_of("tokens")["bpe_size"].choices[::2]]
        for vocab in vocabs:
            ids = np.asarray(vocab.encode(text))
            c = readings.coverage(ngrams.ngram_coverage(ids, 5))
            grams = {tuple(ids[i:i + 5]) for i in range(len(ids) - 4)}
            share = len(grams) / len(set(ids.tolist())) ** 5
            assert (c.kind == "ngrams.most_unseen") == (share < 0.5), (cleaning, vocab.kind, c.text)
            assert f"each seen {(len(ids) - 4) / len(grams):.1f} times" in c.text
            seen.add(c.kind)
    assert "ngrams.most_unseen" in seen


def test_a_short_text_can_show_most_of_its_ngrams():
    """The other branch: a text over two letters shows most of their 5-grams, and the claim says so."""
    from core.text import ngrams, readings
    rng = np.random.default_rng(0)
    c = readings.coverage(ngrams.ngram_coverage(rng.integers(0, 2, 5000), 5))
    assert c.kind == "ngrams.mostly_seen" and "32 that its 2 token types" in c.text


@pytest.fixture(scope="module")
def rnn_on_corpus(corpus_file):
    """The shipped RNN, the corpus and the RNN's held-out perplexity on it, which does not depend on alpha (the
    page computes it once per text, too)."""
    from core.nn import probe
    from core.runs.saved import load_pretrained
    from core.text import corpus
    lm, text = load_pretrained(), corpus.load_corpus(corpus_file, download=False)
    return lm, text, probe.model_perplexity(lm, text)


@pytest.mark.parametrize("alpha", [controls_of("tokens")["alpha"].choices[0], controls_of("tokens")["alpha"].choices[-1]])
def test_the_counting_model_against_the_rnn_at_each_alpha(rnn_on_corpus, alpha):
    """'Back up at n = 6', 'keeps falling' and 'lower than the best table' each from the rows they are about, at
    both ends of α (the default's page is tests/test_corrections.py's)."""
    from core.nn import probe
    from core.text import readings
    lm, text, ppl = rnn_on_corpus
    c = probe.compare_with_model(lm, text, alpha, model_ppl=ppl)
    held = [r["heldout_ppl"] for r in c.rows]
    train = [r["train_ppl"] for r in c.rows]
    for x in readings.counting_model(c.rows, c.model_ppl, c.held_out_chars, alpha):
        ok = {"ngram_lm.turns_up": lambda: int(np.argmin(held)) < len(held) - 1 and held[-1] > min(held),
              "ngram_lm.best_last": lambda: int(np.argmin(held)) == len(held) - 1,
              "ngram_lm.train_falls": lambda: bool(np.all(np.diff(train) <= 0)),
              "ngram_lm.train_not_falling": lambda: bool(np.any(np.diff(train) > 0)),
              "ngram_lm.rnn_better": lambda: c.model_ppl < min(held),
              "ngram_lm.rnn_not_better": lambda: c.model_ppl >= min(held)}[x.kind]()
        assert ok, (alpha, x.text)


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


# --- Sampling -------------------------------------------------------------------------------------------------


def test_sampling_greedy_and_hidden_state_over_its_controls():
    """Prefix, length, hidden_from: the greedy text's loop is found where it really repeats (checked by comparing
    the text with itself shifted by the period), and the hidden-state share is the share of |h| > 0.9."""
    from core.nn import probe, sampling
    from core.runs.saved import load_pretrained
    lm = load_pretrained()
    controls = controls_of("sampling")
    kinds = set()
    for prefix in (controls["prefix"].default, "a", "zzzz qqq"):
        for length in values_of(controls["length"]):
            greedy = sampling.sample(lm, prefix, length, 0.0).text
            sampled = sampling.sample(lm, prefix, length, 1.0, seed=0).text
            c = sample_readings.greedy(greedy, sampled)
            kinds.add(c.kind)
            if c.kind == "greedy.loop":
                p, start = c.numbers["period"], c.numbers["start"]
                tail = greedy[start:]
                assert tail[p:] == tail[:-p] and len(tail) >= 3 * p, (prefix, length, c.text)
            else:
                assert not any(greedy[-3 * p:][p:] == greedy[-3 * p:][:-p] for p in range(1, len(greedy) // 3 + 1)
                               if len(greedy) >= max(3 * p, 12)), (prefix, length, c.text)
    assert "greedy.loop" in kinds
    text = controls["prefix"].default * 8
    H = probe.hidden_states(lm, text)
    for start in controls["hidden_from"].choices:
        window = H[start - 1: start - 1 + 32]
        c = sample_readings.saturation(window)
        share = float(np.mean(np.abs(window) > 0.9))
        assert (c.kind == "hidden.saturated") == (share >= 0.3) and f"{100 * share:.0f}%" in c.text


# --- Training -------------------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(train=st.floats(1.0, 50.0), val=st.floats(1.0, 50.0), epoch=st.integers(0, 30))
def test_training_says_train_above_validation_only_when_it_is(train, val, epoch):
    from core.runs.readings import train_above_val
    from core.runs.record import HistoryRow
    c = train_above_val([HistoryRow(epoch, epoch, train, val, 1.0, 1.0, 1.0, 1.0)])
    assert (c is not None) == (epoch > 0 and train > val)


# --- coverage: every lab and act, every control ---------------------------------------------------------------

SWEPT = {   # page -> the controls whose claims a test above (or tests/test_claims.py) walks
    "forecasting": {"T", "n_train", "tau", "k", "sigma", "seed"},        # test_claims.py
    "gradient_flow": set(controls_of("gradient_flow")),
    "tokens": {"cleaning", "tokenizer", "bpe_size", "alpha", "V", "h", "d"},
    "rnn_cell": {"V", "h2"},                                              # test_claims.py: input_choice
    "sampling": {"prefix", "temperature", "length", "seed", "hidden_from"},
    "training": {"preset"},                                               # test_claims.py: the partitions
    "chapter": {"act", "tau", "scale"},
}
READOUTS = {   # page -> control: why no claim depends on it
    "tokens": {"source": "the upload runs the same functions on other text (the tests' own texts above)",
               "start": "which passage is shown: its tokens are printed, nothing is said about them",
               "top_n": "a table of the commonest n-grams, printed as counted",
               "bpe_text": "the pieces a text is cut into, printed as cut",
               "k": "only the table's size |V|^(k+1), printed as a power of ten"},
    "rnn_cell": {"word": "the read-outs of one step (values, probabilities) printed as computed",
                 "h": "as word", "seed": "as word", "t": "as word", "letter": "a row lookup, shown equal"},
    "sampling": {"model": "a session's own model runs the same functions", "top_k": "only changes the sample",
                 "top_p": "only changes the sample", "score_a": "surprisal printed as computed",
                 "score_b": "as score_a"},
    "training": {name: "the run it trains: its curve's claims are checked on any history "
                 "(test_training_says_train_above_validation_only_when_it_is)" for name in controls_of("training")
                 if name != "preset"},
    "chapter": {"h": "Act 3's parameter counts, printed as counted",
                "seed": "Act 4's live retrain: its claims are the stored run's functions on the new history"},
}
ACTS_SWEPT = {1: "test_claims.py: test_every_window_of_act_one", 2: "test_tokens_counts_at_every_cleaning_tokenizer_"
              "and_size", 3: "Act 3 states counts only", 4: "test_act_four_claims_on_the_stored_run",
              5: "test_act_five_bptt_figure_at_every_weight_scale"}


def test_every_lab_and_act_and_every_control_is_swept():
    for page in [p.key for p in LABS] + ["chapter"]:
        controls = set(controls_of(page))
        accounted = SWEPT.get(page, set()) | set(READOUTS.get(page, {}))
        assert controls == accounted, (page, controls ^ accounted)
        assert not SWEPT.get(page, set()) & set(READOUTS.get(page, {})), page
    assert set(ACTS_SWEPT) == set(CHAPTER_ACTS)


def test_a_planted_claim_fails_every_rule_book():
    """A claim with the wrong regime, a wrong clipping word, a wrong count and a wrong share each fail the rules."""
    s = GradientFlow(scale=4.0, use_tanh=False)
    claims, a = gradflow_claims(s)
    assert claims[0].kind == "gradflow.exploding"
    for wrong in ("gradflow.vanishing", "gradflow.stable"):
        assert not gradflow_holds(Claim(claims[0].text, wrong), s, a)
    assert not gradflow_holds(Claim("clipping leaves them alone", "clip.leaves"), s, a)
    assert not gradflow_holds(Claim("99 lie outside", "gradflow.outside"), s, a)
    assert not gradflow_holds(Claim("kept", "clip.share_kept"), s, a)
    from core.text import ngrams, readings
    c = readings.coverage(ngrams.ngram_coverage(np.random.default_rng(0).integers(0, 2, 5000), 5))
    assert c.kind == "ngrams.mostly_seen"    # so "most_unseen" here would be the planted error the token test catches
