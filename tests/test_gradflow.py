import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from core.nn import gradflow
from apptest_util import metric, page, shown


def test_linear_norms_equal_explicit_matrix_powers():
    W = gradflow.recurrent_matrix(10, 1.3, "gaussian", 2)
    g = np.random.default_rng(0).standard_normal(10)
    norms = gradflow.linear_gradient_norms(W, 12, g=g)
    for k in (0, 1, 5, 12):
        assert abs(norms[k] - np.linalg.norm(np.linalg.matrix_power(W.T, k) @ g)) < 1e-9 * max(1, norms[k])


def test_spectral_radius_matches_numpy():
    W = gradflow.recurrent_matrix(17, 0.8, "gaussian", 3)
    assert gradflow.spectral_radius(W) == pytest.approx(np.max(np.abs(np.linalg.eigvals(W))), abs=1e-12)
    assert gradflow.analyse(17, 0.8, 5, seed=3).rho == pytest.approx(gradflow.spectral_radius(W), abs=1e-12)


def test_orthogonal_keeps_linear_norm_at_one():
    W = gradflow.recurrent_matrix(32, 1.0, "orthogonal", 1)
    np.testing.assert_allclose(gradflow.linear_gradient_norms(W, 100), 1.0, atol=1e-10)
    assert gradflow.spectral_radius(W) == pytest.approx(1.0, abs=1e-10)


@pytest.mark.parametrize("n, T, scale, input_scale", [(8, 10, 1.2, 1.0), (16, 30, 0.9, 2.0), (4, 50, 2.0, 0.5)])
def test_tanh_path_equals_torch_autograd(n, T, scale, input_scale):
    W = gradflow.recurrent_matrix(n, scale, "gaussian", 5)
    g = np.random.default_rng(9).standard_normal(n)
    ours = gradflow.tanh_gradient_norms(W, T, input_scale, seed=5, g=g)
    xs, _ = gradflow.tanh_forward(W, T, input_scale, seed=5)
    Wt = torch.tensor(W)
    h = [torch.zeros(n, dtype=torch.float64, requires_grad=True)]
    for t in range(T):
        h.append(torch.tanh(Wt @ h[-1] + torch.tensor(xs[t])))
        h[-1].retain_grad()
    (h[-1] @ torch.tensor(g)).backward()
    for k in range(T + 1):
        auto = h[T - k].grad.norm().item()
        assert abs(ours[k] - auto) <= 1e-8 * max(1.0, auto)


def test_a_steady_trend_is_never_called_stable():
    """Issue 41: 'stable' read for 2.66-fold growth in 24 steps (gaussian, scale 1.05, no tanh) and for a fall to
    0.29 (orthogonal, scale 0.95). Stable means the norm after T steps is within 1% a step of where it started."""
    grows = gradflow.analyse(32, 1.05, 24, use_tanh=False)
    falls = gradflow.analyse(32, 0.95, 24, kind="orthogonal", use_tanh=False)
    assert grows.shown[-1] > 2.5 and grows.regime == "exploding"
    assert falls.shown[-1] < 0.3 and falls.regime == "vanishing"
    for scale in (0.25, 0.9, 0.95, 1.0, 1.05, 1.1, 2.0):
        for kind in ("gaussian", "orthogonal"):
            for tanh in (False, True):
                a = gradflow.analyse(32, scale, 24, kind=kind, use_tanh=tanh)
                end = float(a.shown[-1])                      # the norm after 24 steps, from 1
                if a.regime == "stable":
                    assert 0.99 ** 24 <= end <= 1.01 ** 24, (scale, kind, tanh, end)
                else:
                    assert (end < 0.99 ** 24) == (a.regime == "vanishing"), (scale, kind, tanh, end)


def test_regimes_and_thresholds():
    assert gradflow.regime(1e-5) == "vanishing"
    assert gradflow.regime(1.0) == "stable"
    assert gradflow.regime(1e5) == "exploding"
    assert gradflow.regime(float("inf")) == "exploding"
    assert gradflow.analyse(32, 0.5, 24, use_tanh=False).regime == "vanishing"
    assert gradflow.analyse(32, 1.0, 24, kind="orthogonal", use_tanh=False).regime == "stable"
    assert gradflow.analyse(32, 2.0, 24, use_tanh=False).regime == "exploding"


def test_the_regime_follows_the_rate_per_step_not_where_the_curve_ends():
    """Issue 30: through tanh at scale 4 the gradient grows 494-fold over 24 steps (1.29 a step) and once read
    "stable" because it stayed under a fixed 1,000. Steady growth is growth, whatever T is."""
    assert [gradflow.regime(r) for r in (0.94, 0.96, 0.995, 1.0, 1.005, 1.04, 1.06)] == \
        ["vanishing", "vanishing", "stable", "stable", "stable", "exploding", "exploding"]
    a = gradflow.analyse(32, 4.0, 24)                 # the page's default: through tanh
    assert a.growth == pytest.approx(1.295, abs=0.01) and a.regime == "exploding"
    short, long = gradflow.analyse(32, 1.2, 10, use_tanh=False), gradflow.analyse(32, 1.2, 60, use_tanh=False)
    assert short.regime == long.regime == "exploding"   # the same matrix says the same thing at any T


def test_clipping():
    assert gradflow.clip_whole([50.0], 1.0)[0] == [1.0] and gradflow.clip_whole([0.5], 1.0)[0] == [0.5]
    a = gradflow.analyse(32, 3.0, 24, use_tanh=False, theta=2.0)
    assert a.clipped.max() <= 2.0 and a.linear.max() > 2.0


def test_the_clipping_figure_rescales_the_whole_gradient_as_training_does():
    """Per-step gradients stacked into one vector and clipped by core.nn.models.clip_gradients (the rule training
    uses) give exactly the page's clipped norms: one factor for every step, the shares unchanged."""
    import torch
    from core.nn.models import clip_gradients
    a = gradflow.analyse(32, 1.0, 24, theta=1.0)         # the page's defaults: clipping acts here
    assert a.clip_factor < 1.0
    W, g = a.W, gradflow._unit_gradient(32, 0)
    _, hs = gradflow.tanh_forward(W, 24, 1.0, 0)
    steps = [g]
    for k in range(24):
        steps.append(W.T @ ((1.0 - hs[24 - k] ** 2) * steps[-1]))
    params = []
    for v in steps:
        p = torch.nn.Parameter(torch.zeros(32, dtype=torch.float64))
        p.grad = torch.tensor(v)
        params.append(p)
    clip_gradients(params, 1.0)
    after = np.array([float(torch.linalg.vector_norm(p.grad)) for p in params])
    np.testing.assert_allclose(a.clipped, after, rtol=1e-12)
    assert np.sqrt(np.sum(after ** 2)) == pytest.approx(1.0)
    assert gradflow.distant_share(a.clipped) == pytest.approx(gradflow.distant_share(a.shown))
    assert not np.allclose(a.clipped, np.minimum(a.shown, 1.0))   # capping each step would be another curve
    small = gradflow.analyse(32, 0.5, 24, theta=10.0)
    assert small.clip_factor == 1.0 and np.array_equal(small.clipped, small.shown)


def test_the_guide_has_the_slope_of_rho_through_the_last_point():
    a = gradflow.analyse(32, 1.2, 60, use_tanh=False)
    assert a.guide[-1] == a.linear[-1]
    assert np.allclose(np.diff(np.log(a.guide)), np.log(a.rho))
    late = np.log(a.linear[-20:])                          # where the largest eigenvalues dominate ...
    rate = np.exp((late[-1] - late[0]) / 19)
    assert rate == pytest.approx(a.rho, rel=0.1)           # ... the curve changes by about rho per step


def test_the_measured_tanh_slope_is_what_the_page_quotes():
    a = gradflow.analyse(32, 1.0, 24)
    hs = gradflow.tanh_forward(a.W, 24, 1.0, 0)[1][1:]
    assert a.mean_slope == pytest.approx(float(np.mean(1 - hs ** 2)))
    assert 0.3 < a.mean_slope < 0.8 and a.saturated < 0.1   # at the default most units are far from saturated
    assert gradflow.analyse(32, 1.0, 24, use_tanh=False).mean_slope is None


@pytest.mark.parametrize("kwargs, message", [
    (dict(n=0), "hidden size"), (dict(scale=-1), "weight scale"), (dict(T=0), "steps"),
    (dict(kind="banana"), "matrix kind"), (dict(theta=0), "clipping"), (dict(input_scale=float("nan")), "input"),
])
def test_invalid_controls_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        gradflow.analyse(**kwargs)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(-2, 64), scale=st.floats(-1, 5), T=st.integers(-1, 220), kind=st.sampled_from(["gaussian", "orthogonal", "x"]),
       input_scale=st.floats(-1, 6), use_tanh=st.booleans(), theta=st.floats(-1, 20))
def test_any_controls_give_finite_norms_or_value_error(n, scale, T, kind, input_scale, use_tanh, theta):
    try:
        a = gradflow.analyse(n, scale, T, kind, input_scale, 0, use_tanh, theta)
    except ValueError as exc:
        assert str(exc)
        return
    assert a.regime in ("vanishing", "stable", "exploding")
    assert np.all(a.linear >= 0) and len(a.linear) == T + 1


def test_page_defaults_and_regime_change():
    at = page("gradient_flow").run()
    assert not at.exception
    assert metric(at, "Regime") in ("vanishing", "stable", "exploding")
    at.select_slider(key="gradient_flow.scale").set_value(0.25).run()
    assert metric(at, "Regime") == "vanishing"
    at.toggle(key="gradient_flow.tanh").set_value(False)
    at.select_slider(key="gradient_flow.scale").set_value(4.0).run()
    assert metric(at, "Regime") == "exploding"


def test_page_bad_query_params():
    at = page("gradient_flow", scale="huge", T="-3", kind="banana").run()
    assert not at.exception
    assert len(at.warning) == 3


def test_the_page_s_sentences_follow_its_numbers():
    """Issue 30: the regime, the tanh note and the clipping caption are built from the numbers beside them."""
    at = page("gradient_flow", scale="4").run()          # through tanh, 1.29 a step
    text = " ".join(m.value for m in at.markdown) + " ".join(i.value for i in at.info)
    assert metric(at, "Regime") == "exploding" and "grows by a factor of 1.29 per step" in text
    assert "still grows" in text and "can still lose its long-range gradient" not in text
    captions = " ".join(shown(c) for c in at.caption)
    assert "cannot bring back" not in captions and "distant steps still dominate" in captions
    at = page("gradient_flow", scale="0.25").run()
    text = " ".join(m.value for m in at.markdown)
    assert metric(at, "Regime") == "vanishing" and "shrinks to" in text
    captions = " ".join(shown(c) for c in at.caption)
    assert "cannot bring back a long-range signal that has vanished" in captions
    assert "carries under 0.01%" in captions                      # not 1.31e-05%


def test_what_to_try_on_saturation_says_what_its_numbers_show():
    """Issue 41: 'a big input scale and a large ρ: the curve bends down anyway' while scale 4, input 5 grows 1.11 a
    step. The note now quotes the rates and calls each what its rate is. Issue 62: the rates are those of the
    page's own matrix (its n, kind, seed and T), not of one fixed Gaussian matrix whatever the page shows."""
    from core.labs import gradient_flow as lab
    for s in (lab.Settings(), lab.Settings(n=8, T=60, kind="orthogonal", seed=3)):
        note = lab.notes(lab.compute(s))
        at4 = gradflow.analyse(s.n, 4.0, s.T, s.kind, input_scale=5.0, seed=s.seed).growth
        at2 = gradflow.analyse(s.n, 2.0, s.T, s.kind, input_scale=5.0, seed=s.seed).growth
        word = {"vanishing": "vanishing", "stable": "holding its size", "exploding": "still growing"}
        band = lambda rate: "vanishing" if rate < 0.99 else "exploding" if rate > 1.01 else "stable"   # noqa: E731
        assert f"to {at4:.2f}, {word[band(at4)]}" in note and f"to {at2:.2f}, {word[band(at2)]}" in note
        if s == lab.Settings():
            assert at4 > gradflow.EXPLODE_RATE and f"{at4:.2f}, still growing" in note
        assert f"{s.kind} matrix (n = {s.n}, seed {s.seed}) over its {s.T} steps" in note
        assert "bends down anyway" not in note
