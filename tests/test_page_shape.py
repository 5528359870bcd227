"""Every lab page has one shape: importable without running, with named figure functions other pages can use."""
import importlib

import numpy as np
import plotly.graph_objects as go

from core import forecast, gradflow
from ui.common import LABS


def test_every_lab_page_imports_without_drawing_anything():
    for lab in LABS:
        module = importlib.import_module(f"pages.{lab.key}")
        assert callable(module.main), lab.key


def test_figure_functions_are_reusable_from_another_page():
    fc = importlib.import_module("pages.forecasting")
    x = forecast.make_series(300, 0.2, 0)
    s = fc.Settings(T=300, n_train=200, tau=4, k=8, sigma=0.2, seed=0)
    a = forecast.analyse(x, s.tau, s.n_train, s.k)
    fig = fc.forecasts_figure(s, x, a)
    assert isinstance(fig, go.Figure) and {t.name for t in fig.data} >= {"data", "1-step", "8-step"}
    assert fc.horizon_figure(s, a).layout.yaxis.type == "log"
    gf = importlib.import_module("pages.gradient_flow")
    fig = gf.norms_figure(gradflow.analyse(T=10))
    assert len(fig.data[0].x) == 11 and np.isfinite(fig.data[0].y).all()


def test_forecast_analysis_matches_its_parts():
    x = forecast.make_series(400, 0.2, 1)
    a = forecast.analyse(x, 4, 300, 16)
    assert (a.train_mse, a.test_mse) == forecast.one_step_mse(a.model, x, 300)
    assert a.k_mse == forecast.k_step_mse(a.model, x, 16, 300)
    assert np.array_equal(a.horizon, forecast.mse_by_horizon(a.model, x, 64, start=300))
    assert set(a.forecasts) == {1, 4, 16, 64}
