"""Helpers for streamlit.testing.v1.AppTest."""
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]


def url_of(name: str, settings: dict) -> dict:
    """A page's URL query from settings named as the registry names them (core.labs): a control by its declared
    name (tokenizer=, not tok=), any other key by its Url member (exercise=, learner=, run=, teacher=, join=,
    hide=); a query already made by core.labs.url_query or query passes as it is. Values go in as given,
    unchecked, so a test can hand a page a bad one. A name the registry does not know is an error."""
    from core.labs import Url, controls_of
    controls, out = controls_of(name), {}
    known = {s.key for s in controls.values()} | {u.value for u in Url}
    for key, value in settings.items():
        if key in controls:
            out[controls[key].key] = value
        elif key.upper() in Url.__members__:
            out[Url[key.upper()].value] = value
        elif key in known:
            out[key] = value
        else:
            raise ValueError(f"{name} has no control {key!r} and there is no such URL key")
    return out


def page(name: str, timeout: float = 60, unknown: dict | None = None, **settings) -> AppTest:
    """pages/<name>.py in AppTest, its URL set from settings (url_of), plus `unknown`: URL keys no page reads, as
    a hostile link may carry."""
    at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=timeout)
    for key, value in {**url_of(name, settings), **(unknown or {})}.items():
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


def as_learner(name: str, token: str, timeout: float = 60, **query) -> AppTest:
    """pages/<name>.py opened by a learner on another device (no cookie here): they type their resume code in the
    sidebar's 'Go on from another device', as a learner does (no address carries their key)."""
    from core import classroom
    at = page(name, timeout=timeout, **query).run()
    at.sidebar.text_input(key="learner.code").input(classroom.resume_code(token))
    return go_on(at)


def go_on(at: AppTest) -> AppTest:
    """Press the sidebar form's 'Go on as that learner'."""
    return next(b for b in at.sidebar.button if b.label == "Go on as that learner").click().run()


def learner_token(at: AppTest) -> str | None:
    """The learner this AppTest session answers as (what a browser's cookie keeps)."""
    return at.session_state["_rnnlab_learner"] if "_rnnlab_learner" in at.session_state else None
