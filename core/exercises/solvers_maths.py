"""Solvers of the exercises on the labs' maths (forecasting, tokens, gradient flow; the RNN cell's are in
core.exercises.solvers_cell): each runs core
code with the exercise's settings and returns a Solution built from that run's numbers (core.exercises.bank
pairs them with their questions)."""
from __future__ import annotations

import math
import re

import numpy as np

from core.nn import gradflow, gradflow_readings, param_counts
from core.sequences import forecast, readings
from core.text import ngrams, tokens
from core.exercises.types import Solution
from core.i18n import _, listing, sentences

# --- Forecasting -------------------------------------------------------------------------------------------

def _series(s: dict) -> np.ndarray:
    return forecast.make_series(s.get("T", 1000), s.get("sigma", 0.2), s.get("seed", 0))


def _forecast(s: dict, x: np.ndarray | None = None) -> forecast.Analysis:
    return forecast.analyse(_series(s) if x is None else x, s["tau"], s.get("n_train", 600), s["k"])


def horizon_ratio(s: dict) -> Solution:
    a = _forecast(s)
    ratio = a.k_ratio
    answer = "about the same" if ratio < 1.5 else "2 to 5 times larger" if ratio <= 5 else "more than 5 times larger"
    at = dict(tau=s["tau"], one=a.test_mse, k=s["k"], k_mse=a.k_mse, ratio=ratio)
    text = (_("With τ = {tau} the one-step test error is {one:.4f} and the {k}-step error {k_mse:.4f}: {ratio:.2f} "
              "times larger. Each of the {k} steps builds on the last guess, so the errors compound.")
            if ratio >= 1.5 else
            _("With τ = {tau} the one-step test error is {one:.4f} and the {k}-step error {k_mse:.4f}: {ratio:.2f} "
              "times the one-step error: this far ahead the guesses have not yet drifted much."))
    return Solution(answer, text.format(**at),
                    {_("one-step MSE"): a.test_mse, _("{k}-step MSE").format(k=s["k"]): a.k_mse, _("ratio"): ratio})


def longer_window(s: dict) -> Solution:
    x = _series(s)
    short, long = _forecast(s, x), _forecast({**s, "tau": s["tau_long"]}, x)
    better = long.k_mse < short.k_mse
    text = (_("{k}-step test error: {short:.4f} with τ = {tau}, {long:.4f} with τ = {tau_long}. The longer window "
              "averages out more noise before it extrapolates.") if better else
            _("{k}-step test error: {short:.4f} with τ = {tau}, {long:.4f} with τ = {tau_long}. The longer window "
              "does not help here."))
    return Solution("yes" if better else "no",
                    text.format(k=s["k"], short=short.k_mse, tau=s["tau"], long=long.k_mse, tau_long=s["tau_long"]),
                    {f"τ = {s['tau']}": short.k_mse, f"τ = {s['tau_long']}": long.k_mse})


def settles_at(s: dict) -> Solution:
    x = _series(s)
    a = _forecast(s, x)
    w, b, rest = a.model.weights, a.model.bias, a.fixed_point
    where = readings.rest(a, s.get("n_train", 600), len(x))     # the lab's and Act 1's own reading of it
    at_rest = where.kind == "forecast.at_rest"
    at = dict(n_train=s.get("n_train", 600), sum=w.sum(), bias=b, rest=rest, length=len(x), end=a.settles_at,
              moving=where.numbers["moving"])
    text = (_("Fed nothing but its own guesses from t = {n_train}, the forecast comes to rest where x = (sum of "
              "weights)·x + bias: the fitted weights sum to {sum:.4f} and the bias is {bias:.4f}, so x = {bias:.4f} "
              "/ (1 − {sum:.4f}) = {rest:.3f}. At the end of the series (t = {length}) it reads {end:.3f}, at rest "
              "there; the data keeps swinging between about -1 and 1.") if at_rest else
            _("Fed nothing but its own guesses from t = {n_train}, the forecast comes to rest where x = (sum of "
              "weights)·x + bias: the fitted weights sum to {sum:.4f} and the bias is {bias:.4f}, so x = {bias:.4f} "
              "/ (1 − {sum:.4f}) = {rest:.3f}. At the end of the series (t = {length}) it reads {end:.3f}, still "
              "moving by {moving:.4f} over its last 50 steps, on its way there; the data keeps swinging between "
              "about -1 and 1."))
    return Solution(rest, text.format(**at),
                    {_("fixed point"): rest, _("sum of weights"): float(w.sum()), _("bias"): b,
                     _("forecast at t = {length}").format(length=len(x)): a.settles_at},
                    {} if at_rest else {a.settles_at: _("{end:.3f} is where the forecast is at t = {length}, still on "
                                                        "its way; it comes to rest at the fixed point.").format(**at)})


def window_without_noise(s: dict) -> Solution:
    """The book's 9.1 exercise: without noise, the smallest window whose AR fit predicts the sine exactly."""
    x = forecast.make_series(s.get("T", 1000), 0.0, 0)
    errors = {tau: forecast.analyse(x, tau, 600, 1).test_mse for tau in range(1, 5)}
    exact = next((tau for tau, e in errors.items() if e < 1e-12), None)
    answer = float(exact) if exact is not None else math.nan
    worded = listing(f"τ = {tau}: {e:.2g}" for tau, e in errors.items())
    text = (_("Without noise, the one-step test error of the fitted AR(τ) is {errors}. From τ = {exact} it is zero to "
              "rounding: a sine obeys x_t = 2 cos(0.01) x_(t-1) - x_(t-2), so two past values pin down the next one "
              "exactly.") if exact is not None else
            _("Without noise, the one-step test error of the fitted AR(τ) is {errors}. No window up to 4 predicts it "
              "exactly."))
    return Solution(answer, text.format(errors=worded, exact=exact),
                    {_("test MSE, τ = {tau}").format(tau=tau): e for tau, e in errors.items()},
                    {1.0: _("One value cannot tell a rising sine from a falling one at the same height.")})


# --- Text to tokens ----------------------------------------------------------------------------------------

def ngram_table_power(s: dict) -> Solution:
    V, k = s["V"], s["k"]
    power = math.log10(param_counts.ngram_table_size(V, k))
    digits = math.log10(V)
    at = dict(k=k, k1=k + 1, km1=k - 1, V=V, power=power, digits=digits, contexts=k * digits,
              fewer=(k - 1) * digits)
    return Solution(power, _("A table over {k} tokens of context needs a probability for each next token after each "
                             "context: |V|^{k1} = {V:,}^{k1} = 10^{power:.4g} entries.").format(**at),
                    {_("entries (power of ten)"): power},
                    {k * digits: _("{contexts:g} is |V|^{k}, the contexts alone: each context needs a probability for "
                                   "every next token too, |V|^{k1}.").format(**at),
                     (k - 1) * digits: _("{fewer:g} is |V|^{km1}: the context is {k} tokens, and the table also needs "
                                         "the next one, |V|^{k1}.").format(**at),
                     float(k + 1): _("{k1} is how many tokens one entry covers; the table has |V|^{k1} entries, so the "
                                     "power of ten is {k1} times log10 |V| = {digits:g}.").format(**at)})


def _term_name(term: str) -> str:
    """A parameter term's name without its shape, in the language in force ("input weights W_xh")."""
    return re.split(r" \(|（", _(term))[0]


def rnn_parameters(s: dict) -> Solution:
    V, d, h = s["V"], s.get("d", 0), s["h"]
    terms = param_counts.rnn_parameter_terms(V, d, h)
    total = sum(terms.values())
    parts = listing(f"{_term_name(k)} {v:,}" for k, v in terms.items())
    one_hot = sum(param_counts.rnn_parameter_terms(V, 0, h).values())
    at = dict(V=V, d=d, h=h, total=total, one_hot=one_hot, no_bias=total - h - V, no_table=total - V * d, table=V * d,
              parts=parts)
    slips = {float(total - h - V): _("{no_bias:,} leaves out the biases b_h ({h:,}) and b_q ({V:,}).").format(**at)}
    if d:
        slips[float(one_hot)] = _("{one_hot:,} counts one-hot inputs (W_xh of {V:,} × {h}); here each token is first "
                                  "looked up in an embedding table of {V:,} × {d}, then W_xh is {d} × {h}.").format(**at)
        slips[float(total - V * d)] = _("{no_table:,} leaves out the embedding table ({V:,} × {d} = "
                                        "{table:,}).").format(**at)
    return Solution(float(total), _("{parts}: {total:,} in all, whatever the length of the context.").format(**at),
                    {_(k): v for k, v in terms.items()}, slips)


def coverage_share(s: dict) -> Solution:
    from core.text.corpus import clean, load_corpus
    text = clean(load_corpus(), "letters")
    vocab = tokens.CharVocab.build(text)
    cov = ngrams.ngram_coverage(vocab.encode(text), s["n"])[-1]
    pct = 100 * cov.share
    answer = "under 1%" if pct < 1 else "1% to 10%" if pct < 10 else "10% to 50%" if pct < 50 else "over 50%"
    return Solution(answer, _("The book shows {distinct:,} distinct {n}-grams of the {possible:,} that its {types} "
                              "token types could form: {pct:.2f}%.").format(
                        distinct=cov.distinct, n=s["n"], possible=cov.possible, types=cov.symbols, pct=pct),
                    {_("share (%)"): pct})


# --- Gradient flow -----------------------------------------------------------------------------------------

def thirty_steps_back(s: dict) -> Solution:
    W = gradflow.recurrent_matrix(s["n"], s["scale"], "orthogonal", 0)
    norms = gradflow.linear_gradient_norms(W, s["T"])
    return Solution(float(norms[-1]), _("An orthogonal W_hh times {scale:g} has every |eigenvalue| = {rho:.3f}; {T} "
                                        "steps back the linear gradient's norm is {norm:.4f} ({scale:g}^{T} = "
                                        "{power:.4f}).").format(scale=s["scale"], rho=gradflow.spectral_radius(W),
                                                                 T=s["T"], norm=norms[-1], power=s["scale"] ** s["T"]),
                    {_("norm after T steps"): float(norms[-1]), "ρ": gradflow.spectral_radius(W)})


def clipping_restores(s: dict) -> Solution:
    a = gradflow.analyse(s["n"], s["scale"], s["T"], theta=s["theta"])
    before, after = gradflow.distant_share(a.shown), gradflow.distant_share(a.clipped)
    same = math.isclose(before, after, rel_tol=1e-9, abs_tol=1e-300)
    at = dict(before=100 * before, after=100 * after, norm=a.whole_norm, theta=s["theta"], factor=a.clip_factor)
    if a.clip_factor == 1.0:
        text = _("The older half of the steps carries {before:.3g}% of the squared gradient before clipping and "
                 "{after:.3g}% after: the stacked gradient's norm, {norm:.3g}, is not above θ = {theta:g}, so "
                 "clipping leaves it alone and nothing can change; where the norm is above θ, clipping multiplies "
                 "every step by one factor, and the shares stay the same then too.")
    elif same:
        text = _("The older half of the steps carries {before:.3g}% of the squared gradient before clipping and "
                 "{after:.3g}% after: the stacked gradient's norm, {norm:.3g}, is above θ = {theta:g}, so clipping "
                 "multiplied every step by the same {factor:.3g}, and each step's share is unchanged.")
    else:
        text = _("The older half of the steps carries {before:.3g}% of the squared gradient before clipping and "
                 "{after:.3g}% after: the stacked gradient's norm, {norm:.3g}, is above θ = {theta:g}, so clipping "
                 "multiplied every step by the same {factor:.3g}, and each step's share changed.")
    return Solution("no" if same else "yes", text.format(**at),
                    {_("share before (%)"): 100 * before, _("share after (%)"): 100 * after,
                     _("clip factor"): a.clip_factor})


def long_sequences(s: dict) -> Solution:
    """The book's exercise 3: backpropagating through many steps multiplies the gradient by W_hh^T once per step.
    'Nothing changes' only where the norm stays 1 (an orthogonal W_hh at ρ = 1); any other ρ shrinks or grows it
    geometrically: by T steps it has vanished (below 1e-3) or exploded (above 1e3), or is on its way there."""
    norms = {scale: float(gradflow.linear_gradient_norms(gradflow.recurrent_matrix(s["n"], scale, "orthogonal", 0),
                                                         s["T"])[-1]) for scale in (s["low"], s["high"])}
    low, high = norms[s["low"]], norms[s["high"]]
    steady = all(abs(v - 1.0) < 1e-9 for v in (low, high))
    answer = "nothing changes" if steady else "the gradient vanishes or explodes over the steps"
    at = dict(T=s["T"], low_rho=s["low"], high_rho=s["high"], low=low, high=high)
    if steady:
        where = _("{T} steps back through a linear RNN whose W_hh is orthogonal with ρ = {low_rho:g}, the gradient's "
                  "norm is still {low:.6g}: an orthogonal matrix keeps lengths, so here nothing changes. Only such a "
                  "matrix, exactly on the edge, keeps the gradient's size; training does not keep W_hh there.")
    elif low < 1e-3 and high > 1e3:
        where = _("{T} steps back through a linear RNN, the gradient's norm is {low:.3g} with ρ = {low_rho:g} and "
                  "{high:.3g} with ρ = {high_rho:g} (it starts at 1): it is multiplied by the recurrent matrix once "
                  "per step, so it has vanished or exploded.")
    else:
        where = _("{T} steps back through a linear RNN, the gradient's norm is {low:.3g} with ρ = {low_rho:g} and "
                  "{high:.3g} with ρ = {high_rho:g} (it starts at 1): it is multiplied by the recurrent matrix once "
                  "per step, so it shrinks or grows by a fixed factor a step and vanishes or explodes over more steps.")
    return Solution(answer, sentences(where.format(**at), _(
                        "Clipping (this chapter) tames the explosion; gated cells, LSTM and GRU in the next chapter, "
                        "keep a path along which the gradient neither shrinks nor grows; attention, later, reaches "
                        "every earlier token directly.")),
                    {_("norm with ρ = {rho:g}").format(rho=s["low"]): low,
                     _("norm with ρ = {rho:g}").format(rho=s["high"]): high})


def _symmetric(eigenvalues: list[float], seed: int = 0) -> np.ndarray:
    Q = np.linalg.qr(np.random.default_rng(seed).standard_normal((len(eigenvalues), len(eigenvalues))))[0]
    return Q @ np.diag(eigenvalues) @ Q.T


def power_eigenvalue(s: dict) -> Solution:
    """The book's 9.7 exercise 1: M^k has eigenvalues lambda_i^k, here read off numpy's M^k."""
    M = _symmetric(s["eigenvalues"])
    Mk = np.linalg.matrix_power(M, s["k"])
    top = float(np.max(np.abs(np.linalg.eigvalsh(Mk))))
    values = listing(f"{v:.4g}" for v in sorted(np.linalg.eigvalsh(Mk), key=abs, reverse=True))
    powers = listing(f"{v:g}^{s['k']}" for v in s["eigenvalues"])
    return Solution(top, _("numpy's eigenvalues of M^{k} are {values}: each eigenvalue of M to the power {k} "
                           "({powers}), so the largest one grows or shrinks fastest.").format(
                               k=s["k"], values=values, powers=powers),
                    {_("largest |eigenvalue| of M^{k}").format(k=s["k"]): top},
                    {float(max(map(abs, s["eigenvalues"]))) * s["k"]: _("That multiplies the eigenvalue by k; M^k raises "
                                                                        "it to the power k.")})


ALIGNED = 0.99      # two directions whose |cosine| is above this count as the same


def power_alignment(s: dict) -> Solution:
    """The book's 9.7 exercise 2: M^k x turns towards the eigenvector of the largest |eigenvalue|."""
    M = _symmetric(s["eigenvalues"])
    vals, vecs = np.linalg.eigh(M)
    top = vecs[:, np.argmax(np.abs(vals))]
    x = np.random.default_rng(1).standard_normal(len(vals))
    y = np.linalg.matrix_power(M, s["k"]) @ x
    cos_x, cos_y = (abs(float(v @ top)) / float(np.linalg.norm(v)) for v in (x, y))
    cos_own = abs(float(y @ x)) / float(np.linalg.norm(y) * np.linalg.norm(x))
    answer = "the eigenvector of the largest |eigenvalue|" if cos_y > ALIGNED else "x's own direction" \
        if cos_own > ALIGNED else "no particular direction"
    return Solution(answer, _("A random x makes an angle whose cosine is {before:.3f} with the top eigenvector; M^{k} x "
                              "has cosine {after:.6f} with it, and {own:.6f} with x itself (a cosine above {aligned:g} "
                              "counts as the same direction). Each multiplication scales the top component most, so "
                              "the others fade: for an RNN, the gradient sent back many steps ends up along one "
                              "direction, whatever the loss asked for.").format(
                                  before=cos_x, k=s["k"], after=cos_y, own=cos_own, aligned=ALIGNED),
                    {_("cosine before"): cos_x, _("cosine after M^{k}").format(k=s["k"]): cos_y,
                     _("cosine with x"): cos_own})


def linear_regime(s: dict) -> Solution:
    a = gradflow.analyse(s["n"], s["scale"], s["T"], use_tanh=False)
    return Solution(a.regime, _("ρ = {rho:.3f}; after {T} steps the linear gradient's norm is {norm:.3g}, which "
                                "counts as {regime}.").format(rho=a.rho, T=s["T"], norm=a.linear[-1],
                                                               regime=gradflow_readings.regime_word(a.regime)),
                    {"ρ": a.rho, _("norm after T"): float(a.linear[-1])})


FADES, KEEPS, EXPLODES = "it fades over the steps", "it keeps its size", "it explodes over the steps"


def fate(norm: float) -> str:
    """What happened to a gradient that started at norm 1, after many steps: below 1e-3 faded, above 1e3 exploded."""
    return FADES if norm < 1e-3 else EXPLODES if norm > 1e3 else KEEPS


def language_model_problem(s: dict) -> Solution:
    """The book's exercise 5, first half: one problem of this language model, the gradient through many steps of
    the tanh RNN (the Gradient flow lab's own computation, T steps back)."""
    a = gradflow.analyse(s["n"], s["scale"], s["T"], use_tanh=s["use_tanh"], input_scale=s.get("input_scale", 1.0))
    norm = float(a.shown[-1])
    answer = fate(norm)
    at = dict(T=s["T"], scale=s["scale"], rho=a.rho, norm=norm, growth=a.growth)
    head = (_("{T} steps back through tanh at weight scale {scale:g} (ρ = {rho:.2f}), the gradient, which starts at "
              "norm 1, has norm {norm:.3g}, {growth:.3g} per step: {why}") if s["use_tanh"] else
            _("{T} steps back with no tanh at weight scale {scale:g} (ρ = {rho:.2f}), the gradient, which starts at "
              "norm 1, has norm {norm:.3g}, {growth:.3g} per step: {why}"))
    why = {FADES: _("so a token that far back hardly changes what the model learns: the RNN has a state that can carry "
                    "the whole past, but training cannot teach it to use tokens far back (the vanishing gradient)."),
           EXPLODES: _("so one long window can throw the weights far off: the exploding gradient, which clipping "
                       "tames but does not cure."),
           KEEPS: _("so here it neither fades nor explodes.")}[answer]
    return Solution(answer, head.format(why=why, **at),
                    {_("norm after T steps"): norm, _("per step"): a.growth, "ρ": a.rho})

