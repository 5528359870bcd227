"""A real browser (Playwright driving Debian's chromium) against a live `streamlit run app.py`."""
import re

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser


def no_exception(page: Page) -> None:
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    assert "Traceback" not in page.inner_text("body")


def metric_value(page: Page, label: str) -> str:
    box = page.locator("[data-testid='stMetric']", has_text=label).first
    return box.locator("[data-testid='stMetricValue']").inner_text()


def test_home_and_forecasting(page: Page, app_url, shots_dir):
    page.goto(app_url)
    expect(page.get_by_role("heading", name=re.compile("RNN Lab"))).to_be_visible(timeout=30_000)
    page.screenshot(path=str(shots_dir / "home.png"), full_page=True)
    page.locator("[data-testid='stSidebarNav']").get_by_text("Forecasting", exact=True).click()
    expect(page.get_by_text("One-step MSE, test range")).to_be_visible(timeout=30_000)
    before = metric_value(page, "One-step MSE, test range")
    slider = page.get_by_role("slider", name=re.compile("Window"))
    slider.focus()
    for _ in range(4):
        page.keyboard.press("ArrowRight")
    expect(page.locator("[data-testid='stMetric']", has_text="One-step MSE, test range")
           .locator("[data-testid='stMetricValue']")).not_to_have_text(before, timeout=15_000)
    expect(page).to_have_url(re.compile(r"tau=8"), timeout=15_000)
    no_exception(page)
    page.screenshot(path=str(shots_dir / "forecasting.png"), full_page=True)
