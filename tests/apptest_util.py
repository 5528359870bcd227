"""Helpers for streamlit.testing.v1.AppTest."""
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]


def page(name: str, timeout: float = 60, **query) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=timeout)
    for key, value in query.items():
        at.query_params[key] = value
    return at


def metric(at: AppTest, label_start: str) -> str:
    for m in at.metric:
        if m.label.startswith(label_start):
            return m.value
    raise AssertionError(f"no metric starting with {label_start!r}: {[m.label for m in at.metric]}")


def rerun_until(at: AppTest, condition, seconds: float = 60, every: float = 0.5) -> bool:
    """Rerun the app (as the page's refreshing fragment would) until condition(at) holds or time runs out."""
    import time
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(every)
        at.run()
        if condition(at):
            return True
    return False


def has_subheader(text: str):
    return lambda at: any(text in s.value for s in at.subheader)


def sampling_with_session_model(name: str, lm) -> AppTest:
    """The Sampling page with lm handed over as this session's model `name` (as the Training lab does)."""
    at = page("sampling")
    at.session_state["_rnnlab_session_models"] = {name: lm}
    at.query_params["model"] = name
    return at.run()


def shown(element) -> str:
    """What a Markdown element shows: its source with the backslash escapes and the invisible word joiners
    (ui.common.plain) taken out."""
    import re
    return re.sub(r"\\(.)", r"\1", element.value).replace("\u2060", "")
