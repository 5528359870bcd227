"""A reference RNN language model in numpy, float64, with a hand-written backward pass through time.

The recurrence (row-vector convention, a batch of B sequences at once):

    H_t = tanh(X_t W_xh + H_{t-1} W_hh + b_h)        X_t: one-hot of token t, or its embedding row
    O_t = H_t W_hq + b_q                              logits over the vocabulary
    loss = mean over all B*T positions of -log softmax(O_t)[y_t]

No autograd anywhere: `backward` applies the chain rule step by step, from the last time step to the
first, and returns the gradient of every parameter and of the initial state H_0. core.nn.verify checks it
against torch autograd and against finite differences.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.checks import check_int, check_real

PARAM_ORDER = ("E", "W_xh", "W_hh", "b_h", "W_hq", "b_q")


def init_params(vocab_size: int, num_hiddens: int, embed_dim: int | None = None, seed: int = 0,
                scale: float = 0.5) -> dict[str, np.ndarray]:
    """Gaussian parameters; 'E' (vocab x embed_dim) only when inputs are embedded rather than one-hot."""
    vocab_size = check_int("vocab_size", vocab_size, 2, 100_000)
    num_hiddens = check_int("num_hiddens", num_hiddens, 1, 4096)
    scale = check_real("scale", scale, 0.0, 10.0, lo_open=True)
    rng = np.random.default_rng(check_int("seed", seed, 0))
    params = {}
    d_in = vocab_size
    if embed_dim is not None:
        d_in = check_int("embed_dim", embed_dim, 1, 4096)
        params["E"] = rng.standard_normal((vocab_size, d_in))
    params["W_xh"] = rng.standard_normal((d_in, num_hiddens)) * scale / np.sqrt(d_in if embed_dim else 1)
    params["W_hh"] = rng.standard_normal((num_hiddens, num_hiddens)) * scale / np.sqrt(num_hiddens)
    params["b_h"] = rng.standard_normal(num_hiddens) * 0.1
    params["W_hq"] = rng.standard_normal((num_hiddens, vocab_size)) * scale / np.sqrt(num_hiddens)
    params["b_q"] = rng.standard_normal(vocab_size) * 0.1
    return params


def _check(params: dict, tokens, targets=None, H0=None):
    for name in ("W_xh", "W_hh", "b_h", "W_hq", "b_q"):
        if name not in params:
            raise ValueError(f"params is missing '{name}'.")
    W_xh, W_hh, W_hq = params["W_xh"], params["W_hh"], params["W_hq"]
    h, V = W_hh.shape[0], W_hq.shape[1]
    d_in = params["E"].shape[1] if "E" in params else V
    if W_hh.shape != (h, h) or W_xh.shape != (d_in, h) or W_hq.shape != (h, V) \
            or params["b_h"].shape != (h,) or params["b_q"].shape != (V,) \
            or ("E" in params and params["E"].shape[0] != V):
        raise ValueError("Parameter shapes do not fit together: expected W_xh (inputs x h), W_hh (h x h), "
                         "b_h (h), W_hq (h x V), b_q (V), E (V x d) when embedding.")
    tokens = np.asarray(tokens)
    if tokens.ndim != 2 or tokens.size == 0 or not np.issubdtype(tokens.dtype, np.integer):
        raise ValueError(f"tokens must be a non-empty 2-D integer array (batch x time), got shape {tokens.shape}.")
    if tokens.min() < 0 or tokens.max() >= V:
        raise ValueError(f"token ids must lie in 0..{V - 1}.")
    if targets is not None:
        targets = np.asarray(targets)
        if targets.shape != tokens.shape or not np.issubdtype(targets.dtype, np.integer):
            raise ValueError(f"targets must be an integer array of the same shape as tokens {tokens.shape}.")
        if targets.min() < 0 or targets.max() >= V:
            raise ValueError(f"target ids must lie in 0..{V - 1}.")
    B = tokens.shape[0]
    if H0 is None:
        H0 = np.zeros((B, h))
    H0 = np.asarray(H0, dtype=np.float64)
    if H0.shape != (B, h):
        raise ValueError(f"H0 must have shape (batch, hidden) = {(B, h)}, got {H0.shape}.")
    return tokens, targets, H0, V


def embed(params: dict, tokens_t: np.ndarray) -> np.ndarray:
    """X_t for one time step: the embedding rows, or the one-hot vectors."""
    if "E" in params:
        return params["E"][tokens_t]
    X = np.zeros((tokens_t.shape[0], params["W_hq"].shape[1]))
    X[np.arange(tokens_t.shape[0]), tokens_t] = 1.0
    return X


def cell(params: dict, X_t: np.ndarray, H_prev: np.ndarray) -> np.ndarray:
    """One step of the recurrence: H_t = tanh(X_t W_xh + H_{t-1} W_hh + b_h)."""
    return np.tanh(X_t @ params["W_xh"] + H_prev @ params["W_hh"] + params["b_h"])


def two_products_or_one(X: np.ndarray, W_xh: np.ndarray, H: np.ndarray, W_hh: np.ndarray):
    """The pre-activation computed both ways: X W_xh + H W_hh, and [X, H] @ [W_xh; W_hh] (one product)."""
    two = X @ W_xh + H @ W_hh
    one = np.concatenate([X, H], axis=1) @ np.concatenate([W_xh, W_hh], axis=0)
    return two, one


def softmax(O: np.ndarray) -> np.ndarray:
    Z = O - O.max(axis=-1, keepdims=True)
    P = np.exp(Z)
    return P / P.sum(axis=-1, keepdims=True)


@dataclass
class ForwardCache:
    tokens: np.ndarray
    targets: np.ndarray | None
    X: list            # X_t per step
    H: list            # H_0 .. H_T (H[0] is the initial state)
    P: list            # softmax(O_t) per step
    logits: np.ndarray  # (B, T, V)
    loss: float


def forward(params: dict, tokens, targets=None, H0=None) -> ForwardCache:
    """Run the RNN over tokens (batch x time); with targets, also the mean cross-entropy."""
    tokens, targets, H, V = _check(params, tokens, targets, H0)
    B, T = tokens.shape
    Xs, Hs, Ps, logits = [], [H], [], np.empty((B, T, V))
    total = 0.0
    for t in range(T):
        X = embed(params, tokens[:, t])
        H = cell(params, X, H)
        O = H @ params["W_hq"] + params["b_q"]
        P = softmax(O)
        Xs.append(X)
        Hs.append(H)
        Ps.append(P)
        logits[:, t] = O
        if targets is not None:
            Z = O - O.max(axis=1, keepdims=True)
            logp = Z - np.log(np.exp(Z).sum(axis=1, keepdims=True))
            total -= logp[np.arange(B), targets[:, t]].sum()
    loss = total / (B * T) if targets is not None else float("nan")
    return ForwardCache(tokens, targets, Xs, Hs, Ps, logits, float(loss))


def backward(params: dict, cache: ForwardCache) -> dict[str, np.ndarray]:
    """Hand-written backpropagation through time: gradients of the mean loss w.r.t. every parameter and H0."""
    if cache.targets is None:
        raise ValueError("backward needs the forward pass to have been run with targets.")
    B, T = cache.tokens.shape
    grads = {name: np.zeros_like(value) for name, value in params.items()}
    dH_next = np.zeros_like(cache.H[0])
    rows = np.arange(B)
    for t in reversed(range(T)):
        dO = cache.P[t].copy()
        dO[rows, cache.targets[:, t]] -= 1.0
        dO /= B * T                                   # d loss / d O_t
        H_t, H_prev = cache.H[t + 1], cache.H[t]
        grads["W_hq"] += H_t.T @ dO
        grads["b_q"] += dO.sum(axis=0)
        dH = dO @ params["W_hq"].T + dH_next          # from the output and from step t+1
        dA = dH * (1.0 - H_t ** 2)                    # through tanh
        grads["W_xh"] += cache.X[t].T @ dA
        grads["W_hh"] += H_prev.T @ dA
        grads["b_h"] += dA.sum(axis=0)
        if "E" in params:
            np.add.at(grads["E"], cache.tokens[:, t], dA @ params["W_xh"].T)
        dH_next = dA @ params["W_hh"].T               # to H_{t-1}
    grads["H0"] = dH_next
    return grads


def loss_and_grads(params: dict, tokens, targets, H0=None) -> tuple[float, dict[str, np.ndarray]]:
    cache = forward(params, tokens, targets, H0)
    return cache.loss, backward(params, cache)


def finite_difference(params: dict, tokens, targets, name: str, index: tuple, eps: float = 1e-3,
                      H0=None) -> float:
    """Numerical d loss / d (one entry of a parameter, or of 'H0'), by central differences.

    D(e) = (L(p + e) - L(p - e)) / (2 e) has error O(e^2); combining two step sizes,
    (4 D(e/2) - D(e)) / 3, cancels that term (Richardson extrapolation), leaving O(e^4) plus rounding.
    """
    if H0 is None:
        H0 = np.zeros((np.asarray(tokens).shape[0], params["W_hh"].shape[0]))
    if name != "H0" and name not in params:
        raise ValueError(f"Unknown parameter '{name}': choose one of {', '.join(params)} or H0.")
    values = {**params, "H0": np.array(H0, dtype=np.float64)}
    try:
        original = values[name][index]
    except (IndexError, TypeError):
        raise ValueError(f"Index {index} is outside {name}, whose shape is {values[name].shape}.") from None

    def loss_at(delta: float) -> float:
        changed = {k: v.copy() if k == name else v for k, v in values.items()}
        changed[name][index] = original + delta
        H0_now = changed.pop("H0")
        return forward(changed, tokens, targets, H0_now).loss

    def central(e: float) -> float:
        return (loss_at(e) - loss_at(-e)) / (2 * e)

    return (4 * central(eps / 2) - central(eps)) / 3
