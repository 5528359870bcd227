"""The teacher's tools (issue 42): scores out of what was assigned, each exercise's overview, the gradebook,
joining closed, rename, remove and reset, the teacher's key kept out of the address, the projector view with no
names, a sweep handed out in turn and read back as a chart, and a bad runs folder said in words."""
import csv
import io
import math
import re

import pytest

from apptest_util import as_learner, page
from core import classroom as C
from core.classroom import summary
from core.labs import Url
from core.runs.config import FORM_SETTINGS, SETTINGS
from core.runs.record import HistoryRow

FORM = {n: SETTINGS[n] for n in FORM_SETTINGS}


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("RNNLAB_RUNS_DIR", str(tmp_path))
    return tmp_path


def _first(correct: bool, at: float = 0.0) -> dict:
    return {"correct": correct, "at": at}


# --- the numbers (core.classroom.summary), each against a count done by hand -------------------------------

def test_a_score_is_out_of_the_assigned_exercises():
    firsts = {"a": _first(True), "b": _first(True), "c": _first(True), "x": _first(True), "y": _first(False)}
    every = ["a", "b", "c", "x", "y", "z"]
    assigned = summary.score(firsts, every, {"a", "b", "c"})
    assert (assigned.right, assigned.out_of, assigned.text()) == (3, 3, "100%")       # 3 of 3 assigned: 100%
    alone = summary.score(firsts, every)
    assert (alone.right, alone.out_of, alone.text()) == (4, 6, "67%")                 # 4 of all 6
    assert summary.score({"x": _first(True)}, every, {"a"}).right == 0                  # an unassigned answer
    with pytest.raises(ValueError):
        summary.score({}, [])


def test_each_exercise_overview_counts_answers_hints_and_the_median_time():
    first = {("Ana", "e1"): _first(True, 130.0), ("Ben", "e1"): _first(False, 200.0), ("Cy", "e1"): _first(True, 70.0),
             ("Ana", "e2"): _first(False, 10.0)}
    opened = {("Ana", "e1"): 100.0, ("Ben", "e1"): 100.0, ("Cy", "e1"): 60.0, ("Ana", "e2"): 50.0}   # e2 opened late
    hints = [("Ben", "e1"), ("Ben", "e1"), ("Cy", "e2")]
    rows = {r["exercise"]: r for r in summary.overview(["e1", "e2", "e3"], first, hints, opened, learners=4)}
    assert (rows["e1"]["answered"], rows["e1"]["right first time"]) == (2 + 1, 2)
    assert rows["e1"]["hint opened"] == 1 / 4 and rows["e2"]["hint opened"] == 1 / 4
    assert rows["e1"]["median seconds"] == 30.0                  # waits 30, 100 and 10 s: the median is 30
    assert rows["e2"]["median seconds"] is None                  # a view recorded after the answer is not a wait
    assert rows["e3"] == {"exercise": "e3", "answered": 0, "right first time": 0, "hint opened": 0.0,
                          "median seconds": None}


def test_the_gradebook_has_a_row_per_learner_and_a_mark_per_exercise():
    first = {("Ana", "e1"): _first(True), ("Ana", "e2"): _first(False), ("Ben", "e2"): _first(True)}
    rows = summary.gradebook(["Ana", "Ben", "Cy"], ["e1", "e2"], first)
    assert rows == [{"learner": "Ana", "e1": 1, "e2": 0, "total": 1, "out of": 2},
                    {"learner": "Ben", "e1": None, "e2": 1, "total": 1, "out of": 2},
                    {"learner": "Cy", "e1": None, "e2": None, "total": 0, "out of": 2}]


def _row(epoch: int, ppl: float) -> HistoryRow:
    return HistoryRow(epoch=epoch, step=epoch, train_ppl=ppl, val_ppl=ppl, val_bpb=0.0, val_ce=0.0, elapsed=1.0,
                      tokens_per_s=1.0)


class _Run:
    def __init__(self, learner, config, ppls, status="finished"):
        self.learner, self.config, self.status, self.name = learner, config, status, f"{learner}'s run"
        self.history = [_row(i + 1, p) for i, p in enumerate(ppls)]


def test_a_sweep_reads_as_final_perplexity_against_the_value():
    runs = [_Run("Ana", {"lr": 0.1, "cell": "gru"}, [20.0, 12.0]), _Run("Ben", {"lr": 2.0, "cell": "gru"}, [9.0]),
            _Run("Ana", {"lr": 1.0, "cell": "gru"}, [15.0, 8.0]), _Run("Cy", {"lr": 4.0, "cell": "gru"}, [])]
    assert summary.varying([r.config for r in runs]) == ["lr"]
    assert summary.sweep_points(runs, "lr") == [("Ana", 1.0, 8.0, False), ("Ben", 2.0, 9.0, False)]   # Cy: no curve
    assert summary.sweep_points(runs, "cell") == []


def test_a_diverged_run_is_drawn_and_written_as_diverged_not_at_the_weights_it_fell_back_to():
    """Issue 63: the default sweep makes lr 1 and 2 diverge; the chart plotted lr 2 at 27.91 (the untrained
    weights it fell back to), so it looked second best, and neither chart nor CSV said diverged."""
    from core.labs.classroom import export_csv, runs_summary, sweep_figure, sweep_summary
    runs = [_Run("Ana", {"lr": 0.1}, [20.0, 12.0]), _Run("Ben", {"lr": 2.0}, [27.91], "diverged"),
            _Run("Cy", {"lr": 4.0}, [], "diverged")]
    points = summary.sweep_points(runs, "lr")
    assert [(p.learner, p.diverged) for p in points] == [("Ana", False), ("Ben", True), ("Cy", True)]
    assert all(math.isnan(p.ppl) for p in points if p.diverged)
    fig = sweep_figure(points, "lr")
    assert list(fig.data[0].x) == [0.1] and 27.91 not in list(fig.data[0].y)        # no point for Ben
    assert {a.text for a in fig.layout.annotations} == {"Ben: diverged", "Cy: diverged"}
    assert sweep_summary(points, "lr").endswith("Ana 0.1: 12.00; Ben 2: diverged; Cy 4: diverged.")
    assert "Ben: lr 2.0 diverged after epoch 1" in runs_summary(runs[:2])
    rows = list(csv.DictReader(io.StringIO(export_csv([], runs).split("\r\n\r\n", 1)[-1].lstrip("\r\n"))))
    assert {(r["learner"], r["run ended"]) for r in rows} == {("Ana", "finished"), ("Ben", "diverged")}


def test_the_class_keeps_how_a_run_ended(root):
    info = C.create_class("Sweep")
    ben = C.join(info.join_code, "Ben")
    C.record_run(ben, "run_bbbbbbbb", "tiny #1", {"lr": 2.0})
    C.keep_history("run_bbbbbbbb", [_row(1, 27.91)], status="diverged")
    assert [(r.learner, r.status) for r in C.class_runs(info.id)] == [("Ben", "diverged")]


def test_answers_too_far_out_to_draw_are_named():
    assert summary.far_answers([0.04, 1e308, -5e7, 3.0], 0.0424) == [1, 2]
    assert summary.far_answers([2e7, 9e6], 10.0) == [0]        # the limit grows with the run's value


def test_a_sweep_link_is_checked_by_the_setting_it_sweeps():
    sweep = C.sweep.parse("lr: 0.1, 0.3,1 ,2,4", FORM)
    assert sweep.values == ("0.1", "0.3", "1", "2", "4") and sweep.text() == "lr:0.1,0.3,1,2,4"
    assert C.sweep.parse("cell:rnn,gru,lstm", FORM).values == ("rnn", "gru", "lstm")
    for bad, words in [("lr", "colon"), ("nope:1,2", "no setting"), ("lr:0.1,-1", "not a value"), ("lr:", "at least"),
                       ("lr:1,1", "once"), ("cell:rnn,transformer", "not a value")]:
        with pytest.raises(ValueError, match=words):
            C.sweep.parse(bad, FORM)


# --- the records ------------------------------------------------------------------------------------------

def test_a_sweep_is_handed_out_in_turn_and_kept(root):
    info = C.create_class("Sweep")
    values = ["0.1", "0.3", "1", "2", "4"]
    tokens = [C.join(info.join_code, f"L{i}") for i in range(6)]
    got = [C.hand_out(t, "lr:0.1,0.3,1,2,4", values) for t in tokens]
    assert got == [("0.1", 1), ("0.3", 2), ("1", 3), ("2", 4), ("4", 5), ("0.1", 6)]
    assert C.hand_out(tokens[2], "lr:0.1,0.3,1,2,4", values) == ("1", 3)          # again: the same value
    C.remove(info.id, "L0")
    late = C.join(info.join_code, "L9")
    assert C.hand_out(late, "lr:0.1,0.3,1,2,4", values)[0] == "0.1"                 # 5 hold a value: the 6th's


def test_closing_renaming_removing_and_resetting(root):
    info = C.create_class("Tools")
    ana = C.join(info.join_code, "Ana")
    C.join(info.join_code, "Ben")
    C.record_attempt(ana, "gf_regime", "stable", False, "exploding")
    before = C.version(info.id)
    C.set_open(info.id, False)
    assert C.version(info.id) != before
    with pytest.raises(ValueError, match="closed to new learners"):
        C.join(info.join_code, "Cy")
    C.set_open(info.id, True)
    with pytest.raises(ValueError, match="reads the same"):
        C.rename(info.id, "Ana", "BEN")
    assert C.rename(info.id, "Ana", "Ana K") == "Ana K"
    assert [w.name for w in C.roster(info.id)] == ["Ana K", "Ben"]
    assert [a["name"] for a in C.class_attempts(info.id)] == ["Ana K"]
    C.remove(info.id, "Ana K")
    assert [w.name for w in C.roster(info.id)] == ["Ben"] and C.class_attempts(info.id) == []
    assert len(C.attempts(ana)) == 1 and C.learner(ana).class_id is None      # her answers stay hers
    with pytest.raises(ValueError, match="No one in this class"):
        C.remove(info.id, "Ana K")
    assert C.reset(info.id) == 1 and C.roster(info.id) == []
    assert C.class_by_code(info.join_code) is not None


def test_the_version_changes_with_every_kind_of_change(root):
    info = C.create_class("Live")
    seen = [C.version(info.id)]
    ana = C.join(info.join_code, "Ana")
    seen.append(C.version(info.id))
    C.record_hint(ana, "gf_regime")
    seen.append(C.version(info.id))
    C.record_attempt(ana, "gf_regime", "stable", False, "exploding")
    seen.append(C.version(info.id))
    C.record_run(ana, "run_aaaaaaaa", "Ana's run", {"lr": 1.0})
    seen.append(C.version(info.id))
    C.keep_history("run_aaaaaaaa", [_row(1, 9.5)])
    seen.append(C.version(info.id))
    C.assign(info.id, ["gf_regime"])
    seen.append(C.version(info.id))
    assert len(set(seen)) == len(seen)
    assert C.version(info.id) == seen[-1]        # nothing changed: the same


def test_a_runs_folder_that_is_a_file_is_said_in_words(tmp_path, monkeypatch):
    bad = tmp_path / "not-a-folder"
    bad.write_text("x")
    monkeypatch.setenv("RNNLAB_RUNS_DIR", str(bad))
    with pytest.raises(ValueError, match="RNNLAB_RUNS_DIR") as err:
        C.create_class("Tuesday")
    assert str(tmp_path) not in str(err.value) and "Errno" not in str(err.value)
    for query in ({"join": "ABCDEFGH"}, {"teacher": "A" * 32}):
        at = page("classroom", **query).run()
        assert not at.exception
        assert "RNNLAB_RUNS_DIR" in _texts(at) and str(tmp_path) not in _texts(at)


# --- the teacher's view (AppTest) -------------------------------------------------------------------------

def _class_with_answers():
    info = C.create_class("Tuesday")
    ana, ben = C.join(info.join_code, "Ana Lovelace"), C.join(info.join_code, "Ben Zephyr")
    C.record_attempt(ana, "gf_thirty", 0.04, True, 0.0424)
    C.record_attempt(ben, "gf_thirty", 1e308, False, 0.0424)
    C.record_attempt(ana, "gf_regime", "stable", False, "exploding")
    return info, ana, ben


def _texts(at) -> str:
    parts = [e.value for kind in ("markdown", "caption", "header", "subheader", "title", "info", "error", "warning",
                                  "success", "code") for e in getattr(at, kind)]
    return "\n".join(str(p) for p in parts).replace("\\", "")     # as read: without Markdown's escapes


def test_the_teachers_key_leaves_the_address_and_the_view_stays(root):
    info, _, _ = _class_with_answers()
    at = page("classroom", teacher=info.teacher_token).run()
    assert not at.exception
    assert Url.TEACHER not in at.query_params and at.query_params[Url.JOIN] == info.join_code
    assert any("Your class" in h.value for h in at.header)
    at.run()                                                        # a rerun in the session: still the teacher
    assert any("Your class" in h.value for h in at.header)
    assert info.teacher_token in _texts(at)                         # shown once, in the key's expander, to copy
    stranger = page("classroom", join=info.join_code).run()        # the same address elsewhere: the join form
    assert not any("Your class" in h.value for h in stranger.header)
    assert any(s.value.startswith("Join") for s in stranger.subheader)


def test_the_roster_scores_out_of_the_assigned_and_lists_far_answers(root):
    info, _, _ = _class_with_answers()
    C.assign(info.id, ["gf_thirty", "gf_regime"])
    at = page("classroom", teacher=info.teacher_token, shown="gf_thirty").run()
    roster = at.dataframe[0].value
    ana = roster[roster["learner"] == "Ana Lovelace"].iloc[0]
    assert (ana["right first time"], ana["out of"], ana["score"]) == (1, 2, "50%")
    overview = at.dataframe[1].value
    assert list(overview["answered"]) == [2, 1] and len(overview) == 2        # the assigned ones only
    assert "Too far out to draw (1): Ben Zephyr 1e+308" in _texts(at)


def test_the_projector_view_shows_no_names_and_no_key(root):
    info, _, _ = _class_with_answers()
    at = page("classroom", teacher=info.teacher_token, shown="gf_thirty").run()
    at.button(key="class.present").click().run()
    assert at.query_params[Url.PRESENT] == "1"
    text = _texts(at)
    assert info.join_code in text and "2 of 2 learners answered" in text
    assert "Ana" not in text and "Ben" not in text and info.teacher_token not in text
    assert "1e+308" in text                                         # the far answer, listed without its name
    assert not at.dataframe                                          # no roster


def test_the_teacher_renames_closes_and_downloads_a_gradebook(root):
    info, _, _ = _class_with_answers()
    at = page("classroom", teacher=info.teacher_token).run()
    at.selectbox(key="class.who").set_value("Ben Zephyr").run()
    at.text_input(key="class.new_name").input("Ben Z").run()
    at.button(key="class.rename").click().run()
    assert not at.exception
    assert [w.name for w in C.roster(info.id)] == ["Ana Lovelace", "Ben Z"]
    at.toggle(key="class.open.True").set_value(False).run()
    assert C.class_by_code(info.join_code).open is False
    from core.labs.classroom import gradebook_csv
    rows = list(csv.reader(io.StringIO(gradebook_csv(info, C.class_attempts(info.id), set()))))
    assert rows[0][0] == "learner" and rows[0][-2:] == ["total", "out of"]
    ana = dict(zip(rows[0], rows[1]))
    assert (ana["gf_thirty"], ana["gf_regime"], ana["total"], ana["out of"]) == ("1", "0", "1", str(len(rows[0]) - 3))
    assert dict(zip(rows[0], rows[2]))["ch_forcing"] == ""          # not answered: empty, not 0


def test_a_learner_is_handed_their_sweep_value_on_the_training_page(root):
    info = C.create_class("Sweep")
    tokens = [C.join(info.join_code, name) for name in ("Ana", "Ben")]
    values = []
    for token in tokens:
        at = as_learner("training", token, timeout=120, sweep="lr:0.1,0.3,1")
        assert not at.exception
        values.append(at.query_params["lr"])
        assert "in turn" in _texts(at) and f"fixes: Learning rate {values[-1]}" in _texts(at), _texts(at)
    assert values == ["0.1", "0.3"]


def test_a_learners_own_score_is_out_of_what_the_class_was_assigned(root):
    from apptest_util import metric
    info, ana, _ = _class_with_answers()          # Ana: gf_thirty right, gf_regime wrong
    C.assign(info.id, ["gf_thirty"])
    at = as_learner("exercises", ana)
    assert not at.exception
    assert metric(at, "Score") == "100%" and "assigned 1 exercise (" in _texts(at)
    table = at.dataframe[0].value
    assert list(table[table["assigned"] == "yes"].index) == [list(table["question"]).index(
        next(q for q in table["question"] if q.startswith("A linear RNN whose W_hh is orthogonal")))]


def test_the_teacher_assigns_removes_and_resets_from_the_view(root):
    info, _, _ = _class_with_answers()
    at = page("classroom", teacher=info.teacher_token).run()
    [m for m in at.multiselect if m.label.startswith("Assigned exercises")][0].set_value(["gf_thirty"]).run()
    at.button(key="class.assign.save").click().run()
    assert not at.exception and C.assigned(info.id) == {"gf_thirty"}
    assert "/gradient_flow?" in _texts(at) and "ex=gf_thirty" in _texts(at)          # its link to hand out
    at.selectbox(key="class.who").set_value("Ana Lovelace").run()
    assert at.button(key="class.remove").disabled                                      # not without the tick
    at.checkbox(key="class.remove.sure").check().run()
    at.button(key="class.remove").click().run()
    assert [w.name for w in C.roster(info.id)] == ["Ben Zephyr"]
    at.checkbox(key="class.reset.sure").check().run()
    at.button(key="class.reset").click().run()
    assert not at.exception and C.roster(info.id) == []


def test_a_sweep_in_the_address_of_another_lab_fixes_nothing(root):
    at = page("forecasting", unknown={Url.SWEEP.value: "tau:1,2"}).run()
    assert not at.exception
    assert any(s.label.startswith("Window") for s in at.slider)                 # tau is still drawn
    bad = page("training", timeout=120, unknown={Url.SWEEP.value: "lr:0.1,oops"}).run()
    assert not bad.exception and "sweep cannot be used" in _texts(bad)
    assert "fixes: Learning rate" not in _texts(bad)                             # nothing fixed


def test_a_class_s_training_limits_are_stated_kept_and_the_teacher_stops_a_run(root):
    """Issue 63: one learner's /training?preset=tiny&epochs=10000 held the only CPU slot and the teacher could not
    stop it. The teacher sets limits (epochs a run, runs at once); the Training page states and keeps them; the
    teacher's view lists the runs going, each with a Stop that stops it (what it learnt is kept)."""
    from apptest_util import rerun_until
    from core.runs import store, tasks
    info = C.create_class("Limits")
    ana = C.join(info.join_code, "Ana")
    C.set_limits(info.id, C.Limits(epochs=50, per_learner=1, per_class=1))
    with pytest.raises(ValueError, match="at least 1"):
        C.Limits(epochs=0)
    at = as_learner("training", ana, timeout=120, preset="tiny", epochs="10000")
    assert "Your class's training limits, set by your teacher: at most 50 epochs a run; one run of yours at a " \
           "time; the whole class, 1 run at once." in _texts(at), _texts(at)
    at.button(key="tr.train").click().run()
    assert "Your class allows at most 50 epochs a run" in _texts(at) and Url.RUN not in at.query_params
    C.set_limits(info.id, C.Limits(epochs=10_000, per_learner=1, per_class=1))
    at = as_learner("training", ana, timeout=120, preset="tiny", epochs="10000")
    at.button(key="tr.train").click().run()
    key = at.query_params[Url.RUN]                      # Ana's long run trains (or waits for the slot)
    from core.labs.classroom import active_runs     # Ben's Train (AppTest's sessions share one id, so by hand):
    going = active_runs(info.id)
    assert [r.learner for r in going] == ["Ana"] and C.class_limits(info.id).refusal(3, 0, len(going)) == (
        "Your class has 1 run training or waiting, the most your teacher allows at once (1): try again when one "
        "finishes.")
    assert C.Limits(per_learner=2).refusal(3, 2, 0).startswith("Your class allows 2 runs of yours at a time")
    teacher = page("classroom", teacher=info.teacher_token, timeout=120).run()
    assert "Training or waiting now: 1" in _texts(teacher) and "Ana: tiny #1" in _texts(teacher)
    teacher.button(key=f"class.stop.{key}").click().run()
    assert rerun_until(teacher, lambda t: tasks.read_live(key).status not in ("queued", "starting", "running"), 120)
    assert str(tasks.read_live(key).status) == "stopped" and not teacher.exception
    assert rerun_until(at, lambda a: any(b.label == "Delete" for b in a.button), 60)
    [b for b in at.button if b.label == "Delete"][0].click().run()   # AppTest's sessions share one id: tidy up
    assert not at.exception and not store.run_folder(key).exists()


def test_the_teachers_view_and_the_projector_in_chinese_show_no_english_sentence(root):
    """Issue 66: the teacher's view and the projector in Chinese; names, codes and keys stay as they are; the CSVs'
    headers are the language's too."""
    from test_i18n import CJK, english_words, page_texts
    from core.i18n import speaking
    from core.labs import classroom as reports
    info, _, _ = _class_with_answers()
    at = page("classroom", teacher=info.teacher_token, shown="gf_thirty", unknown={"lang": "zh"}).run()
    assert not at.exception and any("你的班级" in h.value for h in at.header)
    names = ("Ana", "Lovelace", "Ben", "Zephyr", "Tuesday", info.join_code, info.teacher_token, "/classroom")

    def english(text: str) -> list:
        for n in names:
            text = text.replace(n, " ")
        return english_words(re.sub(r"[A-Z0-9]{4}-[A-Z0-9]{4}", " ", text))   # a resume code
    texts = page_texts(at) + [str(c) for d in at.dataframe for c in d.value.columns]
    assert not {t[:80]: english(t) for t in texts if english(t)}
    with speaking("zh"):   # AppTest formats the exercise picker's value in the test's own thread: in its language
        at.button(key="class.present").click().run()
    shown = page_texts(at)
    assert any(CJK.search(t) for t in shown) and not {t[:80]: english(t) for t in shown if english(t)}
    with speaking("zh"):
        header = reports.gradebook_csv(info, C.class_attempts(info.id), set()).splitlines()[0]
    assert header.startswith("学习者") and CJK.search(header.split(",")[-1])
