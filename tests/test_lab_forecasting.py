"""Forecasting (core.labs.forecasting): its claims' rules are tests/test_claims.py's `holds`, with its own finer
sweep there (every window of Act 1, points drawn by hypothesis); tests/test_claims_sweep.py walks every control
and the NAMED settings with them."""
from __future__ import annotations

from core.claims import Claim

NAMED = [dict(tau=16, k=32, sigma=0.5, n_train=300, seed=7), dict(sigma=0.0), dict(tau=64, k=64),
         dict(T=5000, n_train=4999, tau=64, k=64), dict(T=100, n_train=50, tau=1)]


def holds(c: Claim, r) -> bool:
    from test_claims import holds as forecasting_holds
    return forecasting_holds(c, r.settings, r.x, r.analysis)


def complete(claims: list[Claim], r) -> None:
    """Every reading the page prints is there: the one-step, k-step, rest and train-test claims at least."""
    kinds = {c.kind.split("_")[0] for c in claims}
    assert len(claims) >= 4, kinds
