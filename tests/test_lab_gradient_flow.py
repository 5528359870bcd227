"""Gradient flow (core.labs.gradient_flow): the rules its claims are checked by, over every control's range
(tests/test_claims_sweep.py walks each control and the NAMED settings with them) and at combinations drawn by
hypothesis. Each rule is written here from the data the page draws, independently of the rule that chose the claim."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from apptest_util import page
from claims_sweep import check_module_lab
from core.claims import Claim
from core.labs import PAGES
from core.labs.gradient_flow import SCALES, Settings as GradientFlow
from core.nn import gradflow

NAMED = [dict(scale=4.0, input_scale=5.0), dict(scale=1.05, use_tanh=False), dict(kind="orthogonal"),
         dict(kind="orthogonal", scale=0.95, use_tanh=False), dict(scale=4.0, T=200, n=256, use_tanh=False),
         dict(scale=0.25, T=200)]


def band(rate: float) -> str:
    return "vanishing" if rate < 0.99 else "exploding" if rate > 1.01 or not math.isfinite(rate) else "stable"


def said_outside(text: str) -> int | None:
    m = re.search(r"; (none|\d+) lies? outside", text)
    return None if m is None else 0 if m.group(1) == "none" else int(m.group(1))


def rate_through_tanh(s, scale: float, input_scale: float) -> float:
    """The per-step rate through tanh of the page's matrix at another weight and input scale, by the T-th root."""
    W = gradflow.recurrent_matrix(s.n, scale, s.kind, s.seed)
    norms = gradflow.tanh_gradient_norms(W, s.T, input_scale, s.seed)
    return float((norms[-1] / norms[0]) ** (1 / s.T)) if norms[-1] > 0 else 0.0


def saturation_holds(c: Claim, s) -> bool:
    words = {"vanishing": "vanishing", "stable": "holding its size", "exploding": "still growing"}
    for scale in (2.0, 4.0):
        before, after = rate_through_tanh(s, scale, 0.0), rate_through_tanh(s, scale, 5.0)
        move = "falls" if after < before else "rises" if after > before else "stays"
        said = re.search(rf"scale {scale:g} .*?(falls|rises|stays) from ([-0-9.]+) to ([-0-9.]+), ([a-z ]+)", c.text)
        if not said or said.group(1) != move or said.group(4) != words[band(after)]:
            return False
        if (said.group(2), said.group(3)) != (f"{before:.2f}", f"{after:.2f}"):
            return False
    return f"(n = {s.n}, seed {s.seed}) over its {s.T} steps" in c.text


def holds(c: Claim, r) -> bool:
    s, a = r.settings, r.analysis
    curve = a.linear if a.tanh is None else a.tanh
    T = len(curve) - 1
    end = curve[-1] / curve[0]
    rate = end ** (1 / T) if end > 0 else 0.0
    sq = curve.astype(np.float64) ** 2
    older = float(sq[T // 2 + 1:].sum() / sq.sum()) if sq.sum() > 0 else 0.0
    norm = float(np.sqrt(sq.sum()))
    rho = float(np.max(np.abs(np.linalg.eigvals(a.W))))
    damped = s.use_tanh and rho > 1 and rate < 0.9 * rho
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
        "gradflow.damped_vanishing": lambda: damped and band(rate) == "vanishing",
        "gradflow.damped_stable": lambda: damped and band(rate) == "stable",
        "gradflow.damped_exploding": lambda: damped and band(rate) == "exploding",
        "gradflow.saturation": lambda: saturation_holds(c, s),
    }
    return rules[c.kind]()


def complete(claims: list[Claim], r) -> None:
    """What must be said at all: the damping sentence exactly where tanh damps a ρ > 1."""
    a = r.analysis
    rho = float(np.max(np.abs(np.linalg.eigvals(a.W))))
    rate = gradflow.growth_factor(a.shown)
    said_damped = any(c.kind.startswith("gradflow.damped") for c in claims)
    assert said_damped == (r.settings.use_tanh and rho > 1 and rate < 0.9 * rho), (r.settings, "damping")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scale=st.sampled_from(SCALES), n=st.integers(2, 256), T=st.integers(1, 200),
       kind=st.sampled_from(["gaussian", "orthogonal"]), tanh=st.booleans(),
       input_scale=st.floats(0.0, 5.0).map(lambda v: round(v, 1)),
       theta=st.floats(0.1, 10.0).map(lambda v: round(v, 1)),
       seed=st.integers(0, 10_000))
def test_gradient_flow_at_points_drawn_by_hypothesis(scale, n, T, kind, tanh, input_scale, theta, seed):
    """Combinations of Gradient flow's controls, drawn by hypothesis."""
    check_module_lab(PAGES["gradient_flow"], GradientFlow(scale=scale, n=n, T=T, kind=kind, use_tanh=tanh,
                                                          input_scale=input_scale, theta=theta, seed=seed))


def test_a_planted_claim_fails_the_rules():
    """A claim with the wrong regime, a wrong clipping word, a wrong count, a wrong share and another matrix's
    saturation rates each fail the rules, and a kind with no rule is refused."""
    lab = PAGES["gradient_flow"].module
    r = lab.compute(GradientFlow(scale=4.0, use_tanh=False))
    claims = lab.readings(r)
    assert claims[0].kind == "gradflow.exploding"
    for wrong in ("gradflow.vanishing", "gradflow.stable"):
        assert not holds(Claim(claims[0].text, wrong), r)
    assert not holds(Claim("clipping leaves them alone", "clip.leaves"), r)
    assert not holds(Claim("99 lie outside", "gradflow.outside"), r)
    assert not holds(Claim("kept", "clip.share_kept"), r)
    saturation = next(c for c in claims if c.kind == "gradflow.saturation")
    assert holds(saturation, r)
    other = lab.compute(GradientFlow(seed=1))      # another matrix's rates, said of this one
    assert not holds(next(c for c in lab.readings(other) if c.kind == "gradflow.saturation"), r)
    with pytest.raises(KeyError):
        holds(Claim("a new sentence", "gradflow.new_kind"), r)


def test_the_gradient_flow_page_shows_its_modules_readings():
    from core.labs import gradient_flow as lab
    at = page("gradient_flow", scale="2", T="48", seed="3").run()
    assert not at.exception
    r = lab.compute(lab.Settings(scale=2.0, T=48, seed=3))
    text = " ".join(m.value for m in at.markdown).replace("\\", "")
    assert lab.saturation(r).text.replace("\\", "") in text
    assert [m.value for m in at.metric][:2] == [lab.metrics(r)[0].value, lab.metrics(r)[1].value]
