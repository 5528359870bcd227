"""How a gradient travels back through time: vanishing and exploding with the spectral radius of W_hh.

Backpropagation through time multiplies the gradient by the recurrent Jacobian once per step. For a linear
recurrence h_t = W h_{t-1} + ... (row-vector code uses W_hh; here column convention h_t = W_hh h_{t-1})
that Jacobian is W_hh itself, so after k steps the gradient is (W_hh^T)^k g. With tanh it is
diag(1 - h_t^2) W_hh: saturated units (|h| near 1) shrink it further.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.checks import check_choice, check_int, check_real

KINDS = ("gaussian", "orthogonal")
# The regime is read from the gradient's rate per step back (the geometric mean of ||g_k|| / ||g_k-1||), not from
# where it ends after T steps. Only a rate within 1% of 1 is stable: a gradient that loses 1% a step keeps a third
# of itself after a hundred steps (0.99^100 = 0.37), one that loses 5% keeps 0.6% (and fell to 0.29 in the page's
# 24 steps while it read "stable" under the old 5% band); one that gains 4% a step has grown 2.7-fold in 24 steps.
VANISH_RATE = 0.99     # per step below this: vanishing
EXPLODE_RATE = 1.01    # above this: exploding


def recurrent_matrix(n: int = 32, scale: float = 1.0, kind: str = "gaussian", seed: int = 0) -> np.ndarray:
    """A seeded n x n W_hh. gaussian: entries N(0, 1/n), so its spectral radius is close to 1 before scaling
    (circular law); orthogonal: a random orthogonal matrix (all |eigenvalues| = 1). Then times scale."""
    n = check_int("hidden size n", n, 1, 1024)
    scale = check_real("weight scale", scale, 0.0, 100.0, lo_open=True)
    check_choice("matrix kind", kind, KINDS)
    rng = np.random.default_rng(check_int("seed", seed, 0, 2**32 - 1))
    A = rng.standard_normal((n, n))
    if kind == "gaussian":
        W = A / np.sqrt(n)
    else:
        Q, R = np.linalg.qr(A)
        W = Q * np.sign(np.diag(R))
    return scale * W


def spectral_radius(W: np.ndarray) -> float:
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2 or W.shape[0] != W.shape[1] or W.size == 0:
        raise ValueError(f"W must be a square matrix, got shape {W.shape}.")
    return float(np.max(np.abs(np.linalg.eigvals(W))))


def _unit_gradient(n: int, seed: int) -> np.ndarray:
    g = np.random.default_rng(seed + 7919).standard_normal(n)
    return g / np.linalg.norm(g)


def linear_gradient_norms(W: np.ndarray, T: int = 24, g: np.ndarray | None = None, seed: int = 0) -> np.ndarray:
    """||(W^T)^k g|| for k = 0..T, for a unit gradient g injected at the last step."""
    W = np.asarray(W, dtype=np.float64)
    T = check_int("steps T", T, 1, 10_000)
    g = _unit_gradient(W.shape[0], seed) if g is None else np.asarray(g, dtype=np.float64)
    norms = np.empty(T + 1)
    for k in range(T + 1):
        norms[k] = np.linalg.norm(g)
        g = W.T @ g
    return norms


def tanh_forward(W: np.ndarray, T: int, input_scale: float = 1.0, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Run h_t = tanh(W h_{t-1} + x_t) from h_0 = 0 on random inputs x_t ~ N(0, input_scale^2).
    Returns the inputs (T, n) and the states h_0..h_T (T+1, n)."""
    W = np.asarray(W, dtype=np.float64)
    T = check_int("steps T", T, 1, 10_000)
    input_scale = check_real("input scale", input_scale, 0.0, 100.0)
    n = W.shape[0]
    xs = np.random.default_rng(seed + 104729).standard_normal((T, n)) * input_scale
    hs = np.zeros((T + 1, n))
    for t in range(T):
        hs[t + 1] = np.tanh(W @ hs[t] + xs[t])
    return xs, hs


def tanh_gradient_norms(W: np.ndarray, T: int = 24, input_scale: float = 1.0, seed: int = 0,
                        g: np.ndarray | None = None) -> np.ndarray:
    """Norm of d(g . h_T)/d h_{T-k} for k = 0..T through the real tanh RNN: each step back multiplies by the
    Jacobian of h_t = tanh(W h_{t-1} + x_t) w.r.t. h_{t-1}, i.e. by W^T diag(1 - h_t^2)."""
    W = np.asarray(W, dtype=np.float64)
    _, hs = tanh_forward(W, T, input_scale, seed)
    g = _unit_gradient(W.shape[0], seed) if g is None else np.asarray(g, dtype=np.float64)
    norms = np.empty(T + 1)
    for k in range(T + 1):
        norms[k] = np.linalg.norm(g)
        if k < T:
            t = T - k
            g = W.T @ ((1.0 - hs[t] ** 2) * g)
    return norms


def regime(rate: float) -> str:
    """vanishing, stable or exploding, from the gradient's rate per step back (growth_factor)."""
    if not np.isfinite(rate) or rate > EXPLODE_RATE:
        return "exploding"
    if rate < VANISH_RATE:
        return "vanishing"
    return "stable"


def growth_factor(norms: np.ndarray) -> float:
    """Geometric mean of the per-step ratio ||g_k|| / ||g_{k-1}||, i.e. (||g_T|| / ||g_0||)^(1/T)."""
    norms = np.asarray(norms, dtype=np.float64)
    if len(norms) < 2 or norms[0] <= 0:
        raise ValueError("need at least two positive norms.")
    if norms[-1] == 0:
        return 0.0
    return float((norms[-1] / norms[0]) ** (1.0 / (len(norms) - 1)))


def clip_whole(norms: np.ndarray, theta: float) -> tuple[np.ndarray, float]:
    """Clipping as training does it (core.nn.models.clip_gradients): the whole gradient, here the gradients
    with respect to every step's state stacked into one vector, of norm sqrt(sum ||g_k||^2), is rescaled once
    by min(1, theta / that norm). Returns every step's norm after that rescaling, and the factor. Every step
    shrinks by the same factor, so the direction, and each step's share of the gradient, are unchanged."""
    norms = np.asarray(norms, dtype=np.float64)
    theta = check_real("clipping threshold", theta, 0.0, lo_open=True)
    total = float(np.sqrt(np.sum(norms ** 2)))
    factor = min(1.0, theta / total) if total > 0 else 1.0
    return norms * factor, factor


def distant_share(norms: np.ndarray) -> float:
    """The share of the squared gradient norm carried by the older half of the steps (k > T/2)."""
    sq = np.asarray(norms, dtype=np.float64) ** 2
    total = float(sq.sum())
    steps = len(sq) - 1                      # norms[k] for k = 0..T steps back
    return float(sq[steps // 2 + 1:].sum() / total) if total > 0 else 0.0


def rate_guide(norms: np.ndarray, rho: float) -> np.ndarray:
    """A line of slope rho per step (on a log scale) through the last point: ||g_k|| ~ C rho^k describes how
    the linear norm changes once the largest eigenvalue dominates, not its value from k = 0."""
    norms = np.asarray(norms, dtype=np.float64)
    k = np.arange(len(norms))
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        return norms[-1] * float(rho) ** (k - k[-1])


@dataclass
class Analysis:
    W: np.ndarray
    rho: float
    eigenvalues: np.ndarray
    linear: np.ndarray
    tanh: np.ndarray | None
    regime: str
    growth: float
    clipped: np.ndarray        # every step's norm after clipping the whole gradient (clip_whole)
    clip_factor: float         # the one factor clipping multiplies every step by (1: no clipping)
    mean_slope: float | None   # mean tanh slope 1 - h^2 over the forward run (None without tanh)
    saturated: float | None    # share of units with |h| > 0.99

    @property
    def whole_norm(self) -> float:
        """The norm of the whole gradient (every step's stacked), the one clipping compares with theta."""
        return float(np.sqrt(np.sum(self.shown ** 2)))

    @property
    def guide(self) -> np.ndarray:
        return rate_guide(self.linear, self.rho)

    @property
    def shown(self) -> np.ndarray:
        """The curve the regime is read from: through tanh when computed, else the linear one."""
        return self.linear if self.tanh is None else self.tanh


def analyse(n: int = 32, scale: float = 1.0, T: int = 24, kind: str = "gaussian", input_scale: float = 1.0,
            seed: int = 0, use_tanh: bool = True, theta: float = 1.0) -> Analysis:
    """Everything the gradient-flow page shows for one setting of the controls."""
    T = check_int("steps T", T, 1, 200)
    theta = check_real("clipping threshold", theta, 0.0, lo_open=True)
    W = recurrent_matrix(n, scale, kind, seed)
    linear = linear_gradient_norms(W, T, seed=seed)
    tanh = tanh_gradient_norms(W, T, input_scale, seed) if use_tanh else None
    shown = linear if tanh is None else tanh
    clipped, factor = clip_whole(shown, theta)
    slope = saturated = None
    if use_tanh:
        hs = tanh_forward(W, T, input_scale, seed)[1][1:]
        slope, saturated = float(np.mean(1.0 - hs ** 2)), float(np.mean(np.abs(hs) > 0.99))
    eigenvalues = np.linalg.eigvals(W)
    growth = growth_factor(shown)
    return Analysis(W, float(np.max(np.abs(eigenvalues))), eigenvalues, linear, tanh, regime(growth), growth,
                    clipped, factor, slope, saturated)
