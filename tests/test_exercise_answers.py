"""Every exercise's answer pinned from an independent formula or the book's own number (issue 26), never from the
exercise's solver: a maths bug in core (AR weights halved, temperature multiplying, tanh as the identity,
perplexity as 2^CE, clipping per step ...) changes an answer here and fails this file. `python -m core exercises`
checks the graders; this file checks the maths behind them. Each test says what it compares with."""
import math

import numpy as np
import pytest
import torch

from conftest import corpus_path
from core.exercises import types as core_ex
from core.exercises.bank import BANK

NEEDS_CORPUS = pytest.mark.skipif(corpus_path() is None, reason="needs The Time Machine")


def answer(key: str):
    return BANK[key].run().answer


def test_every_exercise_is_pinned_here():
    """Each exercise's answer is pinned by a test named test_<key>__..., here or in its lab's own test file
    (tests/test_lab_<lab>.py, where a lab added by the README's recipe keeps its pins)."""
    import importlib
    from pathlib import Path
    names = set(globals())
    for path in Path(__file__).parent.glob("test_lab_*.py"):
        names |= set(vars(importlib.import_module(path.stem)))
    pinned = {name[len("test_"):].split("__")[0] for name in names if name.startswith("test_") and "__" in name}
    assert pinned == set(BANK)


# --- Forecasting: numpy's least squares on the same noisy sine, forecasts iterated by hand ----------------------

def _series(T=1000, sigma=0.2, seed=0):
    t = np.arange(1, T + 1, dtype=np.float64)
    return np.sin(0.01 * t) + sigma * np.random.default_rng(seed).standard_normal(T)


def _fit(x, tau, n_train=600):
    rows = np.array([np.append(x[i - tau:i], 1.0) for i in range(tau, n_train)])
    coef, *_ = np.linalg.lstsq(rows, x[tau:n_train], rcond=None)
    return coef[:-1], coef[-1]


def _k_step_mse(x, w, b, tau, k, n_train=600):
    errors = []
    for i in range(max(n_train, tau + k - 1), len(x)):
        window = list(x[i - k + 1 - tau:i - k + 1])
        for _ in range(k):
            window.append(float(np.dot(window[-tau:], w) + b))
        errors.append(window[-1] - x[i])
    return float(np.mean(np.square(errors)))


def test_fc_horizon__from_numpy_least_squares():
    x = _series()
    w, b = _fit(x, 4)
    ratio = _k_step_mse(x, w, b, 4, 64) / _k_step_mse(x, w, b, 4, 1)
    assert ratio > 5 and answer("fc_horizon") == "more than 5 times larger"


def test_fc_window__from_numpy_least_squares():
    x = _series()
    short, long = (_k_step_mse(x, *_fit(x, tau), tau, 16) for tau in (4, 32))
    assert answer("fc_window") == ("yes" if long < short else "no")


def test_fc_settles__is_the_fixed_point_b_over_one_minus_the_weights():
    w, b = _fit(_series(), 4)
    assert answer("fc_settles") == pytest.approx(b / (1 - w.sum()), abs=1e-9)


def test_fc_no_noise__two_values_by_the_sine_s_own_recurrence():
    a, t = 0.01, np.arange(1.0, 50.0)
    assert np.allclose(np.sin(a * (t + 1)) + np.sin(a * (t - 1)), 2 * np.cos(a) * np.sin(a * t), atol=1e-14)
    assert np.sin(a * 10) == pytest.approx(np.sin(a * (np.pi / a - 10)))   # one value: a rising and a falling twin
    assert answer("fc_no_noise") == 2


# --- Text to tokens: the book's own numbers ------------------------------------------------------------------

def test_tok_table__is_the_book_s_ten_to_the_84():
    assert answer("tok_table") == pytest.approx(21 * math.log10(10_000)) == 84


def test_tok_rnn__is_the_book_s_5261328():
    V, d, h = 10_000, 256, 256
    assert V * d + d * h + h * h + h + h * V + V == 5_261_328
    assert answer("tok_rnn") == 5_261_328


def test_common_mistakes_are_rejected_and_named():
    for key, wrong, says in (("tok_table", 80, "contexts alone"), ("tok_table", 76, "the table also needs the next"),
                             ("tok_rnn", 5_195_792, "one-hot"), ("tok_rnn", 5_251_072, "leaves out the biases"),
                             ("cell_state", 11, "number of steps"), ("cell_state", 44, "not appended")):
        graded = core_ex.grade(BANK[key], wrong)
        assert not graded.correct and says in graded.message, (key, wrong, graded.message)
    for key, near_miss in (("cell_state", 3.5), ("fc_settles", answer("fc_settles") - 0.02)):
        assert not core_ex.grade(BANK[key], near_miss).correct


@NEEDS_CORPUS
def test_tok_coverage__counted_with_a_python_set():
    import re
    text = re.sub("[^a-z]+", " ", corpus_path().read_text(encoding="utf-8").lower())
    grams = {text[i:i + 4] for i in range(len(text) - 3)}
    share = 100 * len(grams) / len(set(text)) ** 4
    assert 1 <= share < 10 and answer("tok_coverage") == "1% to 10%"


# --- RNN cell -----------------------------------------------------------------------------------------------

def test_cell_state__is_h():
    assert answer("cell_state") == 4


def test_cell_lookup__is_a_row_by_linear_algebra():
    W = np.arange(12.0).reshape(4, 3)
    assert np.array_equal(np.eye(4)[2] @ W, W[2])
    assert answer("cell_lookup") == "a row of W_xh"


def test_cell_shared__one_matrix():
    assert answer("cell_shared") == 1


@NEEDS_CORPUS
def test_book_output__is_the_vocabulary_of_letters_space_and_unknown():
    import re
    text = re.sub("[^A-Za-z]+", " ", corpus_path().read_text(encoding="utf-8")).lower()
    assert answer("book_output") == len(set(text)) + 1 == 28


def test_book_condition__a_first_letter_reaches_the_last_state_of_a_numpy_rnn():
    rng = np.random.default_rng(1)
    W_xh, W_hh = rng.standard_normal((27, 16)), rng.standard_normal((16, 16)) / 4   # ρ(W_hh) about 1
    finals = []
    for text in ("the time machine", "lhe time machine"):
        h = np.zeros(16)
        for c in text:
            h = np.tanh(np.eye(27)[0 if c == " " else ord(c) - 96] @ W_xh + h @ W_hh)
        finals.append(h)
    assert np.max(np.abs(finals[0] - finals[1])) > 1e-6 and finals[0].shape == (16,)
    assert answer("book_condition") == "its hidden state carries a summary of every earlier token forward"


# --- Sampling: the pretrained model's own probabilities ---------------------------------------------------------

def test_samp_cold__the_softmax_at_t_001_puts_all_but_1e_minus_6_on_the_top_character():
    from core.nn import probe
    from core.runs.saved import load_pretrained
    logits = probe.next_logits(load_pretrained(), "the time traveller")
    z = np.asarray(logits, dtype=np.float64) / 0.01
    p = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    assert p.max() > 1 - 1e-6
    assert answer("samp_cold") == "the likeliest character every time (greedy)"


def test_samp_topk__one_candidate_left():
    assert answer("samp_topk") == "yes"


def test_samp_surprisal__scored_again_by_score_text():
    from core.nn import probe, sampling
    from core.runs.saved import load_pretrained
    lm = load_pretrained()
    out = sampling.sample(lm, "the time traveller", 200, temperature=0.0)
    assert probe.score_text(lm, out.prefix + out.text).bits_per_char < 1.5
    assert answer("samp_surprisal") == "under 1 bit"


# --- Gradient flow ------------------------------------------------------------------------------------------

def test_gf_thirty__is_0_9_to_the_30():
    assert answer("gf_thirty") == pytest.approx(0.9 ** 30, rel=1e-12)


def test_gf_clip__one_factor_for_every_step_keeps_each_share():
    g = np.random.default_rng(0).standard_normal((24, 32)) * 0.8 ** np.arange(24)[:, None]
    clipped = g * min(1.0, 0.5 / np.linalg.norm(g))
    share = lambda a: (a[12:] ** 2).sum() / (a ** 2).sum()   # noqa: E731
    assert share(clipped) == pytest.approx(share(g), rel=1e-12)
    assert answer("gf_clip") == "no"


def test_gf_regime__numpy_matrix_powers_grow():
    from core.nn import gradflow
    W = gradflow.recurrent_matrix(32, 1.5, "gaussian", 0)
    g = np.linalg.matrix_power(W.T, 24) @ (np.ones(32) / np.sqrt(32))
    assert np.max(np.abs(np.linalg.eigvals(W))) > 1.3 and np.linalg.norm(g) > 1e3
    assert answer("gf_regime") == "exploding"


def test_gf_power__is_1_2_to_the_10():
    assert answer("gf_power") == pytest.approx(1.2 ** 10, rel=1e-9)


def test_gf_align__power_iteration_by_hand():
    M = np.diag([1.2, 0.9, 0.5])                 # in its own eigenbasis: the top eigenvector is e_1
    y = np.random.default_rng(1).standard_normal(3)
    for _ in range(30):
        y = M @ y
    assert abs(y[0]) / np.linalg.norm(y) > 0.99
    assert answer("gf_align") == "the eigenvector of the largest |eigenvalue|"


def test_gf_align_and_gf_clip_explain_their_other_setting_by_the_number_that_decides_it():
    """Issue 62: gf_align's other setting (M x once) is decided by the cosine between M x and x, which its
    explanation states; gf_clip's other setting (θ = 5) leaves the gradient alone, and its explanation says so
    instead of 'multiplied every step by the same 1'."""
    import re
    once = BANK["gf_align"].run(BANK["gf_align"].other)
    own = float(re.search(r"and ([0-9.]+) with x itself", once.explanation).group(1))
    assert own == pytest.approx(once.numbers["cosine with x"], abs=1e-6)
    assert once.answer == ("x's own direction" if own > 0.99 else "no particular direction")
    top = float(re.search(r"M\^1 x has cosine ([0-9.]+) with it", once.explanation).group(1))
    assert top < 0.99          # not yet turned to the top eigenvector after one product
    wide = BANK["gf_clip"].run(BANK["gf_clip"].other).explanation
    assert "leaves it alone" in wide and "the same 1" not in wide
    assert "multiplied every step by the same" in BANK["gf_clip"].run().explanation


def test_tok_table_names_the_digits_of_v_as_its_logarithm():
    """Issue 62: answering k + 1 names the mistake with log10 |V| (4 for 10,000), not 'the digits of |V|' (5)."""
    graded = core_ex.grade(BANK["tok_table"], 21)
    assert not graded.correct and "21 times log10 |V| = 4" in graded.message


def test_book_long__0_9_and_1_1_to_the_100():
    assert 0.9 ** 100 < 1e-3 and 1.1 ** 100 > 1e3
    assert answer("book_long") == "the gradient vanishes or explodes over the steps"


def test_book_long__its_other_setting_rho_1_keeps_lengths():
    """Issue 41: the other setting was ρ = 0.99 and 1.01, graded 'nothing changes' beside norms of 0.366 and 2.7.
    It is ρ = 1 now, where the norm is 1 after any number of steps (Q^T keeps lengths): nothing changes."""
    from core.exercises.bank import BANK
    Q, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((32, 32)))
    g = np.random.default_rng(1).standard_normal(32)
    for _ in range(100):
        g = Q.T @ g
    assert abs(np.linalg.norm(g) / np.linalg.norm(np.random.default_rng(1).standard_normal(32)) - 1) < 1e-12
    ex = BANK["book_long"]
    assert ex.run({**ex.settings, **ex.other}).answer == "nothing changes"



def test_book_problem__autograd_through_100_tanh_steps_and_rho_to_the_100():
    """Independent of gradflow's backward: torch autograd through 100 steps of h = tanh(W h + x), other inputs."""
    import torch
    from core.nn import gradflow
    W = torch.as_tensor(gradflow.recurrent_matrix(32, 1.0, "gaussian", 0))
    h0 = torch.zeros(32, dtype=torch.float64, requires_grad=True)
    h, xs = h0, torch.randn(100, 32, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    for x in xs:
        h = torch.tanh(W @ h + x)
    (g,) = torch.autograd.grad(h.sum() / 32 ** 0.5, h0)
    assert float(g.norm()) < 1e-3
    assert answer("book_problem") == "it fades over the steps"
    rho = np.max(np.abs(np.linalg.eigvals(gradflow.recurrent_matrix(32, 4.0, "gaussian", 0))))
    assert rho ** 100 > 1e3
    from core.exercises.bank import BANK
    ex = BANK["book_problem"]
    assert ex.run({**ex.settings, **ex.other}).answer == "it explodes over the steps"


def test_book_gates__the_forget_gates_product():
    """Along an LSTM's memory cell each step back multiplies by the forget gate: sigmoid(20)^100 is 1 to 7 digits,
    sigmoid(0)^100 = 2^-100."""
    sig = lambda z: 1 / (1 + np.exp(-z))   # noqa: E731
    assert abs(sig(20.0) ** 100 - 1) < 1e-6 and 0.5 ** 100 < 1e-3
    assert answer("book_gates") == "it keeps its size"
    from core.exercises.bank import BANK
    ex = BANK["book_gates"]
    assert ex.run({**ex.settings, **ex.other}).answer == "it fades over the steps"

# --- Training and Act 4 (runs of the real loop) --------------------------------------------------------------

@NEEDS_CORPUS
def test_tr_untrained__is_close_to_the_uniform_28_and_is_the_run_s_own_epoch_0():
    """The solver scores the model without training it: the number a one-epoch run records before its first step."""
    from dataclasses import replace
    from core.text.corpus import load_corpus
    from core.runs.config import PRESETS
    from core.runs.loop import train
    got = answer("tr_untrained")
    assert got == pytest.approx(28, rel=0.01)
    cfg = replace(PRESETS["book"].config, num_train=2000, num_val=100, epochs=1, hidden_size=32, seed=0)
    assert train(cfg, text=load_corpus()).history[0].train_ppl == got


@NEEDS_CORPUS
def test_tr_slow__stays_above_2():
    assert answer("tr_slow") == "no"


@NEEDS_CORPUS
def test_ch_held_out__rises():
    assert answer("ch_held_out") == "higher"


@NEEDS_CORPUS
def test_ch_forcing__fed_the_truth_it_gets_more_right():
    sol = BANK["ch_forcing"].run()
    assert sol.answer == "teacher forcing"
    assert sol.numbers["teacher forcing (%)"] > 2 * sol.numbers["free running (%)"]


# --- the answers that ship with the app (issue 29): a first learner's check reads them -----------------------

def _same_solution(a: dict, b: dict, numbers: bool) -> bool:
    """Equal answers; with numbers, the run's numbers equal to 6 digits too."""
    close = lambda x, y: x == y or (isinstance(x, (int, float)) and isinstance(y, (int, float))  # noqa: E731
                                    and math.isclose(x, y, rel_tol=1e-6, abs_tol=1e-9))
    return (close(a["answer"], b["answer"]) and a["numbers"].keys() == b["numbers"].keys()
            and (not numbers or all(close(a["numbers"][k], b["numbers"][k]) for k in a["numbers"])))


@NEEDS_CORPUS
def test_the_shipped_answers_are_what_their_command_rebuilds(tmp_path):
    """The answers always; the runs' numbers too where torch and its thread count are those they were computed
    with (a memorising run's held-out perplexity depends on them)."""
    import json
    from core.exercises import cache as exercise_cache
    shipped = exercise_cache.shipped()
    rebuilt = exercise_cache.bake(BANK, tmp_path / "answers.json")
    same_machine = json.loads(exercise_cache.SHIPPED.read_text())["computed_with"] == exercise_cache.computed_with()
    from core.i18n import LANGS      # each answer in each language: an explanation is the language's
    assert set(rebuilt) == set(shipped) and len(rebuilt) == 2 * len(LANGS) * sum(ex.trains for ex in BANK.values()) >= 8
    different = [k for k in rebuilt if not _same_solution(rebuilt[k], shipped[k], numbers=same_machine)]
    assert not different, f"rebuild assets/exercise_answers.json with: python -m core exercises --bake ({different})"


def test_a_check_with_shipped_settings_reads_the_answer_without_training(tmp_path, monkeypatch):
    from core.exercises import cache as exercise_cache
    ex = BANK["tr_slow"]
    def run(self, settings=None):
        raise RuntimeError("computed")
    monkeypatch.setattr(type(ex), "run", run)
    assert exercise_cache.solve(ex, root=tmp_path).answer == "no"
    assert exercise_cache.solve(ex, ex.other, root=tmp_path).answer == "yes"
    with pytest.raises(RuntimeError, match="computed"):
        exercise_cache.solve(ex, {"lr": 0.5}, root=tmp_path)          # not shipped: computed


def test_a_server_can_turn_the_shipped_answers_off(monkeypatch):
    from core.exercises import cache as exercise_cache
    monkeypatch.setenv("RNNLAB_SHIPPED_ANSWERS", "off")
    exercise_cache.shipped.cache_clear()
    try:
        assert exercise_cache.shipped() == {}
    finally:
        monkeypatch.delenv("RNNLAB_SHIPPED_ANSWERS")
        exercise_cache.shipped.cache_clear()
    assert exercise_cache.shipped()                 # back on: the file's answers
