"""Exercises that check themselves: every grader, the self-check command, and the labs' Exercises sections."""
import json

import pytest

from core.labs import Url

from apptest_util import ROOT, learner_token, page, shown
from core.exercises import cli, types as core_ex
from core.exercises.bank import BANK
from conftest import corpus_path
from core.labs import LABS, PAGES


def test_the_bank_has_enough_exercises_everywhere():
    assert len(BANK) >= 15
    for lab in [lab.key for lab in LABS] + ["chapter"]:
        assert len(PAGES[lab].exercises) >= 2, lab             # the registry lists each page's exercises
    assert {"ch_held_out", "ch_forcing"} <= set(BANK)          # Act 4's passage run and teacher forcing
    for ex in BANK.values():
        assert ex.question and ex.hint and ex.kind in (core_ex.CHOICE, core_ex.NUMBER)
        assert ex.kind == core_ex.NUMBER or len(ex.options) >= 2


@pytest.mark.parametrize("key", [k for k, e in BANK.items() if not e.needs_corpus])
def test_every_grader_accepts_the_computed_answer_and_rejects_a_wrong_one(key):
    ex = BANK[key]
    sol = ex.run()
    assert sol.explanation and (ex.kind != core_ex.CHOICE or sol.answer in ex.options)
    assert core_ex.grade(ex, sol.answer, sol).correct
    assert not core_ex.grade(ex, core_ex.wrong_answer(ex, sol.answer), sol).correct


@pytest.mark.parametrize("key", [k for k, e in BANK.items() if e.needs_corpus])
def test_the_corpus_graders_too(key, corpus_file):
    ex = BANK[key]
    sol = ex.run()
    assert core_ex.grade(ex, sol.answer, sol).correct
    assert not core_ex.grade(ex, core_ex.wrong_answer(ex, sol.answer), sol).correct


def test_a_number_on_the_tolerance_boundary():
    ex = BANK["gf_thirty"]                       # 5% relative
    sol = ex.run()
    assert core_ex.grade(ex, sol.answer * 1.049, sol).correct
    assert not core_ex.grade(ex, sol.answer * 1.051, sol).correct
    exact = BANK["cell_state"]                   # a count: exactly (3.5 is not a count of numbers)
    s = exact.run()
    assert core_ex.grade(exact, s.answer, s).correct and not core_ex.grade(exact, s.answer - 0.5, s).correct


def test_the_answer_is_computed_from_the_settings_not_stored():
    assert BANK["fc_horizon"].run({"k": 64}).answer != BANK["fc_horizon"].run({"k": 2}).answer
    assert BANK["gf_thirty"].run({"scale": 0.5}).answer == pytest.approx(0.5 ** 30)
    assert BANK["tok_rnn"].run({"h": 2}).answer == 10_000 * 256 + 256 * 2 + 4 + 2 + 2 * 10_000 + 10_000
    assert BANK["cell_state"].run({"h": 7}).answer == 7


def test_answers_are_checked():
    with pytest.raises(ValueError, match="Pick one"):
        core_ex.grade(BANK["gf_regime"], "sideways")
    with pytest.raises(ValueError, match="number"):
        core_ex.grade(BANK["gf_thirty"], "lots")
    with pytest.raises(ValueError, match="finite"):
        core_ex.grade(BANK["gf_thirty"], float("nan"))


def test_the_self_check_command(capsys):
    assert cli.main([]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    n = len(BANK) if corpus_path() is not None else sum(not e.needs_corpus for e in BANK.values())
    assert last.startswith(f"{n} passed, 0 failed")


def test_progress_restore_is_checked():
    from ui.exercises import restore
    good = json.dumps({"format": "rnnlab-exercises/1",
                       "answers": {"gf_regime": {"answer": "exploding", "correct": True, "at": 1}}}).encode()
    into = {}
    assert restore(good, into) == 1 and into["gf_regime"]["answer"] == "exploding"
    for bad, why in ((b"\xff", "not a progress"), (b"[]", "not an RNN Lab"),
                     (json.dumps({"format": "rnnlab-exercises/1", "answers": {"zz": {}}}).encode(), "does not have"),
                     (json.dumps({"format": "rnnlab-exercises/1", "answers": {"gf_regime": {"answer": "up",
                                                                                          "correct": True}}}).encode(),
                      "Pick one"), (b"x" * 200_001, "far smaller"),
                     (json.dumps({"format": "rnnlab-exercises/1", "answers": {"gf_regime": {
                         "answer": "exploding", "correct": True, "at": [1]}}}).encode(), "damaged")):
        with pytest.raises(ValueError, match=why):
            restore(bad, {})


def test_a_hostile_progress_file_gets_a_clear_message():
    """Deep nesting, integers too long for a float or for Python's int limit, a byte-order mark, a name that
    would render as Markdown (escaped once, by the page)."""
    from ui.exercises import restore
    answer = '{"format": "rnnlab-exercises/1", "answers": {"gf_thirty": {"answer": %s, "correct": true, "at": 1}}}'
    for bad, why in ((b"[" * 40_000 + b"]" * 40_000, "not a progress"),
                     ((answer % ("9" * 400)).encode(), "Type a number"),
                     ((answer % ("9" * 5_000)).encode(), "not a progress"),
                     (b'{"format": "rnnlab-exercises/1", "answers": {"[Log in](https://e.x)": {}}}',
                      r"exercise '\[Log in\]\(https://e\.x\)' this version")):
        with pytest.raises(ValueError, match=why):
            restore(bad, {})
    good = json.dumps({"format": "rnnlab-exercises/1",
                       "answers": {"gf_regime": {"answer": "exploding", "correct": True, "at": 1}}})
    assert restore(good.encode("utf-8-sig"), {}) == 1    # a byte-order mark first, as some editors save


def test_answer_then_check_in_a_lab():
    from core import classroom
    at = page("gradient_flow").run()
    at.toggle(key="ex.gf_regime.hint").set_value(True).run()
    assert any(m.value.startswith("Compare") or "ρ" in m.value for m in at.markdown)
    at.radio(key="ex.gf_regime.answer").set_value("exploding").run()
    at.button(key="ex.gf_regime.check").click().run()
    assert not at.exception
    assert any("You answered exploding. Right." in s.value for s in at.success)
    me = learner_token(at)      # the first Check gave this learner a code: their progress is on the server
    assert Url.LEARNER not in at.query_params
    kept = classroom.attempts(me)
    assert [(a["exercise"], a["answer"], a["correct"], a["hint_seen"]) for a in kept] == [
        ("gf_regime", "exploding", True, True)]
    at.toggle(key="ex.gf_regime.other").set_value(True).run()
    assert any("the answer is **vanishing**" in m.value for m in at.markdown)


def test_a_wrong_number_is_graded_from_the_run():
    at = page("gradient_flow").run()
    at.number_input(key="ex.gf_thirty.answer").set_value(0.5).run()
    at.button(key="ex.gf_thirty.check").click().run()
    assert any("Not quite: the run says 0.04239" in e.value for e in at.error)


def test_an_assignment_link_holds_the_figures_and_fixes_controls():
    at = page("gradient_flow", exercise="gf_regime", hide="scale,tanh", scale="1.5", use_tanh="0").run()
    assert not at.exception
    assert not at.get("plotly_chart") and any("figures appear after" in i.value for i in at.info)
    labels = [s.label for s in at.select_slider] + [t.label for t in at.toggle]
    assert not any(lab.startswith("Weight scale") or lab == "Through tanh" for lab in labels)
    at.radio(key="ex.gf_regime.answer").set_value("stable").run()
    at.button(key="ex.gf_regime.check").click().run()
    assert at.get("plotly_chart") and any("Not quite" in e.value for e in at.error)
    assert at.query_params["scale"] == "1.5"


def test_a_stale_assignment_link_warns_and_shows_the_lab():
    at = page("forecasting", exercise="gone_exercise").run()
    assert any("does not have" in w.value for w in at.warning) and at.get("plotly_chart")


def test_the_overview_page_lists_answers_and_offers_downloads():
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["_rnnlab_exercise_progress"] = {"gf_regime": {"answer": "exploding", "correct": True, "at": 1}}
    at.run()
    at.switch_page("pages/exercises.py").run()
    assert not at.exception
    table = at.dataframe[0].value
    assert len(table) == len(BANK) and (table["result"] == "right").sum() == 1
    assert [m.value for m in at.metric][:2] == [f"1 of {len(BANK)}", "1"]   # no learner code: the tab's answers
    assert "/gradient_flow?" in table.loc[table["question"].str.startswith("Weight scale 1.5"), "open"].iloc[0]
    assert any(f"{Url.EXERCISE}=" in c.value for c in at.code)


def test_the_training_lab_honours_hide_and_keeps_the_link_s_values():
    """Issue 26: the Training lab ignored hide; a class sweep hands each learner a learning rate by link."""
    at = page("training", preset="tiny", lr="0.002", epochs="2", hide="lr,epochs").run()
    assert not at.exception
    labels = [n.label for n in at.number_input]
    assert "Learning rate" not in labels and "Epochs" not in labels and "Hidden units" in labels
    assert any("fixes: Learning rate 0.002, Epochs 2" in shown(c) for c in at.caption)
    assert at.session_state["tr.tiny.lr"] == 0.002


def test_answers_are_kept_on_disk_for_every_process_and_recomputed_when_core_changes(tmp_path, monkeypatch):
    """Issue 29: a check whose answer the server has computed does not compute it again (another web process or a
    restart reads it from the store's folder); a change to core/ computes it afresh; cleanup leaves it alone."""
    from core.exercises import cache as exercise_cache
    from core.runs import store
    ex = BANK["gf_thirty"]
    first = exercise_cache.solve(ex, root=tmp_path)
    calls = []
    monkeypatch.setattr(type(ex), "run", lambda self, s=None: calls.append(s) or first)
    again = exercise_cache.solve(ex, root=tmp_path)
    assert calls == [] and again == first                          # read back, equal in every field
    exercise_cache.solve(ex, {"scale": 0.5}, root=tmp_path)
    assert len(calls) == 1                                         # other settings: computed
    monkeypatch.setattr(exercise_cache, "code_version", lambda: "another core")
    exercise_cache.solve(ex, root=tmp_path)
    assert len(calls) == 2                                         # another core: computed afresh
    (tmp_path / "classroom.sqlite3").write_text("x")
    assert store.cleanup(0, 0, root=tmp_path, recent_s=0) == []
    assert (tmp_path / exercise_cache.FOLDER).is_dir() and (tmp_path / "classroom.sqlite3").exists()


def test_every_stored_answer_reads_back_as_it_was_computed(tmp_path):
    from core.exercises import cache as exercise_cache
    for ex in BANK.values():
        if ex.needs_corpus and corpus_path() is None:
            continue
        sol = ex.run()
        assert exercise_cache.from_json(exercise_cache.to_json(sol)) == sol, ex.key


def test_open_it_on_its_own_sets_the_lab_up_on_the_page_the_learner_is_on():
    """A link to the page one is on changes nothing in Streamlit, so the card's button sets the address itself:
    the exercise's settings replace the ones the learner had moved, and the figures wait for an answer."""
    at = page("rnn_cell").run()
    at.slider(key="rnn_cell.h").set_value(6).run()
    at.button(key="ex.cell_state.open").click().run()
    assert not at.exception
    assert at.query_params[Url.EXERCISE] == "cell_state" and at.query_params["word"] == "unfathomable"
    assert at.query_params["h"] == "4" and any("figures appear after that" in i.value for i in at.info)
    at.number_input(key="ex.cell_state.answer").set_value(4).run()
    at.button(key="ex.cell_state.check").click().run()
    assert at.slider(key="rnn_cell.h").value == 4                    # the exercise's h, not the 6 the learner had
