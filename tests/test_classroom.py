"""The classroom (issue 26): classes without accounts in SQLite, progress under a learner's token that survives
a reload, first attempts that count, restores that regrade, and the teacher's view."""
import json
import re
import sqlite3
import threading
from contextlib import closing

import pytest

from apptest_util import ROOT, as_learner, go_on, learner_token, page
from core import classroom as C
from core.labs import Url, by_name

SHOWN = by_name("classroom", "shown").key   # the teacher's chosen exercise in the address


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("RNNLAB_RUNS_DIR", str(tmp_path))
    return tmp_path


def test_a_new_database_gets_the_whole_schema_once_even_from_two_threads_at_once(root):
    errors = []

    def open_it():
        try:
            C.connect(root).close()
        except Exception as exc:   # noqa: BLE001 - any failure is the test's failure
            errors.append(exc)
    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    conn = sqlite3.connect(root / C.DB_NAME)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(C.MIGRATIONS)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"classes", "learners", "attempts", "hints", "runs"} <= tables


def test_a_database_from_a_newer_version_is_refused_clearly(root):
    conn = sqlite3.connect(root / C.DB_NAME)
    conn.execute(f"PRAGMA user_version = {len(C.MIGRATIONS) + 1}")
    conn.close()
    with pytest.raises(ValueError, match="newer RNN Lab"):
        C.connect(root)


def test_an_unwritable_folder_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ValueError, match="RNNLAB_RUNS_DIR"):
        C.connect(blocker / "runs")


def test_names_codes_and_tokens_are_checked(root):
    for bad, why in (("", "Type a"), ("   ", "Type a"), ("x" * 41, "at most 40"), ("a\x00b", "control"), (3, "Type")):
        with pytest.raises(ValueError, match=why):
            C.check_name(bad)
    assert C.check_name("  Ana   María ") == "Ana María"
    info = C.create_class("Tuesday")
    assert C.normal_code(info.join_code.lower()[:4] + "-" + info.join_code[4:]) == info.join_code
    assert C.class_by_code("0OIL0OIL") is None and C.class_by_code("'; DROP TABLE classes; --") is None
    assert C.class_by_teacher("../../etc/passwd") is None and C.learner("x") is None
    with pytest.raises(ValueError, match="No class has that code"):
        C.join("ABCDEFGH", "Ana")


def test_joining_keeps_a_learner_s_answers_and_names_are_unique_in_a_class(root):
    info = C.create_class("Tuesday")
    alone = C.learner_alone()
    C.record_attempt(alone, "gf_regime", "stable", False, "vanishing")
    assert C.join(info.join_code, "Ana", token=alone) == alone
    assert C.learner(alone).class_name == "Tuesday" and C.progress(alone)["gf_regime"]["answer"] == "stable"
    with pytest.raises(ValueError, match="already uses the name"):
        C.join(info.join_code, "Ana")
    with pytest.raises(ValueError, match="already in Tuesday"):
        C.join(info.join_code, "Ana B", token=alone)
    other = C.create_class("Wednesday")
    ben = C.join(other.join_code, "Ben")
    assert [w.name for w in C.roster(info.id)] == ["Ana"] and [w.name for w in C.roster(other.id)] == ["Ben"]
    assert C.class_attempts(other.id) == []          # one class never sees another's answers


def test_a_look_alike_of_a_name_in_the_class_is_refused(root):
    """Issue 42: names are compared as they read (NFKC, case folded, look-alike letters as Latin ones), so nobody
    joins as a copy of a classmate; names that only look different are fine, and emoji sequences are names."""
    info = C.create_class("Tuesday")
    C.join(info.join_code, "WS One")
    for twin in ("ws one", "WЅ One", "ＷＳ Ｏｎｅ", "WS 0ne", "Ws ОnЕ"):
        with pytest.raises(ValueError, match="already called 'WS One', which reads the same"):
            C.join(info.join_code, twin)
    C.join(info.join_code, "AIex")            # a capital I: it reads as Alex ...
    with pytest.raises(ValueError, match="reads the same"):
        C.join(info.join_code, "Alex")         # ... so Alex is taken
    for fine in ("WS Two", "Ana María", "Ana Maria", "👩\u200d🔬 Ana", "👩\u200d🔬 Ben", "🏴\U000e0067\U000e0062\U000e007f Cy"):
        C.join(info.join_code, fine)
    assert len(C.roster(info.id)) == 8
    for bad, why in (("\u202eenO SW", "U\\+202E"), ("\u200d", "U\\+200D"), ("Ana\u200bBen", "U\\+200B")):
        with pytest.raises(ValueError, match=why):
            C.join(info.join_code, bad)
    other = C.create_class("Wednesday")
    C.join(other.join_code, "ws one")          # another class may have its own WS One


def test_names_that_hide_a_character_or_show_nothing_or_read_as_a_classmate_s_are_refused(root):
    """Issue 63: 'Ada' plus an invisible Hangul filler or a braille blank, a Lisu or Cherokee 'A', and names of
    invisible letters alone all passed. Now: nothing invisible outside an emoji sequence or a script's joiner,
    something visible, and look-alikes by the TS 39 skeleton of the confusables data."""
    info = C.create_class("Tuesday")
    C.join(info.join_code, "Ada")
    for hidden in ("Ada\u3164", "Ada\u2800", "Ada\u115f", "Ada\uffa0", "A\u00adda", "Ada\u180e", "\u3164",
                   "\u2800\u2800", "Ada\u200c", "Ada\U000e0041"):
        with pytest.raises(ValueError, match=r"cannot be seen or that control the text \(here U\+"):
            C.join(info.join_code, hidden)
    for twin in ("\ua4eeda", "\u13aada", "ADA", "\u0410da", "\uff21da"):     # Lisu, Cherokee, capitals, Cyrillic, wide
        with pytest.raises(ValueError, match="reads the same as"):
            C.join(info.join_code, twin)
    for nothing in ("...", "- -", "\u0301"):
        with pytest.raises(ValueError, match="can be seen: at least one letter"):
            C.join(info.join_code, nothing)
    for fine in ("Ana", "Adam", "\u0646\u0631\u06af\u0633\u200c\u062e\u0627\u0646\u0645", "\u2764\ufe0f Bo",
                 "\u674e\u534e"):
        C.join(info.join_code, fine)
    with pytest.raises(ValueError, match="reads the same as"):
        C.rename(info.id, "Ana", "\u13aada")                          # a teacher's rename is checked the same way


def test_every_attempt_is_kept_and_the_first_counts(root):
    me = C.learner_alone()
    C.record_attempt(me, "gf_thirty", 0.5, False, 0.0424)
    C.record_hint(me, "gf_thirty")
    C.record_hint(me, "gf_thirty")                   # opening it twice is one opening
    C.record_attempt(me, "gf_thirty", 0.0424, True, 0.0424)
    first = C.progress(me)["gf_thirty"]
    assert (first["answer"], first["correct"], first["tries"]) == (0.5, False, 2)
    assert (first["latest"], first["latest_correct"]) == (0.0424, True)
    tries = C.attempts(me)
    assert [(a["hint_seen"], a["after_solution"]) for a in tries] == [(False, False), (True, True)]
    with pytest.raises(ValueError, match="finite"):
        C.record_attempt(me, "gf_thirty", float("nan"), False, 0.0424)


def _learner_page(name, token, **query):
    """A new session of the learner on another device (no cookie there): they type their resume code."""
    return as_learner(name, token, **query)


def test_a_learner_joins_answers_twice_reloads_and_the_teacher_sees_the_first_attempt(root):
    info = C.create_class("Tuesday")
    at = page("classroom", join=info.join_code).run()
    [t for t in at.text_input if t.label.startswith("Your name")][0].input("Ana")
    [b for b in at.button if b.label == "Join"][0].click().run()
    assert not at.exception
    token = learner_token(at)
    assert C.learner(token).name == "Ana" and Url.LEARNER not in at.query_params
    lab = _learner_page("gradient_flow", token)
    lab.radio(key="ex.gf_regime.answer").set_value("stable").run()
    lab.button(key="ex.gf_regime.check").click().run()
    lab.radio(key="ex.gf_regime.answer").set_value("exploding").run()
    lab.button(key="ex.gf_regime.check").click().run()
    assert any("You answered exploding. Right." in s.value for s in lab.success)
    assert any("first answer, the one your score counts: stable" in c.value for c in lab.caption)
    again = _learner_page("gradient_flow", token)     # a reload: a new session with the same address
    assert any("You answered exploding" in s.value for s in again.success)
    teacher = page("classroom", teacher=info.teacher_token, shown="gf_regime").run()
    assert not teacher.exception
    roster = teacher.dataframe[0].value
    row = roster[roster["learner"] == "Ana"].iloc[0]
    assert (row["answered"], row["right first time"], row["attempts"]) == (1, 0, 2)
    chart = next(c for c in teacher.get("plotly_chart") if "first answer" in c.proto.spec)
    assert "1 of 1 learners answered; 0 right on their first attempt" in chart.proto.alt
    assert "The run's answer: exploding" in chart.proto.alt


def test_no_address_carries_a_learner_s_key_and_one_from_before_is_dropped_unread(root):
    """Issue 63: an address once carried the learner's key (me=), and one click on "Switch to Alice" made anyone
    Alice. Now no address has it: a page never writes it, and an old address's code is dropped without being read
    (Ben stays Ben, a browser without a learner stays nobody's, and Ada's answers are untouched)."""
    info = C.create_class("Tuesday")
    ada, ben = C.join(info.join_code, "Ada"), C.join(info.join_code, "Ben")
    C.record_attempt(ada, "gf_thirty", 0.0424, True, 0.0424)
    fresh = page("gradient_flow", learner=ada).run()    # an old address copied from Ada's address bar
    assert Url.LEARNER not in fresh.query_params and learner_token(fresh) is None
    assert any("Addresses no longer carry one" in i.value for i in fresh.info), [i.value for i in fresh.info]
    assert not [b for b in fresh.button if "Ada" in b.label] and "Ada" not in str([c.value for c in fresh.caption])
    fresh.radio(key="ex.gf_regime.answer").set_value("stable").run()
    fresh.button(key="ex.gf_regime.check").click().run()
    mine = learner_token(fresh)
    assert mine not in (ada, ben) and "gf_regime" not in C.progress(ada) and Url.LEARNER not in fresh.query_params
    lab = _learner_page("gradient_flow", ben)
    assert learner_token(lab) == ben and Url.LEARNER not in lab.query_params
    lab.query_params[Url.LEARNER] = ada                 # the old address, in Ben's session
    lab.run()
    assert learner_token(lab) == ben and Url.LEARNER not in lab.query_params
    lab.radio(key="ex.gf_regime.answer").set_value("exploding").run()
    lab.button(key="ex.gf_regime.check").click().run()
    assert "gf_regime" in C.progress(ben) and "gf_regime" not in C.progress(ada) and not lab.exception
    assert C.progress(ada)["gf_thirty"]["tries"] == 1


def test_a_resume_code_moves_a_learner_and_the_teacher_can_renew_it(root):
    """Another device is reached by typing the resume code the sidebar shows; a wrong code is refused in words and
    a session may get only so many wrong; the teacher reads a learner's code and renews it (the old one stops)."""
    from core.classroom import resume
    info = C.create_class("Tuesday")
    ada = C.join(info.join_code, "Ada")
    code = C.resume_code(ada)
    assert C.learner(ada).resume == code and C.by_resume(code) == ada
    assert C.by_resume(resume.shown(code).lower()) == ada and C.by_resume(" " + resume.shown(code)) == ada
    assert C.class_resume_codes(info.id) == {"Ada": resume.shown(code)}
    at = _learner_page("exercises", ada)
    assert learner_token(at) == ada and any(resume.shown(code) in c.value for c in at.sidebar.caption)
    renewed = C.new_resume_code(info.id, "Ada")
    assert renewed != resume.shown(code) and C.by_resume(code) is None and C.by_resume(renewed) == ada
    other = page("exercises").run()
    other.sidebar.text_input(key="learner.code").input(code)          # the old code, after the teacher renewed it
    other = go_on(other)
    assert learner_token(other) is None and any("No learner has that resume code" in e.value for e in other.error)
    for _ in range(12):
        other.sidebar.text_input(key="learner.code").input("ZZZZ-ZZZZ")
        other = go_on(other)
    other.sidebar.text_input(key="learner.code").input(renewed)       # right, but after too many wrong ones
    other = go_on(other)
    assert learner_token(other) is None and any("Too many codes" in e.value for e in other.error)
    with pytest.raises(ValueError, match="No one in this class"):
        C.new_resume_code(info.id, "Nobody")
    alone = C.learner_alone()
    assert C.by_resume(C.resume_code(alone)) == alone and C.by_resume("not a code") is None


def test_a_learner_from_before_resume_codes_gets_one(root):
    """A database from before migration 4: its learners have no code until they open a page (then one is given);
    the teacher's list says so meanwhile."""
    from core.classroom import resume
    info = C.create_class("Old")
    ada = C.join(info.join_code, "Ada")
    with closing(C.connect()) as conn, conn:
        conn.execute("UPDATE learners SET resume = NULL")
    assert C.class_resume_codes(info.id) == {"Ada": ""}
    at = page("gradient_flow")
    at.session_state["_rnnlab_learner"] = ada            # the browser's cookie found her (AppTest has no cookies)
    at.run()
    code = C.learner(ada).resume
    assert code and any(resume.shown(code) in c.value for c in at.sidebar.caption) and C.resume_code(ada) == code
    assert C.class_resume_codes(info.id) == {"Ada": resume.shown(code)} and not at.exception


def test_a_forged_restore_is_regraded_and_cannot_raise_a_score(root):
    from ui.exercises import restore
    forged = json.dumps({"format": "rnnlab-exercises/1", "answers": {
        "gf_regime": {"answer": "stable", "correct": True, "at": 1},
        "gf_thirty": {"answer": 123.0, "correct": True, "at": 1}}}).encode()
    into = {}
    assert restore(forged, into) == 2
    assert into["gf_regime"]["correct"] is False and into["gf_thirty"]["correct"] is False


def test_restored_answers_are_never_first_attempts(root):
    """Issue 42: a progress file of right answers, restored by a learner who never pressed Check, gave 'right first
    time' on every exercise. Restored attempts are kept as restored: not in the score, not in the class's answers,
    counted apart in the roster; a later Check is the first attempt."""
    import importlib
    teacher_page = importlib.import_module("core.labs.classroom")
    info = C.create_class("Tuesday")
    ana, ben = C.join(info.join_code, "Ana"), C.join(info.join_code, "Ben")
    C.record_attempt(ana, "gf_regime", "exploding", True, "exploding", source=C.RESTORE)
    C.record_attempt(ana, "gf_thirty", 0.0424, True, 0.0424, source=C.RESTORE)
    C.record_attempt(ana, "gf_thirty", 0.5, False, 0.0424)            # then a Check, wrong: that one counts
    C.record_attempt(ben, "gf_regime", "stable", False, "exploding")
    mine = C.progress(ana)
    assert mine["gf_regime"]["restored"] and mine["gf_regime"]["correct"]
    assert (mine["gf_thirty"]["restored"], mine["gf_thirty"]["correct"], mine["gf_thirty"]["tries"]) == (False, False, 2)
    everyone = C.class_attempts(info.id)
    firsts = C.first_attempts(everyone)
    assert set(firsts) == {("Ana", "gf_thirty"), ("Ben", "gf_regime")}
    row = next(r for r in teacher_page.roster_rows(info, everyone, [], []) if r["learner"] == "Ana")
    assert (row["answered"], row["right first time"], row["score"], row["restored only"]) == (1, 0, "0%", 1)
    csv_rows = [line.split(",") for line in teacher_page.export_csv(everyone, []).splitlines()[1:5]]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", csv_rows[0][9]), csv_rows[0]   # ISO 8601, UTC
    assert [(r[0], r[1], r[10]) for r in csv_rows] == [("Ana", "gf_regime", "False"), ("Ana", "gf_thirty", "False"),
                                                       ("Ana", "gf_thirty", "True"), ("Ben", "gf_regime", "True")]
    at = _learner_page("exercises", ana)
    assert not at.exception
    from core.exercises.bank import BANK
    assert [m.value for m in at.metric][:2] == [f"2 of {len(BANK)}", "0"]


def test_a_teacher_link_that_opens_nothing_says_so(root):
    at = page("classroom", teacher="A" * 32).run()
    assert not at.exception and any("does not open a class" in e.value for e in at.error)


def test_two_processes_write_one_class_at_once(root):
    """Several web processes share the class records: two processes join ten learners each and record their
    attempts at the same time; every learner and attempt is there, and nothing waited into an error."""
    import subprocess
    import sys
    info = C.create_class("Busy")
    code = ("import sys; from core import classroom as C\n"
            "for i in range(10):\n"
            "    t = C.join(sys.argv[1], f'{sys.argv[2]}{i}')\n"
            "    for k in range(3):\n"
            "        C.record_attempt(t, 'gf_regime', 'stable', False, 'exploding')\n")
    procs = [subprocess.Popen([sys.executable, "-c", code, info.join_code, who], cwd=ROOT) for who in ("a", "b")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    assert len(C.roster(info.id)) == 20 and len(C.class_attempts(info.id)) == 60


def test_an_old_database_is_migrated_and_keeps_its_attempts(root):
    """A version-1 database (before the settings column) gains it, its rows kept."""
    conn = sqlite3.connect(root / C.DB_NAME)
    for statement in filter(str.strip, C.MIGRATIONS[0].split(";")):
        conn.execute(statement)
    conn.execute("INSERT INTO learners VALUES ('tok_tok_tok_tok_tok_tok', NULL, '', 0)")
    conn.execute("INSERT INTO attempts (learner, exercise, answer, correct, computed, hint_seen, after_solution, "
                 "source, at) VALUES ('tok_tok_tok_tok_tok_tok', 'gf_regime', '\"stable\"', 0, '\"exploding\"', 0, 0, "
                 "'check', 1)")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    assert C.attempts("tok_tok_tok_tok_tok_tok")[0]["settings"] == {}
    assert sqlite3.connect(root / C.DB_NAME).execute("PRAGMA user_version").fetchone()[0] == len(C.MIGRATIONS) == 7


def test_the_teacher_sees_a_learner_who_checked_from_other_settings(root):
    info = C.create_class("Tuesday")
    ana = C.join(info.join_code, "Ana")
    lab = _learner_page("gradient_flow", ana, exercise="gf_regime", scale="0.5", use_tanh="0")   # edited: scale 0.5
    lab.radio(key="ex.gf_regime.answer").set_value("vanishing").run()
    lab.button(key="ex.gf_regime.check").click().run()
    assert C.attempts(ana)[0]["settings"]["scale"] == "0.5"
    teacher = page("classroom", teacher=info.teacher_token, shown="gf_regime").run()
    roster = teacher.dataframe[0].value
    assert roster.loc[roster["learner"] == "Ana", "other settings"].iloc[0] == 1
    chart = next(c for c in teacher.get("plotly_chart") if "first answer" in c.proto.spec)
    assert "Ana: scale=0.5 (exercise: 1.5)" in chart.proto.alt


def test_the_class_csv_never_hands_a_spreadsheet_a_formula():
    from core.classroom import ClassRun
    from core.runs.record import HistoryRow
    from core.labs.classroom import export_csv
    rows = [{"name": "=HYPERLINK(\"https://e.x\")", "exercise": "gf_thirty", "answer": -0.5, "correct": False,
             "computed": 0.04, "hint_seen": False, "after_solution": False, "source": "check", "at": 1, "settings": {}}]
    row = HistoryRow(epoch=1, step=10, train_ppl=9.0, val_ppl=8.0, val_bpb=3.0, val_ce=2.1, elapsed=1.0,
                     tokens_per_s=100.0)
    text = export_csv(rows, [ClassRun("@SUM(A1)", "abcdef", "tiny #1", {}, [row])])
    assert "'=HYPERLINK" in text and "'@SUM(A1)" in text
    assert ",-0.5," in text          # a negative number stays a number


def test_a_chart_s_data_csv_never_hands_a_spreadsheet_a_formula():
    import plotly.graph_objects as go

    from core.figures import figure_csv
    fig = go.Figure(go.Scatter(x=[-0.5, 2.0], y=["=cmd|' /C calc'!A0", "Ben"], name="@first answers"))
    text = figure_csv(fig)
    assert "'=cmd" in text and "'@first answers" in text and ",-0.5," in text


def test_the_class_answers_chart_counts_whole_learners_from_zero():
    from core.exercises.bank import BANK
    from core.exercises.types import CHOICE
    from core.labs.classroom import answers_figure
    ex = next(e for e in BANK.values() if e.kind == CHOICE)
    firsts = [{"name": n, "answer": ex.options[0], "computed": ex.options[0], "correct": True} for n in ("Ana", "Ben")]
    y = answers_figure(ex, firsts).layout.yaxis
    assert (y.rangemode, y.dtick, y.tickformat) == ("tozero", 1, ",d")
    many = firsts * 6   # 12 learners on one answer: plotly's own whole-number steps
    assert answers_figure(ex, many).layout.yaxis.dtick is None


def test_the_teacher_s_chart_follows_the_class_until_the_teacher_picks_an_exercise(root):
    info = C.create_class("Tuesday")
    ana, ben = C.join(info.join_code, "Ana"), C.join(info.join_code, "Ben")
    teacher = page("classroom", teacher=info.teacher_token).run()    # opened before anyone answered
    before = teacher.query_params[SHOWN]
    C.record_attempt(ana, "gf_regime", "vanishing", True, "vanishing", at=10.0)
    teacher.run()
    assert before != "gf_regime" and teacher.query_params[SHOWN] == "gf_regime"
    assert any("1 of 2 learners answered" in c.proto.alt for c in teacher.get("plotly_chart"))
    # a bookmarked link to an exercise nobody answered moves too, in a new session
    moved = page("classroom", teacher=info.teacher_token, shown="ch_forcing").run()
    assert moved.query_params[SHOWN] == "gf_regime"
    teacher.selectbox(key="classroom.show").set_value("fc_horizon").run()   # the teacher picks one: it stays
    C.record_attempt(ben, "gf_thirty", 0.5, False, 0.04, at=20.0)
    teacher.run()
    assert teacher.query_params[SHOWN] == "fc_horizon" and not teacher.exception
    assert Url.FOLLOW not in teacher.query_params             # the address says it was chosen


def test_a_reloaded_teacher_view_goes_on_following_the_class(root):
    """Issue 63's stalls: a view that followed the class, opened again in a new session (a reload, or a lost
    connection), read its address's exercise as one the teacher had picked, so answers to any other never
    reached its chart. The address now says the view follows (follow=1): the new session follows too, while a
    link that names an exercise without it (a teacher's chosen view) stays on it."""
    info = C.create_class("Tuesday")
    ana, ben = C.join(info.join_code, "Ana"), C.join(info.join_code, "Ben")
    C.record_attempt(ana, "gf_thirty", 0.04, True, 0.0424, at=10.0)
    first = page("classroom", teacher=info.teacher_token).run()
    address = dict(first.query_params)
    assert address.get(Url.FOLLOW.value) == "1" and address[SHOWN] == "gf_thirty"
    again = page("classroom")                                  # the same address, a new session
    for k, v in address.items():
        again.query_params[k] = v
    again.session_state["_rnnlab_teacher_keys"] = {info.join_code: info.teacher_token}   # the browser's key
    again.run()
    C.record_attempt(ben, "gf_regime", "exploding", True, "exploding", at=20.0)
    again.run()
    assert again.query_params[SHOWN] == "gf_regime" and not again.exception
    assert any("1 of 2 learners answered" in c.proto.alt and "exploding" in c.proto.alt
               for c in again.get("plotly_chart"))
    chosen = page("classroom", teacher=info.teacher_token, shown="gf_thirty").run()    # no follow=1: picked
    C.record_attempt(ana, "gf_regime", "stable", False, "exploding", at=30.0)
    chosen.run()
    assert chosen.query_params[SHOWN] == "gf_thirty"


def test_a_write_waits_out_a_busy_database_and_keeps_the_attempt(root, monkeypatch):
    """Another process holds the write lock past a try's timeout: the attempt is tried again, and kept, not lost
    (under overload it was, 1 to 65 times in 4,800). The lock is let go when the first try has failed."""
    me = C.learner_alone(root)
    other = sqlite3.connect(C.database(root), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")                       # a writer that is not done yet
    pauses = []

    def pause(attempt):                                    # between tries: the other writer finishes
        pauses.append(attempt)
        other.execute("COMMIT")
    monkeypatch.setattr(C.db, "BUSY_TIMEOUT_S", 0.05)
    monkeypatch.setattr(C.db, "_pause", pause)
    C.record_attempt(me, "gf_thirty", 0.04, True, 0.0424, root=root)
    assert pauses == [0] and [a["exercise"] for a in C.attempts(me, root)] == ["gf_thirty"]
    other.close()


def test_a_database_that_stays_busy_is_said_in_words(root, monkeypatch):
    me = C.learner_alone(root)
    other = sqlite3.connect(C.database(root), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    monkeypatch.setattr(C.db, "BUSY_TIMEOUT_S", 0.01)
    monkeypatch.setattr(C.db, "WRITE_TRIES", 3)
    monkeypatch.setattr(C.db, "_pause", lambda attempt: None)
    try:
        with pytest.raises(ValueError, match="too busy to keep this just now"):
            C.record_attempt(me, "gf_thirty", 0.04, True, 0.0424, root=root)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert C.attempts(me, root) == []


def test_the_tab_and_the_records_count_first_attempts_by_one_rule(root):
    """Issue 62: one function (classroom.fold) keeps a learner's progress, for the records and for a tab that cannot
    reach them; ui no longer restates the first-attempt rule. The same attempts give the same progress both ways."""
    ana = C.join(C.create_class("Friday").join_code, "Ana")
    made = [("gf_regime", "stable", False, C.RESTORE), ("gf_regime", "exploding", True, "check"),
            ("gf_regime", "vanishing", False, "check"), ("gf_thirty", 0.04, True, C.RESTORE)]
    tab: dict = {}
    for exercise, answer, correct, source in made:
        C.record_attempt(ana, exercise, answer, correct, "x", source, at=7.0)
        C.fold(tab, {"exercise": exercise, "answer": answer, "correct": correct, "computed": "x", "at": 7.0,
                     "source": source})
    kept = C.progress(ana)
    for exercise in ("gf_regime", "gf_thirty"):
        for field in ("answer", "correct", "tries", "latest", "latest_correct", "restored"):
            assert tab[exercise][field] == kept[exercise][field], (exercise, field)
    assert (kept["gf_regime"]["answer"], kept["gf_regime"]["tries"]) == ("exploding", 3)   # the first Check counts
    assert kept["gf_thirty"]["restored"]


def test_an_assignment_keeps_its_figures_back_when_the_address_drops_ex_and_the_roster_flags_figures_seen(root):
    """Issue 63: removing ex= from an assignment link showed the reading that states the answer, and the answer
    counted as right first time with no flag. Now the session keeps the assignment until it is answered, and an
    answer checked with the figures on the page is marked so for the teacher; the time to answer runs from the
    card answered, not from the exercise's first drawing anywhere."""
    from core.labs import classroom as reports
    info = C.create_class("Tuesday")
    ana, ben = C.join(info.join_code, "Ana"), C.join(info.join_code, "Ben")
    C.assign(info.id, ["gf_regime"])
    lab = _learner_page("gradient_flow", ana, exercise="gf_regime", hide="scale,tanh", scale="1.5", use_tanh="0")
    assert any("figures appear after that" in i.value for i in lab.info)
    for key in (Url.EXERCISE.value, Url.HIDE.value):             # the learner edits the address
        del lab.query_params[key]
    lab.run()
    assert any("figures appear after that" in i.value for i in lab.info) and not lab.get("plotly_chart")
    lab.radio(key="ex.gf_regime.answer").set_value("exploding").run()
    lab.button(key="ex.gf_regime.check").click().run()
    assert lab.get("plotly_chart") and not lab.exception         # answered: the figures appear
    other = _learner_page("gradient_flow", ben)                  # Ben answers in the lab, its figures on the page
    other.radio(key="ex.gf_regime.answer").set_value("exploding").run()
    other.button(key="ex.gf_regime.check").click().run()
    everyone = C.class_attempts(info.id)
    shown = {a["name"]: a["figures_shown"] for a in everyone}
    assert shown == {"Ana": False, "Ben": True}
    assert all(a["card_at"] is not None and a["card_at"] <= a["at"] for a in everyone)
    rows = {r["learner"]: r for r in reports.roster_rows(info, everyone, [], [], {"gf_regime"})}
    assert (rows["Ana"]["figures shown"], rows["Ben"]["figures shown"]) == (0, 1)
    assert "figures on the page" in reports.export_csv(everyone, []).splitlines()[0]


def test_the_time_to_answer_runs_from_the_card_answered():
    from core.classroom import summary
    first = {("Ana", "e1"): {"at": 100.0, "correct": True, "card_at": 95.0},     # the card answered: 5 s
             ("Ben", "e1"): {"at": 100.0, "correct": True, "card_at": None}}     # from before: first view, 76 s
    rows = summary.overview(["e1"], first, [], {("Ana", "e1"): 24.0, ("Ben", "e1"): 24.0}, 2)
    assert rows[0]["median seconds"] == (5.0 + 76.0) / 2


def test_a_drawn_code_that_is_taken_is_drawn_again(root, monkeypatch):
    """Join codes and resume codes are drawn at random: one another row has already is drawn again, never
    mistaken for a name that is taken."""
    from core.classroom import records
    info = C.create_class("Tuesday")
    ada = C.join(info.join_code, "Ada")
    codes = iter([C.learner(ada).resume, "BBBBBBBB", info.join_code, "CCCCCCCC"])
    monkeypatch.setattr(records, "draw_code", lambda: next(codes))
    ben = C.join(info.join_code, "Ben")                      # Ada's resume code first, then a free one
    assert C.learner(ben).resume == "BBBBBBBB"
    assert C.create_class("Wednesday").join_code == "CCCCCCCC"
