"""What the Forecasting lab and the chapter's Act 1 say about a fit, as claims built from its numbers (core.claims).

One rule per idea, shared by the lab, the act and the exercises:
- where the forecast fed its own guesses goes (rest): at rest at the fixed point, on its way there, still
  rising and falling, or growing; decided by the fitted recurrence's own multiplier (the spectral radius of its
  companion matrix) and by how far the forecast's end is from the fixed point (REST_TOL);
- how the error grows with the horizon (horizon_trend);
- the one-step error against the noise (one_step);
- the test error against the training error (train_test);
- the k-step error against the one-step error (k_vs_one).
"""
from __future__ import annotations

import math

import numpy as np

from core.claims import Claim, claim, ratio
from core.i18n import _, sentences
from core.sequences.forecast import Analysis

REST_TOL = 0.005      # "at rest": the forecast's end is within this of the fixed point (half the 0.01 that
                      # fc_settles grades with), and it moved less than this over its last 50 steps
EXACT = 1e-12         # an error below this is no error: rounding (a noise-free sine)
NEAR_NOISE = 1.2      # "about as good as the noise allows": at most this many times σ²
NEAR_CONSTANT = 0.5   # "climbs towards the error of guessing a constant": at least this share of it by the last k
ABOVE_CONSTANT = 1.1  # past the error of guessing a constant: more than this many times it ("as high as" up to here)
EXPLAINS = 3.0        # the noise's draws explain a gap between two errors when the gap is at most this many times
                      # the difference between the draws' mean squares, and goes the same way
SMALL_GAP = 0.1       # a gap between two errors at most this share of the noise's mean square is small against it


def radius(a: Analysis) -> float:
    """The spectral radius of the fitted recurrence x_t = w·(x_{t-τ}, ..., x_{t-1}) + b fed its own guesses: below
    1 a forecast settles to the fixed point, at 1 it keeps swinging, above 1 it grows."""
    w = np.asarray(a.model.weights, dtype=float)
    if w.size == 0:
        raise ValueError("The model has no weights.")
    roots = np.roots(np.concatenate([[1.0], -w[::-1]]))
    return float(np.max(np.abs(roots))) if roots.size else 0.0


SETTLES = 1.0 - 1e-6   # a recurrence whose multiplier is below this settles; at 1 (a noise-free sine) it never does


def forecast_tail(a: Analysis) -> np.ndarray:
    """The forecast fed its own guesses, from the end of the training range to the end of the series."""
    return a.from_end[np.isfinite(a.from_end)]


def rises_and_falls(values: np.ndarray, tol: float = REST_TOL) -> bool:
    """Whether values both rise and fall by more than tol (a turn: it does not go one way)."""
    if values.size < 3:
        return False
    running_min, running_max = np.minimum.accumulate(values), np.maximum.accumulate(values)
    rose_then_fell = np.any(running_max - values > tol) and np.any(values - running_min > tol)
    return bool(rose_then_fell and np.ptp(values) > tol)


def rest(a: Analysis, n_train: int, length: int) -> Claim:
    """Where the forecast fed nothing but its own guesses from t = n_train goes, by the end of the series."""
    end, fp, rho, path = a.settles_at, a.fixed_point, radius(a), forecast_tail(a)
    moving = float(np.ptp(path[-50:])) if path.size else math.nan
    lo, hi = (float(path.min()), float(path.max())) if path.size else (math.nan, math.nan)
    numbers = dict(end=end, fixed_point=fp, radius=rho, moving=moving, tol=REST_TOL, low=lo, high=hi)
    at = dict(n_train=n_train, rho=rho, end=end, length=length, fp=fp, lo=lo, hi=hi, moving=moving,
              first=float(path[0]) if path.size else math.nan)
    if not math.isfinite(end) or abs(end) > 10:
        return claim("forecast.grows", _("Fed only its own guesses from t = {n_train}, the forecast grows without "
                     "bound (its recurrence multiplies by {rho:.3f} a step): {end:.3g} at t = {length}.").format(**at),
                     **numbers)
    if rho >= SETTLES or not math.isfinite(fp):
        text = (_("Fed only its own guesses from t = {n_train}, the forecast never settles: its recurrence "
                  "multiplies by {rho:.3f} a step, so its swings do not die out (between {lo:.2f} and {hi:.2f} over "
                  "the test range).") if rises_and_falls(path) else
                _("Fed only its own guesses from t = {n_train}, the forecast never settles: its recurrence "
                  "multiplies by {rho:.3f} a step, so it keeps drifting ({first:.2f} to {end:.2f} over the test "
                  "range)."))
        return claim("forecast.never_settles", text.format(**at), **numbers)
    if abs(end - fp) <= REST_TOL and moving <= REST_TOL:
        return claim("forecast.at_rest", _("Fed only its own guesses from t = {n_train}, the forecast comes to rest "
                     "at {fp:.3f}, a constant, while the data keeps swinging between about -1 and 1.").format(**at),
                     **numbers)
    swung = (_("Over the test range it swung between {lo:.2f} and {hi:.2f}, dying out by a factor {rho:.3f} a "
               "step.").format(**at) if rises_and_falls(path) else "")
    return claim("forecast.on_its_way", sentences(_(
        "Fed only its own guesses from t = {n_train}, the forecast is still on its way to a constant, {fp:.3f}: it "
        "reads {end:.3f} at t = {length} and moved by {moving:.3f} over its last 50 steps, while the data keeps "
        "swinging between about -1 and 1.").format(**at), swung), **numbers)


def horizon_trend(a: Analysis) -> Claim | None:
    """How the test error grows with the horizon k (None when the test range is too short for a curve)."""
    if a.horizon is None or len(a.horizon) == 0:
        return None
    h1, hk, k, var = float(a.horizon[0]), float(a.horizon[-1]), len(a.horizon), a.test_variance
    numbers = dict(first=h1, last=hk, k=k, constant=var)
    at = dict(h1=h1, hk=hk, k=k, var=var, first_share=100 * h1 / var if var else math.nan,
              last_share=100 * hk / var if var else math.nan)
    if float(np.max(a.horizon)) < EXACT:
        return claim("forecast.no_error", _("The test error is zero to rounding at every horizon up to k = {k}: "
                     "without noise the window predicts the sine exactly, and so do its own guesses.").format(**at),
                     **numbers)
    if h1 > ABOVE_CONSTANT * var:
        return claim("forecast.worse_than_constant", _("Even one step ahead the test error ({h1:.3f}) is above the "
                     "error of guessing a constant ({var:.3f}): this fit does worse than no model. At k = {k} it is "
                     "{hk:.3f}.").format(**at), **numbers)
    if h1 >= NEAR_CONSTANT * var:
        return claim("forecast.near_constant", _("Even one step ahead the test error ({h1:.3f}) is close to the "
                     "error of guessing a constant ({var:.3f}), {first_share:.0f}% of it: the noise hides the sine. "
                     "At k = {k} it is {hk:.3f}.").format(**at), **numbers)
    if hk > ABOVE_CONSTANT * var:
        past = int(np.argmax(a.horizon >= var)) + 1
        numbers["past"] = past
        return claim("forecast.past_constant", _("The test error climbs with k, from {h1:.3f} at k = 1 past the "
                     "error of guessing a constant ({var:.3f}) at k = {past}, to {hk:.3f} at k = {k}: that far ahead "
                     "a constant guess does better than the model's own guesses.").format(past=past, **at),
                     **numbers)
    if hk >= var:
        return claim("forecast.reaches_constant", _("The test error climbs with k, from {h1:.3f} at k = 1 to "
                     "{hk:.3f} at k = {k}, as high as the error of guessing a constant ({var:.3f}).").format(**at),
                     **numbers)
    if hk >= NEAR_CONSTANT * var:
        return claim("forecast.towards_constant", _("The test error climbs with k, from {h1:.3f} at k = 1 to "
                     "{hk:.3f} at k = {k}, towards the error of guessing a constant ({var:.3f}): {last_share:.0f}% "
                     "of it.").format(**at), **numbers)
    if hk > 1.5 * h1:
        return claim("forecast.climbs", _("The test error grows with k, from {h1:.4f} at k = 1 to {hk:.4f} at "
                     "k = {k}, still well below the error of guessing a constant ({var:.3f}).").format(**at),
                     **numbers)
    return claim("forecast.flat", _("The test error hardly grows with k: {h1:.4f} at k = 1 and {hk:.4f} at k = {k}, "
                 "far below the error of guessing a constant ({var:.3f}).").format(**at), **numbers)


def far_horizon(a: Analysis) -> Claim | None:
    """The error at the longest horizon against the error of guessing a constant."""
    if a.horizon is None or len(a.horizon) == 0:
        return None
    far, k, var = float(a.horizon[-1]), len(a.horizon), a.test_variance
    numbers = dict(far=far, k=k, constant=var)
    if far >= var:
        return claim("forecast.far_no_better", _("{k} steps ahead it is {far:.3f}, no better than guessing a "
                     "constant ({var:.3f}).").format(k=k, far=far, var=var), **numbers)
    return claim("forecast.far_share", _("{k} steps ahead it is {far:.3f}, {share:.0f}% of the error of guessing a "
                 "constant ({var:.3f}).").format(k=k, far=far, var=var, share=100 * far / var), **numbers)


def one_step(a: Analysis, sigma: float) -> Claim:
    """The one-step test error against the noise's variance σ², the least any model can reach."""
    noise = sigma ** 2
    numbers = dict(test=a.test_mse, noise=noise)
    if noise < EXACT:
        if a.test_mse < EXACT:
            return claim("forecast.exact", _("With no noise, one step ahead the model predicts the sine exactly "
                         "(a test error of zero to rounding)."), **numbers)
        return claim("forecast.noise_free_error", _("With no noise at all, the one-step test error is still "
                     "{test:.2g}: this window cannot pin down the sine exactly.").format(test=a.test_mse), **numbers)
    r = ratio(a.test_mse, noise)
    numbers["ratio"] = r
    if r <= NEAR_NOISE:
        return claim("forecast.near_noise", _("One step ahead the model is about as good as the noise allows: a test "
                     "error of {test:.4f} against the noise's σ² = {noise:.4f}.").format(test=a.test_mse, noise=noise),
                     **numbers)
    return claim("forecast.above_noise", _("One step ahead the test error is {test:.4f}, {ratio:.1f} times the "
                 "noise's σ² = {noise:.4f}: this window leaves error that the noise does not explain.").format(
                     test=a.test_mse, ratio=r, noise=noise), **numbers)


def train_test(a: Analysis, train_noise: float, test_noise: float) -> tuple[str, Claim]:
    """A heading and a claim: the test error against the training error, and why."""
    numbers = dict(train=a.train_mse, test=a.test_mse, train_noise=train_noise, test_noise=test_noise)
    if max(train_noise, test_noise) < EXACT:
        return _("Training and test error without noise"), claim(
            "forecast.gap_no_noise", _("Without noise there is nothing to average out: the one-step errors are "
            "{train:.2g} (training) and {test:.2g} (test), both set by how well the window fits the sine.").format(
                train=a.train_mse, test=a.test_mse), **numbers)
    below = a.test_mse < a.train_mse
    heading = (_("Why the test error is below the training error here") if below else
               _("Why the test error is above the training error here"))
    gap, noise_gap = a.test_mse - a.train_mse, test_noise - train_noise
    follows = (gap < 0) == (noise_gap < 0) and abs(gap) <= EXPLAINS * abs(noise_gap)   # the draws' own difference
    overfit = a.train_mse < train_noise                 # the fit beats the noise on the range it was fitted on
    small = abs(gap) <= SMALL_GAP * (train_noise + test_noise) / 2
    at = dict(test=a.test_mse, train=a.train_mse, train_noise=train_noise, test_noise=test_noise,
              noise_gap=abs(noise_gap), gap=abs(gap), fitted=len(a.model.weights) + 1,
              share=100 * abs(gap) / ((train_noise + test_noise) / 2))
    said = [(_("The test error ({test:.4f}) is below the training error ({train:.4f}).") if below else
             _("The test error ({test:.4f}) is above the training error ({train:.4f})."))]
    if follows:
        said.append(_("Both are mostly the noise, whose random draws average {train_noise:.4f} (mean square) on the "
                      "training range and {test_noise:.4f} on the test range, {noise_gap:.4f} apart against the "
                      "errors' {gap:.4f}: the luck of the draw decides which range scores lower."))
    elif (gap < 0) == (noise_gap < 0):
        said.append(_("The noise's draws do not explain it: they average {train_noise:.4f} (mean square) on the "
                      "training range and {test_noise:.4f} on the test range, {noise_gap:.4f} apart (and the same "
                      "way), against the errors' {gap:.4f}."))
    else:
        said.append(_("The noise's draws do not explain it: they average {train_noise:.4f} (mean square) on the "
                      "training range and {test_noise:.4f} on the test range, {noise_gap:.4f} apart (and the other "
                      "way), against the errors' {gap:.4f}."))
    if overfit:
        said.append(_("The training error is even below the noise on its range: with {fitted} numbers to fit, the "
                      "model has learnt some of the noise itself, which unseen data does not repeat."))
    elif not follows and small:
        said.append(_("The gap is small against the noise itself ({share:.0f}% of its mean square): a smooth sine is "
                      "easy to extrapolate."))
    elif not follows:
        said.append(_("The rest is the fit's: weights fitted on the training range suit the test range better here.")
                    if below else _("The rest is the fit's: weights fitted on the training range suit the training "
                                    "range better here."))
    numbers.update(follows=follows, overfit=overfit, small=small)
    text = sentences(*(t.format(**at) for t in said))
    return heading, claim("forecast.test_below" if below else "forecast.test_above", text, **numbers)


def k_vs_one(a: Analysis, k: int) -> Claim:
    """The k-step test error against the one-step error."""
    r = ratio(a.k_mse, a.test_mse, EXACT)
    numbers = dict(k_mse=a.k_mse, one=a.test_mse, ratio=r, k=k)
    if not math.isfinite(r):
        return claim("forecast.k_exact", _("{k} steps ahead the error is {k_mse:.2g}: zero to rounding, like the "
                     "one-step error.").format(k=k, k_mse=a.k_mse), **numbers)
    if k == 1:
        return claim("forecast.k_is_one", _("With k = 1 the k-step forecast is the one-step forecast."), **numbers)
    return claim("forecast.k_ratio", _("{k} steps ahead the model must build on its own guesses, and each inherits "
                 "the last one's error: the test error is {k_mse:.4f}, {ratio:.1f} times the one-step error.").format(
                     k=k, k_mse=a.k_mse, ratio=r), **numbers)
