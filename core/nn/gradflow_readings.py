"""What the Gradient flow lab, Act 4's gradient and the chapter's BPTT figure say about a gradient through time, as
claims (core.claims) built from the numbers they are about. One regime rule for all of them: gradflow.regime, read
from the rate per step back."""
from __future__ import annotations

import numpy as np

from core.claims import Claim, claim
from core.i18n import N_, _, ngettext
from core.nn import gradflow

OUTSIDE_TOL = 1e-9        # an eigenvalue with |λ| > 1 + this lies outside the unit circle
DOMINATE = 0.5            # the older half of the steps dominates when it carries more than half the squared norm
DAMPED = 0.9              # tanh "damps" a gradient when its rate is below 0.9 ρ (with ρ > 1)


def times(ratio: float) -> str:
    """A number as a learner reads it: 13,900 or 860,000 rather than 1.39e+04 or 8.6e+05; 0.00512; 2.1e-07."""
    if 100 <= ratio < 1e9:
        return f"{float(f'{ratio:.3g}'):,.0f}"
    return f"{ratio:.3g}" if ratio >= 1e-3 or ratio == 0 else f"{ratio:.2g}"


REGIMES = {"vanishing": N_("vanishing"), "stable": N_("stable"), "exploding": N_("exploding")}   # gradflow.regime's


def regime_word(name: str) -> str:
    """A regime's name (gradflow.regime: vanishing, stable, exploding) in the language in force."""
    return _(REGIMES[name])


def _steps(n: int) -> str:
    return ngettext("{n} step", "{n} steps", n).format(n=n)


def change(norms: np.ndarray) -> Claim:
    """How the gradient's norm changes per step back: grows, shrinks or keeps its size, and the regime that rate
    falls in (gradflow.regime: below VANISH_RATE vanishing, above EXPLODE_RATE exploding)."""
    norms = np.asarray(norms, dtype=np.float64)
    rate, steps = gradflow.growth_factor(norms), len(norms) - 1
    total = float(norms[-1] / norms[0])
    name = gradflow.regime(rate)
    if rate > 1:
        text = _("The gradient grows by a factor of {rate:.3g} per step back ({total} times its size after {steps}): "
                 "{regime}")
    elif rate < 1:
        text = _("The gradient shrinks to {rate:.3g} of its size per step back ({total} after {steps}): {regime}")
    else:
        text = _("The gradient keeps its size at every step back ({steps}): {regime}")
    return claim(f"gradflow.{name}", text.format(rate=rate, total=times(total), steps=_steps(steps),
                                                 regime=regime_word(name)), rate=rate, total=total, steps=steps)


def regime(a: gradflow.Analysis) -> Claim:
    """The lab's regime sentence: the change per step on the curve shown, its regime, the band's edges and ρ."""
    c = change(a.shown)
    text = _("{change} (below {vanish:g} per step counts as vanishing, above {explode:g} as exploding; "
             "ρ = {rho:.2f}).").format(change=c.text, vanish=gradflow.VANISH_RATE, explode=gradflow.EXPLODE_RATE,
                                      rho=a.rho)
    return Claim(text, c.kind, {**c.numbers, "rho": a.rho})


def outside(a: gradflow.Analysis) -> Claim:
    """How many eigenvalues of W_hh lie outside the unit circle, and the spectral radius."""
    count = int(np.sum(np.abs(a.eigenvalues) > 1 + OUTSIDE_TOL))
    text = (_("The {n} eigenvalues of W_hh in the complex plane: the largest |λ|, the spectral radius, is {rho:.3f}; "
              "none lies outside the unit circle.") if count == 0 else
            ngettext("The {n} eigenvalues of W_hh in the complex plane: the largest |λ|, the spectral radius, is "
                     "{rho:.3f}; {count} lies outside the unit circle.",
                     "The {n} eigenvalues of W_hh in the complex plane: the largest |λ|, the spectral radius, is "
                     "{rho:.3f}; {count} lie outside the unit circle.", count))
    return claim("gradflow.outside", text.format(n=len(a.eigenvalues), rho=a.rho, count=count), count=count,
                 rho=a.rho)


def percent(share: float) -> str:
    """A share as a learner reads it: 99.8%, 3.2%, 0.05%, or under 0.01% (never 1.31e-05%)."""
    return f"{100 * share:.3g}%" if share >= 1e-4 else (_("under 0.01%") if share > 0 else "0%")


def clip_action(a: gradflow.Analysis, theta: float) -> Claim:
    """Whether clipping at θ changes the stacked state gradients, and by what one factor."""
    at = dict(norm=a.whole_norm, theta=theta, factor=a.clip_factor)
    if a.clip_factor == 1.0:
        return claim("clip.leaves", _("The gradients with respect to the states, all steps stacked into one vector (a "
                     "stand-in here: training clips the gradient of the parameters, g ← min(1, θ/‖g‖)·g), have the "
                     "norm {norm:.3g}, not above θ = {theta:g}: clipping leaves them alone.").format(**at),
                     norm=a.whole_norm, theta=theta, factor=1.0)
    return claim("clip.scales", _("The gradients with respect to the states, all steps stacked into one vector (a "
                 "stand-in here: training clips the gradient of the parameters, g ← min(1, θ/‖g‖)·g), have the norm "
                 "{norm:.3g}, above θ = {theta:g}: every step is multiplied by the same {factor:.3g}, so the curve "
                 "moves down without changing shape.").format(**at),
                 norm=a.whole_norm, theta=theta, factor=a.clip_factor)


def clip_share(a: gradflow.Analysis) -> Claim:
    """The older half's share of the squared norm (the same before and after clipping) and what it means."""
    share = gradflow.distant_share(a.shown)
    shown = percent(share)
    if a.regime == "vanishing" and share < 0.01:
        return claim("clip.share_vanished", _("The older half of the steps carries {share} of the squared norm before "
                     "clipping and after it: clipping cannot bring back a long-range signal that has vanished.").format(
                         share=shown), share=share)
    if share > DOMINATE:
        return claim("clip.share_distant", _("The older half of the steps carries {share} of the squared norm before "
                     "clipping and after it: clipping keeps the steps' proportions, so the distant steps still "
                     "dominate.").format(share=shown), share=share)
    return claim("clip.share_kept", _("The older half of the steps carries {share} of the squared norm before clipping "
                 "and after it: clipping changes the size of the gradient, never how it is shared between "
                 "steps.").format(share=shown), share=share)


def damping(a: gradflow.Analysis) -> Claim | None:
    """With tanh and ρ > 1, when the rate is well below ρ: the tanh slopes damp the gradient (None otherwise)."""
    if a.tanh is None or not (a.rho > 1 and a.growth < DAMPED * a.rho):
        return None
    text = {"vanishing": _("ρ is {rho:.2f} > 1, yet the gradient changes by only {rate:.2f} per step: each step back "
                           "also multiplies by the tanh slopes 1 - h², which average {slope:.2f} in this run "
                           "({saturated:.0f}% of the units have |h| > 0.99, where the slope is almost 0). Those slopes "
                           "damp the gradient, so a tanh RNN with ρ > 1 can still lose its long-range gradient, as it "
                           "does here."),
            "exploding": _("ρ is {rho:.2f} > 1, yet the gradient changes by only {rate:.2f} per step: each step back "
                           "also multiplies by the tanh slopes 1 - h², which average {slope:.2f} in this run "
                           "({saturated:.0f}% of the units have |h| > 0.99, where the slope is almost 0). Those slopes "
                           "damp the gradient, though here the gradient still grows."),
            "stable": _("ρ is {rho:.2f} > 1, yet the gradient changes by only {rate:.2f} per step: each step back also "
                        "multiplies by the tanh slopes 1 - h², which average {slope:.2f} in this run ({saturated:.0f}% "
                        "of the units have |h| > 0.99, where the slope is almost 0). Those slopes damp the gradient, "
                        "which holds the gradient near a steady size here.")}[a.regime]
    return claim(f"gradflow.damped_{a.regime}", text.format(rho=a.rho, rate=a.growth, slope=a.mean_slope,
                                                            saturated=100 * a.saturated),
                 rho=a.rho, rate=a.growth, slope=a.mean_slope)


def saturation(rates: dict[tuple[float, float], float], where: str) -> Claim:
    """'What to try' on saturation: the rate per step at weight scales 2 and 4, input scale 0 and 5 (tanh on), for the
    matrix and steps `where` names (saturation_rates computes them)."""
    r2, r4 = (rates[2.0, 0.0], rates[2.0, 5.0]), (rates[4.0, 0.0], rates[4.0, 5.0])

    def moves(pair) -> str:      # a verb between "from A" and "to B" (Chinese: 从 A 下降到 B)
        return _("falls") if pair[1] < pair[0] else _("rises") if pair[1] > pair[0] else _("stays")

    def after(rate: float) -> str:
        return {"vanishing": regime_word("vanishing"), "stable": _("holding its size"),
                "exploding": _("still growing")}[gradflow.regime(rate)]
    return claim("gradflow.saturation", _("Turn tanh on and raise the input scale from 0 to 5: saturated units pass "
                 "back less of the gradient. For {where}, at weight scale 2 the gradient's rate per step {moves2} from "
                 "{a2:.2f} to {b2:.2f}, {after2}; at scale 4 it {moves4} from {a4:.2f} to {b4:.2f}, {after4}.").format(
                     where=where, moves2=moves(r2), a2=r2[0], b2=r2[1], after2=after(r2[1]), moves4=moves(r4),
                     a4=r4[0], b4=r4[1], after4=after(r4[1])),
                 **{f"rate_{s:g}_{i:g}": r for (s, i), r in rates.items()})


def saturation_rates(n: int = 32, T: int = 24, kind: str = "gaussian", seed: int = 0) -> dict:
    """The rate per step through tanh of the matrix of this n, kind and seed, at weight scales 2 and 4 and input
    scales 0 and 5."""
    rates = {}
    for scale in (2.0, 4.0):
        W = gradflow.recurrent_matrix(n, scale, kind, seed)    # only the rates through tanh: no eigenvalues
        for inp in (0.0, 5.0):
            rates[scale, inp] = gradflow.growth_factor(gradflow.tanh_gradient_norms(W, T, inp, seed))
    return rates


def through_tanh(a: gradflow.Analysis) -> Claim:
    """The chapter's BPTT figure: the linear term from the oldest step against the one through tanh."""
    lin, tanh = float(a.linear[-1]), float(a.tanh[-1])
    steps = len(a.linear) - 1
    at = dict(rho=a.rho, steps=steps, lin=lin, tanh=tanh, times=times(lin / tanh) if tanh else "",
              regime=regime_word(a.regime))
    if tanh < lin:
        return claim("bptt.tanh_smaller", _(
            "Spectral radius ρ = {rho:.2f}. In the linear case the term from {steps} steps back has norm {lin:.3g} (the "
            "newest is 1); through tanh, whose slopes are all below 1, it is {tanh:.3g}, {times} times smaller, so "
            "through tanh the edge between vanishing and exploding sits at a larger ρ than 1: here the gradient "
            "through tanh is {regime}.").format(**at), linear=lin, tanh=tanh, rate=a.growth)
    return claim("bptt.tanh_not_smaller", _(
        "Spectral radius ρ = {rho:.2f}. In the linear case the term from {steps} steps back has norm {lin:.3g} (the "
        "newest is 1); through tanh it is {tanh:.3g}, no smaller: here the gradient through tanh is {regime}.").format(
        **at), linear=lin, tanh=tanh, rate=a.growth)


def reach(norms: np.ndarray, epochs: int) -> Claim:
    """Act 4: the gradient of one loss at each earlier state of the trained passage network, read by the lab's
    regime rule."""
    norms = np.asarray(norms, dtype=np.float64)
    back, rate = len(norms) - 1, gradflow.growth_factor(norms)
    name = gradflow.regime(rate)
    at = dict(epochs=epochs, rate=rate, back=back, share=norms[-1] / norms[0])
    if name == "vanishing":
        return claim("reach.vanishing", _(
            "Left to right, after {epochs} epochs, it shrinks to {rate:.2f} of its size per step back, so the state "
            "{back} steps back receives {share:.1e} of the gradient the last state receives: the vanishing gradient "
            "of the Gradient flow lab, in a trained network.").format(**at), rate=rate)
    if name == "exploding":
        return claim("reach.exploding", _("Left to right, after {epochs} epochs, it grows by {rate:.2f} per step back, "
                                          "and clipping is what keeps such updates in bounds.").format(**at), rate=rate)
    return claim("reach.stable", _("Left to right, after {epochs} epochs, it changes by {rate:.2f} per step back, close "
                                   "enough to 1 that the state {back} steps back receives {share:.2g} of what the last "
                                   "state receives.").format(**at), rate=rate)
