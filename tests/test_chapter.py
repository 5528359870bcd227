"""AppTest: the chapter page (the app's first page): every act renders, ?act= is checked, Retrain live works."""
import pytest
from streamlit.testing.v1 import AppTest

from apptest_util import ROOT, page, rerun_until, shown
from conftest import corpus_path
from pages.chapter import ACTS
from ui.common import LABS


def chapter(act: str | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)  # the chapter is the app's default page
    if act is not None:
        at.query_params["act"] = act
    return at.run()


@pytest.mark.parametrize("act", list(ACTS))
def test_every_act_renders(act):
    at = chapter(str(act))
    assert not at.exception and not at.error
    assert ACTS[act] in at.header[0].value
    assert at.query_params["act"] == str(act)
    if act < 5 or corpus_path() is not None:
        assert at.caption, "each act's figure has a summary with its numbers"


def test_the_app_opens_on_act_one_with_numbers_the_text_agrees_with():
    at = chapter()
    assert "Act 1" in at.header[0].value
    one_step = [m for m in at.metric if m.label.startswith("One step ahead, test")][0].value
    assert f"one-step test error is {one_step}" in " ".join(shown(c) for c in at.caption)
    assert float([m for m in at.metric if m.label.startswith("One step ahead, training")][0].value) == \
        pytest.approx(0.050, abs=0.0005)


@pytest.mark.parametrize("bad", ["0", "6", "x", "1; drop", "[a](http://evil.example)"])
def test_a_bad_act_falls_back_with_a_warning(bad):
    at = chapter(bad)
    assert not at.exception
    assert "Act 1" in at.header[0].value
    assert any("Ignored the URL value act" in shown(w) for w in at.warning)
    assert all("](http" not in w.value for w in at.warning)   # shown as text, never as a link


def test_next_and_previous_walk_the_acts():
    at = chapter("1")
    for act in (2, 3, 4, 5):
        at.button(key="chapter.next.bottom").click().run()
        assert ACTS[act] in at.header[0].value and at.query_params["act"] == str(act)
    at.button(key="chapter.back.bottom").click().run()
    assert "Act 4" in at.header[0].value


def test_after_the_acts_links_every_lab():
    at = chapter("5")
    text = " ".join(m.value for m in at.markdown)
    for lab in LABS:
        assert lab.blurb in text


def test_retrain_live_finishes_and_updates_the_figure(corpus_file):
    at = page("chapter", act="4").run()   # the page alone: AppTest's app.py route drops button clicks
    assert any(shown(c).startswith("The stored run (seed 0)") for c in at.caption)
    at.number_input(key="chapter.seed").set_value(3).run()
    at.button(key="chapter.retrain").click().run()
    assert rerun_until(at, lambda a: any("Your run, seed 3 (finished" in shown(c) for c in a.caption), 60)
    assert not at.exception and not at.error
    summary = next(shown(c) for c in at.caption if "Your run" in shown(c))
    assert "to 1.1" in summary and at.table[0].value.index.tolist() == [0, 5, 10, 20, 40, 60]
    assert at.query_params["seed"] == "3"
    from ui.session import job_manager   # AppTest sessions share one id: leave no run for other pages' tests
    for job in list(job_manager().jobs.values()):
        job_manager().forget(job.id)


def test_act_four_without_the_corpus_still_shows_the_stored_run(monkeypatch, tmp_path):
    monkeypatch.setenv("RNNLAB_CORPUS", str(tmp_path / "missing.txt"))
    at = page("chapter", act="4").run()
    assert not at.exception
    assert any(shown(c).startswith("The stored run (seed 0)") for c in at.caption)
    assert at.button(key="chapter.retrain").disabled
    assert any("not available" in w.value for w in at.warning)


@pytest.mark.parametrize("act", ["1", "3", "4", "5"])
def test_hostile_values_in_each_act_fall_back_as_text(act):
    at = page("chapter", act=act, tau="1e309", h="[x](https://evil.example)", seed="-1", scale="nan").run()
    assert not at.exception and ACTS[int(act)] in at.header[0].value
    warnings = [w.value for w in at.warning]
    assert warnings and all("](https" not in w for w in warnings)
