"""The exercises, two or more per lab, many of them the RNN chapter's end-of-section exercises made checkable.
Every solver runs core code with its settings; none returns a stored answer."""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from core import cell_demo, forecast, gradflow, ngrams, param_counts, tokens
from core.exercises import CHOICE, NUMBER, Exercise, Solution, report


# --- Forecasting -------------------------------------------------------------------------------------------

def _series(s: dict) -> np.ndarray:
    return forecast.make_series(s.get("T", 1000), s.get("sigma", 0.2), s.get("seed", 0))


def _forecast(s: dict, x: np.ndarray | None = None) -> forecast.Analysis:
    return forecast.analyse(_series(s) if x is None else x, s["tau"], s.get("n_train", 600), s["k"])


def horizon_ratio(s: dict) -> Solution:
    a = _forecast(s)
    ratio = a.k_ratio
    answer = "about the same" if ratio < 1.5 else "2 to 5 times larger" if ratio <= 5 else "more than 5 times larger"
    return Solution(answer, f"With τ = {s['tau']} the one-step test error is {a.test_mse:.4f} and the {s['k']}-step "
                            f"error {a.k_mse:.4f}: {ratio:.2f} times " + ("larger. Each of the " + str(s['k']) +
                            " steps builds on the last guess, so the errors compound." if ratio >= 1.5 else
                            "the one-step error: this far ahead the guesses have not yet drifted much."),
                    {"one-step MSE": a.test_mse, f"{s['k']}-step MSE": a.k_mse, "ratio": ratio})


def longer_window(s: dict) -> Solution:
    x = _series(s)
    short, long = _forecast(s, x), _forecast({**s, "tau": s["tau_long"]}, x)
    better = long.k_mse < short.k_mse
    return Solution("yes" if better else "no",
                    f"{s['k']}-step test error: {short.k_mse:.4f} with τ = {s['tau']}, {long.k_mse:.4f} with "
                    f"τ = {s['tau_long']}. " + ("The longer window averages out more noise before it extrapolates."
                                                if better else "The longer window does not help here."),
                    {f"τ = {s['tau']}": short.k_mse, f"τ = {s['tau_long']}": long.k_mse})


def settles_at(s: dict) -> Solution:
    x = _series(s)
    a = _forecast(s, x)
    w, b, rest = a.model.weights, a.model.bias, a.fixed_point
    moving = (f"still moving by {a.still_moving:.4f} over its last 50 steps, on its way there" if a.still_moving > 1e-3
              else "at rest there")
    return Solution(rest, f"Fed nothing but its own guesses from t = {s.get('n_train', 600)}, the forecast comes to rest "
                          f"where x = (sum of weights)·x + bias: the fitted weights sum to {w.sum():.4f} and the bias "
                          f"is {b:.4f}, so x = {b:.4f} / (1 − {w.sum():.4f}) = {rest:.3f}. At the end of the series "
                          f"(t = {len(x)}) it reads {a.settles_at:.3f}, {moving}; the data keeps swinging between "
                          "about -1 and 1.",
                    {"fixed point": rest, "sum of weights": float(w.sum()), "bias": b,
                     f"forecast at t = {len(x)}": a.settles_at},
                    {a.settles_at: f"{a.settles_at:.3f} is where the forecast is at t = {len(x)}, still on its way; "
                                   "it comes to rest at the fixed point."} if a.still_moving > 1e-3 else {})


def window_without_noise(s: dict) -> Solution:
    """The book's 9.1 exercise: without noise, the smallest window whose AR fit predicts the sine exactly."""
    x = forecast.make_series(s.get("T", 1000), 0.0, 0)
    errors = {tau: forecast.analyse(x, tau, 600, 1).test_mse for tau in range(1, 5)}
    exact = next((tau for tau, e in errors.items() if e < 1e-12), None)
    answer = float(exact) if exact is not None else math.nan
    worded = ", ".join(f"τ = {tau}: {e:.2g}" for tau, e in errors.items())
    return Solution(answer, f"Without noise, the one-step test error of the fitted AR(τ) is {worded}. " +
                    (f"From τ = {exact} it is zero to rounding: a sine obeys x_t = 2 cos(0.01) x_(t-1) - x_(t-2), so "
                     "two past values pin down the next one exactly." if exact is not None else
                     "No window up to 4 predicts it exactly."),
                    {f"test MSE, τ = {tau}": e for tau, e in errors.items()},
                    {1.0: "One value cannot tell a rising sine from a falling one at the same height."})


# --- Text to tokens ----------------------------------------------------------------------------------------

def ngram_table_power(s: dict) -> Solution:
    V, k = s["V"], s["k"]
    power = math.log10(param_counts.ngram_table_size(V, k))
    digits = math.log10(V)
    return Solution(power, f"A table over {k} tokens of context needs a probability for each next token after "
                           f"each context: |V|^{k + 1} = {V:,}^{k + 1} = 10^{power:.4g} entries.",
                    {"entries (power of ten)": power},
                    {k * digits: f"{k * digits:g} is |V|^{k}, the contexts alone: each context needs a probability "
                                 f"for every next token too, |V|^{k + 1}.",
                     (k - 1) * digits: f"{(k - 1) * digits:g} is |V|^{k - 1}: the context is {k} tokens, and the table "
                                       f"also needs the next one, |V|^{k + 1}.",
                     float(k + 1): f"{k + 1} is how many tokens one entry covers; the table has |V|^{k + 1} "
                                   "entries, a power of ten this many times the digits of |V|."})


def rnn_parameters(s: dict) -> Solution:
    V, d, h = s["V"], s.get("d", 0), s["h"]
    terms = param_counts.rnn_parameter_terms(V, d, h)
    total = sum(terms.values())
    parts = ", ".join(f"{k.split(' (')[0]} {v:,}" for k, v in terms.items())
    one_hot = sum(param_counts.rnn_parameter_terms(V, 0, h).values())
    slips = {float(total - h - V): f"{total - h - V:,} leaves out the biases b_h ({h:,}) and b_q ({V:,})."}
    if d:
        slips[float(one_hot)] = (f"{one_hot:,} counts one-hot inputs (W_xh of {V:,} × {h}); here each token is first "
                                 f"looked up in an embedding table of {V:,} × {d}, then W_xh is {d} × {h}.")
        slips[float(total - V * d)] = f"{total - V * d:,} leaves out the embedding table ({V:,} × {d} = {V * d:,})."
    return Solution(float(total), f"{parts}: {total:,} in all, whatever the length of the context.", terms, slips)


def coverage_share(s: dict) -> Solution:
    from core.corpus import clean, load_corpus
    text = clean(load_corpus(), "letters")
    vocab = tokens.CharVocab.build(text)
    cov = ngrams.ngram_coverage(vocab.encode(text), s["n"])[-1]
    pct = 100 * cov.share
    answer = "under 1%" if pct < 1 else "1% to 10%" if pct < 10 else "10% to 50%" if pct < 50 else "over 50%"
    return Solution(answer, f"The book shows {cov.distinct:,} distinct {s['n']}-grams of the {cov.possible:,} that its "
                            f"{cov.symbols} token types could form: {pct:.2f}%.", {"share (%)": pct})


# --- RNN cell ----------------------------------------------------------------------------------------------

def state_size(s: dict) -> Solution:
    short, long = cell_demo.read_word(s["short"], s["h"]), cell_demo.read_word(s["long"], s["h"])
    n_short, n_long = short.cache.H[-1].shape[-1], long.cache.H[-1].shape[-1]
    same = n_short == n_long
    return Solution(float(n_long), f"Reading '{s['short']}' ({short.steps} steps) the state holds {n_short} numbers; "
                                   f"reading '{s['long']}' ({long.steps} steps) it holds {n_long}. " +
                    ("The state is overwritten at every step, never appended to." if same else
                     "The state grew with the text."),
                    {"state after the short word": n_short, "state after the long word": n_long},
                    {float(long.steps): f"{long.steps} is the number of steps it read; the state is overwritten at "
                                        "each step, not lengthened.",
                     float(n_long * long.steps): f"{n_long * long.steps} is {n_long} numbers for every step: the "
                                                 "state is not appended to."})


def lookup_is_a_row(s: dict) -> Solution:
    run = cell_demo.read_word(s["word"], s["h"])
    look = cell_demo.one_hot_lookup(run, s["t"])
    row_sum = run.params["W_xh"].sum(axis=0)
    answer = "a row of W_xh" if look.difference == 0 else "the sum of W_xh's rows" \
        if np.allclose(look.product, row_sum) else "something else"
    return Solution(answer, f"At step {s['t']} the product X_t·W_xh and row {look.token_id} of W_xh differ by at most "
                            f"{look.difference:.1e}" + (": the single 1 in the one-hot row picks that row." if
                                                        answer == "a row of W_xh" else "."),
                    {"largest difference from the row": look.difference,
                     "largest difference from the sum of rows": float(np.max(np.abs(look.product - row_sum)))})


def shared_matrices(s: dict) -> Solution:
    """Recompute every step from the previous state with the one W_hh the network holds: if each matches the
    forward pass, one matrix served every step."""
    run = cell_demo.read_word(s["word"], s["h"])
    p, worst = run.params, 0.0
    for t in range(1, run.steps + 1):
        step = run.step(t)
        again = np.tanh(step.X @ p["W_xh"] + step.H_prev @ p["W_hh"] + p["b_h"])
        worst = max(worst, float(np.max(np.abs(again - step.H))))
    distinct = 1.0 if worst < 1e-12 else float(run.steps)
    return Solution(distinct, f"Recomputing each of the {run.steps} steps of '{s['word']}' from the previous state "
                              f"with the network's one W_hh reproduces the forward pass to {worst:.1e}" +
                    (": the same matrix is reused at every step, which is also why its gradient is a sum over "
                     "steps." if distinct == 1 else ": the steps did not all use that matrix."),
                    {"steps": run.steps, "largest mismatch": worst},
                    {float(run.steps): f"{run.steps} is one per step, but every arrow carries the same W_hh.",
                     float(run.steps + 1): f"{run.steps + 1} counts the letters; the arrows all carry one W_hh."})


def output_size(s: dict) -> Solution:
    """The book's exercise 1: the output layer scores every token of the vocabulary, counted from the corpus."""
    from core.corpus import clean, load_corpus
    vocab = tokens.CharVocab.build(clean(load_corpus(), "letters"))
    V = len(vocab)
    letters = sum(t.isalpha() for t in vocab.idx_to_token)
    return Solution(float(V), f"The cleaned book has {V} tokens: {letters} letters, the space and one id for anything "
                              f"unknown. At each step the output layer gives each of them a score (O_t has {V} "
                              "numbers per example), and softmax turns the scores into the next character's "
                              "probabilities.", {"tokens": V},
                    {float(V - 1): f"{V - 1} leaves out the id for unknown characters, which is a token too.",
                     float(letters): f"{letters} counts the letters only: the space and the unknown id are tokens too.",
                     1.0: f"1 would be a single guess; the model gives every one of the {V} tokens a probability."})


def reaches_back(s: dict) -> Solution:
    """The book's exercise 2: change only the first character and see the last state move, with a state that
    stays h numbers long."""
    from core import rnn_ref
    vocab = tokens.CharVocab([tokens.UNK] + sorted(set("abcdefghijklmnopqrstuvwxyz ")))
    params = rnn_ref.init_params(len(vocab), s["h"], None, seed=0, scale=1.0)
    text, other = s["text"], s["swap"] + s["text"][1:]
    finals = [rnn_ref.forward(params, vocab.encode(t)[None, :]).H[-1][0] for t in (text, other)]
    moved = float(np.max(np.abs(finals[0] - finals[1])))
    answer = "its hidden state carries a summary of every earlier token forward" if moved > 1e-9 else \
        "it keeps every earlier token in memory"
    return Solution(answer, f"Reading {text!r} and {other!r}, which differ only in their first character, the state "
                            f"after the last of the {len(text)} steps differs by up to {moved:.3g}, and it is "
                            f"{finals[0].shape[0]} numbers either way: the first character still reaches the last "
                            "prediction, through a state of fixed size that each step rewrites.",
                    {"largest change in the last state": moved, "state size": int(finals[0].shape[0])})


# --- Sampling ----------------------------------------------------------------------------------------------

def _pretrained():
    from core.assets import load_pretrained
    return load_pretrained()


def cold_temperature(s: dict) -> Solution:
    from core.sampling import sample
    lm = _pretrained()
    greedy = sample(lm, s["prefix"], s["length"], temperature=0.0).text
    cold = [sample(lm, s["prefix"], s["length"], temperature=s["temperature"], seed=seed).text for seed in range(3)]
    same = all(c == greedy for c in cold)
    answer = "the likeliest character every time (greedy)" if same else "random characters"
    return Solution(answer, f"At T = {s['temperature']:g}, three samples with different seeds all read "
                            f"{cold[0][:40]!r}…, the same as greedy decoding: dividing the scores by a tiny T makes "
                            "the largest one win with probability almost 1." if same else
                            f"At T = {s['temperature']:g} the samples differ from greedy decoding.",
                    {"samples equal to greedy": sum(c == greedy for c in cold)})


def top_k_one(s: dict) -> Solution:
    from core.sampling import sample
    lm = _pretrained()
    greedy = sample(lm, s["prefix"], s["length"], temperature=0.0).text
    k1 = sample(lm, s["prefix"], s["length"], temperature=s["temperature"], top_k=1, seed=s["seed"]).text
    answer = "yes" if k1 == greedy else "no"
    return Solution(answer, f"At T = {s['temperature']:g} with top-k = 1: {k1[:40]!r}…; greedy: {greedy[:40]!r}…. " +
                    ("The same text: with one character left to draw from, the temperature has nothing to "
                     "spread over." if k1 == greedy else "The texts differ."), {"identical": k1 == greedy})


def greedy_surprisal(s: dict) -> Solution:
    from core.sampling import sample
    lm = _pretrained()
    out = sample(lm, s["prefix"], s["length"], temperature=s["temperature"], seed=s.get("seed", 0))
    bits = float(out.surprisal_bits.mean())
    answer = "under 1 bit" if bits < 1 else "1 to 3 bits" if bits <= 3 else "over 3 bits"
    return Solution(answer, f"The model's own mean surprisal of its {s['length']} characters at T = "
                            f"{s['temperature']:g} is {bits:.3f} bits per character (a uniform guess over "
                            f"{len(lm.vocab)} characters would cost {math.log2(len(lm.vocab)):.2f}).",
                    {"bits per character": bits})


# --- Gradient flow -----------------------------------------------------------------------------------------

def thirty_steps_back(s: dict) -> Solution:
    W = gradflow.recurrent_matrix(s["n"], s["scale"], "orthogonal", 0)
    norms = gradflow.linear_gradient_norms(W, s["T"])
    return Solution(float(norms[-1]), f"An orthogonal W_hh times {s['scale']:g} has every |eigenvalue| = "
                                      f"{gradflow.spectral_radius(W):.3f}; {s['T']} steps back the linear gradient's "
                                      f"norm is {norms[-1]:.4f} ({s['scale']:g}^{s['T']} = {s['scale'] ** s['T']:.4f}).",
                    {"norm after T steps": float(norms[-1]), "ρ": gradflow.spectral_radius(W)})


def clipping_restores(s: dict) -> Solution:
    a = gradflow.analyse(s["n"], s["scale"], s["T"], theta=s["theta"])
    before, after = gradflow.distant_share(a.shown), gradflow.distant_share(a.clipped)
    same = math.isclose(before, after, rel_tol=1e-9, abs_tol=1e-300)
    return Solution("no" if same else "yes",
                    f"The older half of the steps carries {100 * before:.3g}% of the squared gradient before "
                    f"clipping and {100 * after:.3g}% after: clipping multiplied every step by the same "
                    f"{a.clip_factor:.3g}, so each step's share " + ("is unchanged." if same else "changed."),
                    {"share before (%)": 100 * before, "share after (%)": 100 * after})


def long_sequences(s: dict) -> Solution:
    """The book's exercise 5: backpropagating through many steps multiplies the gradient by W_hh^T once per step."""
    norms = {scale: float(gradflow.linear_gradient_norms(gradflow.recurrent_matrix(s["n"], scale, "orthogonal", 0),
                                                         s["T"])[-1]) for scale in (s["low"], s["high"])}
    low, high = norms[s["low"]], norms[s["high"]]
    answer = "the gradient vanishes or explodes over the steps" if low < 1e-3 and high > 1e3 else "nothing changes"
    return Solution(answer, f"{s['T']} steps back through a linear RNN, the gradient's norm is {low:.3g} with ρ = "
                            f"{s['low']:g} and {high:.3g} with ρ = {s['high']:g} (it starts at 1): it is multiplied "
                            "by the recurrent matrix once per step. Clipping (this chapter) tames the explosion; "
                            "gated cells, LSTM and GRU in the next chapter, keep a path along which the gradient "
                            "neither shrinks nor grows; attention, later, reaches every earlier token directly.",
                    {f"norm with ρ = {s['low']:g}": low, f"norm with ρ = {s['high']:g}": high})


def _symmetric(eigenvalues: list[float], seed: int = 0) -> np.ndarray:
    Q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((len(eigenvalues), len(eigenvalues))))
    return Q @ np.diag(eigenvalues) @ Q.T


def power_eigenvalue(s: dict) -> Solution:
    """The book's 9.7 exercise 1: M^k has eigenvalues lambda_i^k, here read off numpy's M^k."""
    M = _symmetric(s["eigenvalues"])
    Mk = np.linalg.matrix_power(M, s["k"])
    top = float(np.max(np.abs(np.linalg.eigvalsh(Mk))))
    return Solution(top, f"numpy's eigenvalues of M^{s['k']} are " + ", ".join(
        f"{v:.4g}" for v in sorted(np.linalg.eigvalsh(Mk), key=abs, reverse=True)) +
        f": each eigenvalue of M to the power {s['k']} (" + ", ".join(f"{v:g}^{s['k']}" for v in s["eigenvalues"]) +
        "), so the largest one grows or shrinks fastest.", {f"largest |eigenvalue| of M^{s['k']}": top},
        {float(max(map(abs, s["eigenvalues"]))) * s["k"]: "That multiplies the eigenvalue by k; M^k raises it to "
                                                           "the power k."})


def power_alignment(s: dict) -> Solution:
    """The book's 9.7 exercise 2: M^k x turns towards the eigenvector of the largest |eigenvalue|."""
    M = _symmetric(s["eigenvalues"])
    vals, vecs = np.linalg.eigh(M)
    top = vecs[:, np.argmax(np.abs(vals))]
    x = np.random.default_rng(1).standard_normal(len(vals))
    y = np.linalg.matrix_power(M, s["k"]) @ x
    cos_x, cos_y = (abs(float(v @ top)) / float(np.linalg.norm(v)) for v in (x, y))
    answer = "the eigenvector of the largest |eigenvalue|" if cos_y > 0.99 else "x's own direction" \
        if abs(float(y @ x)) / (np.linalg.norm(y) * np.linalg.norm(x)) > 0.99 else "no particular direction"
    return Solution(answer, f"A random x makes an angle whose cosine is {cos_x:.3f} with the top eigenvector; "
                            f"M^{s['k']} x has cosine {cos_y:.6f} with it. Each multiplication scales the "
                            "top component most, so the others fade: for an RNN, the gradient sent back many "
                            "steps ends up along one direction, whatever the loss asked for.",
                    {"cosine before": cos_x, f"cosine after M^{s['k']}": cos_y})


def linear_regime(s: dict) -> Solution:
    a = gradflow.analyse(s["n"], s["scale"], s["T"], use_tanh=False)
    return Solution(a.regime, f"ρ = {a.rho:.3f}; after {s['T']} steps the linear gradient's norm is "
                              f"{a.linear[-1]:.3g}, which counts as {a.regime}.",
                    {"ρ": a.rho, "norm after T": float(a.linear[-1])})


# --- Training and the chapter's passage run ------------------------------------------------------------------

def untrained_perplexity(s: dict) -> Solution:
    from core.runs.config import PRESETS
    from core.corpus import load_corpus
    from core.runs.loop import train
    cfg = replace(PRESETS["book"].config, num_train=s["windows"], num_val=100, epochs=1, hidden_size=s["h"],
                  seed=s.get("seed", 0))
    r = train(cfg, text=load_corpus(), on_progress=report, report_every=0.25)
    start, V = r.history[0].train_ppl, len(r.lm.vocab)
    gap = abs(start - V) / V
    return Solution(start, f"Before the first step the perplexity on the training windows is {start:.3f}, against "
                           f"{V} for a perfectly uniform guess over the {V} tokens, {100 * gap:.2g}% apart: " +
                    ("the random weights give every character almost the same probability." if gap < 0.05 else
                     "the random weights already favour some characters."),
                    {"perplexity at epoch 0": start, "tokens": V},
                    {math.log(V): f"{math.log(V):.3f} is ln {V}, the cross-entropy in nats; perplexity is e to that."})


def _passage(s: dict, **overrides):
    from core import passage
    from core.corpus import load_corpus
    from core.runs.loop import train
    return train(replace(passage.config(s.get("seed", 0)), **overrides), text=load_corpus(), on_progress=report,
                 report_every=0.25)


def slow_learning_rate(s: dict) -> Solution:
    r = _passage(s, lr=s["lr"])
    best = min(row.train_ppl for row in r.history)
    return Solution("yes" if best < 2 else "no",
                    f"With learning rate {s['lr']:g}, the passage run's training perplexity goes from "
                    f"{r.history[0].train_ppl:.1f} to {r.history[-1].train_ppl:.2f} in 60 epochs (lowest "
                    f"{best:.2f}).", {"lowest perplexity": best})


def _stored_passage(s: dict):
    """The chapter's stored passage run (what Act 4 shows) when the settings are its own: no retraining of a run
    the page already has. None otherwise, or when it cannot be read."""
    from core import passage_store
    if s.get("seed", 0) != 0:
        return None
    try:
        baked = passage_store.load_baked()
    except ValueError:
        return None
    return baked if baked.meta.get("config", {}).get("seed", 0) == 0 else None


def passage_held_out(s: dict) -> Solution:
    baked = _stored_passage(s)
    history = baked.history if baked is not None else _passage(s).history
    first, last = history[0].val_ppl, history[-1].val_ppl
    where = " (the stored run Act 4 shows)" if baked is not None else ""
    answer = "higher" if last > 1.1 * first else "lower" if last < first / 1.1 else "about the same"
    return Solution(answer, f"On the text after the passage, perplexity goes from {first:.1f} before training to "
                            f"{last:.1f} after {history[-1].epoch} epochs{where}, while on the passage itself it falls "
                            f"to {history[-1].train_ppl:.2f}: " + ("it memorised, it did not learn English." if
                                                                   answer == "higher" else "it learnt something general."),
                    {"held-out before": first, "held-out after": last})


def forcing_or_free(s: dict) -> Solution:
    from core import passage
    from core.corpus import load_corpus
    baked = _stored_passage(s)
    lm = baked.models[s["epochs"]] if baked is not None and s["epochs"] in baked.models else \
        _passage(s, epochs=s["epochs"]).lm
    tf = passage.teacher_forcing(lm, passage.passage(load_corpus()))
    answer = "teacher forcing" if tf.forced_accuracy > tf.free_accuracy else "free running" \
        if tf.free_accuracy > tf.forced_accuracy else "the same"
    return Solution(answer, f"After {s['epochs']} epochs: {100 * tf.forced_accuracy:.0f}% of the passage's next "
                            f"characters right when fed the true previous ones, {100 * tf.free_accuracy:.0f}% when "
                            "fed its own guesses. " + ("One wrong guess changes everything it reads next." if
                                                       tf.free_accuracy < tf.forced_accuracy else
                                                       "It has learnt the passage well enough that its own guesses "
                                                       "are the true text."),
                    {"teacher forcing (%)": 100 * tf.forced_accuracy, "free running (%)": 100 * tf.free_accuracy})


# --- The bank ----------------------------------------------------------------------------------------------

YES_NO = ("yes", "no")
PREFIX = "the time traveller"
BANK: dict[str, Exercise] = {e.key: e for e in (
    Exercise("fc_horizon", "forecasting", "With a window of τ = 4, how does the 64-step test error compare with the "
             "one-step error?", CHOICE, horizon_ratio, {"tau": 4, "k": 64},
             "Each step ahead feeds the model its own previous guess.",
             options=("about the same", "2 to 5 times larger", "more than 5 times larger"),
             other={"k": 4}, other_label="4 steps ahead instead", url={"tau": 4, "k": 64}),
    Exercise("fc_window", "forecasting", "Does a longer window (τ = 32 instead of 4) lower the 16-step test error?",
             CHOICE, longer_window, {"tau": 4, "tau_long": 32, "k": 16},
             "A longer window sees more of the wave, and averages more noise.", options=YES_NO,
             other={"tau_long": 8}, other_label="τ = 8 instead of 32", url={"tau": 4, "k": 16}),
    Exercise("fc_settles", "forecasting", "Fed only its own guesses from the end of the training range (t = 600, "
             "τ = 4), at what value does the forecast come to rest?", NUMBER, settles_at, {"tau": 4, "k": 16},
             "At rest, the next guess equals the values before it: x = w·(x, …, x) + b. The lab shows the fitted "
             "weights and bias.", tolerance=0.0, absolute=0.01,
             other={"tau": 16}, other_label="τ = 16", url={"tau": 4}),
    Exercise("fc_no_noise", "forecasting", "The book's exercise: with no noise at all, how many past values must the "
             "autoregressive model see (the smallest τ) to predict the sine exactly?", NUMBER, window_without_noise,
             {}, "A sine is the solution of a second-order recurrence.", tolerance=0.0, absolute=0.0,
             book="9.1 Working with Sequences, #2"),
    Exercise("tok_table", "tokens", "The book's exercise: a table that predicts the next word from the k = 20 words "
             "before it, over a vocabulary of |V| = 10,000 words, has about 10 to the power of what entries?",
             NUMBER, ngram_table_power, {"V": 10_000, "k": 20},
             "One probability for every possible next token after every possible context.", tolerance=0.0,
             absolute=0.3, other={"k": 2}, other_label="two words of context", url={"V": 10_000, "k": 20}, book="RNN section, #4"),
    Exercise("tok_rnn", "tokens", "The book's exercise, continued: an RNN language model over the same |V| = 10,000 "
             "words, each word embedded in d = 256 numbers, with h = 256 hidden units: how many parameters (E, "
             "W_xh, W_hh, b_h, W_hq, b_q)?", NUMBER, rnn_parameters, {"V": 10_000, "d": 256, "h": 256},
             "Add |V|·d, d·h, h·h, h, h·|V| and |V|.", tolerance=0.001,
             other={"h": 512}, other_label="h = 512", url={"V": 10_000, "h": 256, "d": 256}, book="RNN section, #4"),
    Exercise("tok_coverage", "tokens", "What share of the possible 4-grams of letters and spaces does The Time "
             "Machine contain?", CHOICE, coverage_share, {"n": 4}, "There are 27⁴ = 531,441 possible 4-grams and "
             "the book has about 170,000 characters.", options=("under 1%", "1% to 10%", "10% to 50%", "over 50%"),
             other={"n": 2}, other_label="2-grams", needs_corpus=True),
    Exercise("cell_state", "rnn_cell", "A network with h = 4 hidden units reads 'unfathomable' instead of 'time', one "
             "letter per step. How many numbers does its hidden state hold after its last step?", NUMBER, state_size,
             {"short": "time", "long": "unfathomable", "h": 4}, "Does the state grow, or is it overwritten?",
             tolerance=0.0, absolute=0.0, other={"h": 8}, other_label="h = 8", url={"word": "unfathomable", "h": 4}),
    Exercise("cell_lookup", "rnn_cell", "A one-hot input row times W_xh gives ...", CHOICE, lookup_is_a_row,
             {"word": "machine", "h": 4, "t": 3}, "The row has a single 1; everything else is 0.",
             options=("a row of W_xh", "a column of W_xh", "the sum of W_xh's rows"), url={"word": "machine", "h": 4}),
    Exercise("cell_shared", "rnn_cell", "Unrolled over the 6 steps of reading 'machine', how many different W_hh "
             "matrices does the network use?", NUMBER, shared_matrices, {"word": "machine", "h": 4},
             "Look at the unrolled picture: what is on every arrow between states?", tolerance=0.0, absolute=0.0,
             other={"word": "unfathomable"}, other_label="a 12-letter word", url={"word": "machine", "h": 4}),
    Exercise("book_output", "rnn_cell", "The book's exercise: an RNN predicts the next character of The Time Machine, "
             "cleaned to lower-case letters and spaces. How many numbers must its output layer give at each step?",
             NUMBER, output_size, {}, "One score for every token the model could predict next.", tolerance=0.0,
             absolute=0.0, needs_corpus=True, book="RNN section, #1"),
    Exercise("book_condition", "rnn_cell", "The book's exercise: why can an RNN's prediction at step t depend on every "
             "earlier token, however many there are?", CHOICE, reaches_back,
             {"text": "the time machine", "swap": "l", "h": 16},
             "What does each step read besides the new token, and how big is it?",
             options=("its hidden state carries a summary of every earlier token forward",
                      "it keeps every earlier token in memory", "its input window grows with the text"), book="RNN section, #2"),
    Exercise("samp_cold", "sampling", "What does sampling at a temperature near zero (T = 0.01) produce?", CHOICE,
             cold_temperature, {"prefix": PREFIX, "length": 60, "temperature": 0.01},
             "Dividing the scores by a tiny T makes the differences between them huge.",
             options=("the likeliest character every time (greedy)", "random characters"),
             other={"temperature": 1.0}, other_label="T = 1", url={"prefix": PREFIX, "temperature": 0.0}),
    Exercise("samp_topk", "sampling", "At a hot temperature (T = 1.5), does top-k = 1 give the same text as greedy "
             "decoding?", CHOICE, top_k_one, {"prefix": PREFIX, "length": 60, "temperature": 1.5, "seed": 0},
             "How many characters are left to choose from?", options=YES_NO,
             other={"temperature": 0.5}, other_label="T = 0.5", url={"prefix": PREFIX, "temperature": 1.5, "top_k": 1}),
    Exercise("samp_surprisal", "sampling", "How surprised is the pretrained model, on average, by its own greedy "
             "text (bits per character)?", CHOICE, greedy_surprisal, {"prefix": PREFIX, "length": 200,
                                                                        "temperature": 0.0},
             "Greedy text always takes the character the model finds likeliest.",
             options=("under 1 bit", "1 to 3 bits", "over 3 bits"), other={"temperature": 1.5}, other_label="T = 1.5",
             url={"prefix": PREFIX, "temperature": 0.0}),
    Exercise("gf_thirty", "gradient_flow", "A linear RNN whose W_hh is orthogonal times 0.9: what is the gradient's "
             "norm 30 steps back (it starts at 1)?", NUMBER, thirty_steps_back, {"n": 32, "scale": 0.9, "T": 30},
             "An orthogonal matrix keeps lengths; the 0.9 does not.", tolerance=0.05,
             other={"scale": 1.1}, other_label="times 1.1",
             url={"kind": "orthogonal", "scale": 0.9, "T": 30, "use_tanh": False}),
    Exercise("gf_clip", "gradient_flow", "Can gradient clipping bring back the share of the gradient that distant "
             "steps carry?", CHOICE, clipping_restores, {"n": 32, "scale": 0.8, "T": 24, "theta": 0.5},
             "Clipping rescales the whole gradient by one factor.", options=YES_NO,
             other={"theta": 5.0}, other_label="θ = 5", url={"scale": 0.8, "theta": 0.5}),
    Exercise("gf_regime", "gradient_flow", "Weight scale 1.5, no tanh, 24 steps: is the gradient vanishing, stable "
             "or exploding?", CHOICE, linear_regime, {"n": 32, "scale": 1.5, "T": 24},
             "The spectral radius is about the scale.", options=("vanishing", "stable", "exploding"),
             other={"scale": 0.5}, other_label="scale 0.5", url={"scale": 1.5, "use_tanh": False}),
    Exercise("book_long", "gradient_flow", "The book's exercise: what goes wrong when an RNN is trained by "
             "backpropagating through long sequences?", CHOICE, long_sequences,
             {"n": 32, "T": 100, "low": 0.9, "high": 1.1}, "Each step back multiplies the gradient by the same matrix.",
             options=("the gradient vanishes or explodes over the steps", "the model needs more parameters for each "
                      "extra step", "nothing changes"),
             other={"low": 0.99, "high": 1.01}, other_label="ρ = 0.99 and 1.01", url={"kind": "orthogonal", "T": 100,
                                                                                       "use_tanh": False}, book="RNN section, #5"),
    Exercise("gf_power", "gradient_flow", "The book's exercise: a symmetric M has eigenvalues 1.2, 0.9 and 0.5. What "
             "is the largest |eigenvalue| of M^10?", NUMBER, power_eigenvalue,
             {"eigenvalues": [1.2, 0.9, 0.5], "k": 10}, "Apply M to one of its eigenvectors ten times.",
             tolerance=0.01, other={"k": 30}, other_label="M^30", book="9.7 Backpropagation Through Time, #1"),
    Exercise("gf_align", "gradient_flow", "The book's exercise, continued: multiply a random vector x by that M thirty "
             "times. Which direction does M^30 x point in?", CHOICE, power_alignment,
             {"eigenvalues": [1.2, 0.9, 0.5], "k": 30}, "Which component of x grows fastest?",
             options=("the eigenvector of the largest |eigenvalue|", "x's own direction", "no particular direction"),
             other={"k": 1}, other_label="M x, once", book="9.7 Backpropagation Through Time, #2"),
    Exercise("tr_untrained", "training", "Before its first step, what perplexity does the book's character RNN "
             "(28 tokens, tiny random weights) have on its training windows?", NUMBER, untrained_perplexity,
             {"windows": 2000, "h": 32}, "Tiny weights: every score is about the same.", tolerance=0.05,
             other={"h": 256}, other_label="256 hidden units", needs_corpus=True, url={"preset": "book"}),
    Exercise("tr_slow", "training", "The passage run with learning rate 0.1 instead of 2: does its training "
             "perplexity get below 2 within its 60 epochs?", CHOICE, slow_learning_rate, {"lr": 0.1},
             "The default run needs about 20 epochs at learning rate 2.", options=YES_NO,
             other={"lr": 2.0}, other_label="learning rate 2", needs_corpus=True, url={"preset": "passage", "lr": 0.1}),
    Exercise("ch_held_out", "chapter", "After the passage run, is the perplexity on the text that follows the "
             "passage lower or higher than before training?", CHOICE, passage_held_out, {"seed": 0},
             "It only ever sees 432 characters.", options=("lower", "about the same", "higher"),
             other={"seed": 1}, other_label="seed 1", needs_corpus=True, url={"act": 4}),
    Exercise("ch_forcing", "chapter", "Half-trained (20 epochs) on the passage, which gets more next characters "
             "right: teacher forcing or free running?", CHOICE, forcing_or_free, {"epochs": 20, "seed": 0},
             "In one the model reads the true text; in the other, its own guesses.",
             options=("teacher forcing", "free running", "the same"), other={"epochs": 60},
             other_label="fully trained (60 epochs)", needs_corpus=True, url={"act": 4}),
)}


def for_lab(lab: str) -> list[Exercise]:
    return [e for e in BANK.values() if e.lab == lab]
