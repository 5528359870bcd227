"""Issue 63: the class records' storage faults, each made for real: a damaged file (pages overwritten), a file-size
limit (the process may not grow a file: what a full disk does to a write) and a read-only folder. Each is said in
words; nothing lands in a damaged file, which is set aside only when a teacher of it (or the command line) says
so; an answer checked during a fault waits in the tab, shown as the learner's, and is saved once the records can
take it."""
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from apptest_util import ROOT, page, shown
from core import classroom as C
from core.classroom import cli, faults


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("RNNLAB_RUNS_DIR", str(tmp_path))
    return tmp_path


def _class_with_answers(n: int = 200):
    info = C.create_class("Tuesday")
    tokens = [C.join(info.join_code, f"Learner {i}") for i in range(5)]
    for i in range(n):
        C.record_attempt(tokens[i % 5], "gf_thirty", float(i), False, 0.0424)
    return info, tokens


def _damage(path: Path, pages) -> bytes:
    """Overwrite the b-tree header of these pages (4096 bytes each, page 1 first), as a failing disk might."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(path.read_bytes())
    for p in pages:
        data[(p - 1) * 4096:(p - 1) * 4096 + 12] = b"\xab" * 12
    path.write_bytes(bytes(data))
    faults.forget(path)                      # as a process that has not opened it yet
    return bytes(data)


def test_a_damaged_file_is_named_never_written_and_set_aside_only_when_its_teacher_says(root):
    info, tokens = _class_with_answers()
    path = C.database()
    pages = path.stat().st_size // 4096
    before = _damage(path, range(pages - 8, pages + 1))       # the last pages: answers, not the classes table
    for work in (lambda: C.roster(info.id), lambda: C.record_attempt(tokens[0], "gf_regime", "stable", False, "x"),
                 lambda: C.join(info.join_code, "Newcomer"), lambda: C.progress(tokens[1])):
        with pytest.raises(C.StorageFault, match="classroom.sqlite3 .* is damaged") as caught:
            work()
        assert caught.value.what == faults.DAMAGED
    assert path.read_bytes() == before                           # nothing was written into it
    learner_view = page("classroom", join=info.join_code).run()  # a learner: told, and no way to set it aside
    assert any("is damaged" in shown(e) for e in learner_view.error) and not learner_view.exception
    assert not [b for b in learner_view.button if b.key == "class.aside"]
    assert faults.teaches_in(path, info.teacher_token) and not faults.teaches_in(path, tokens[0])
    assert cli.main(["check", "--root", str(root)]) == 1
    teacher = page("classroom", teacher=info.teacher_token).run()
    assert any("classroom.sqlite3" in shown(e) for e in teacher.error), [e.value for e in teacher.error]
    assert teacher.button(key="class.aside").disabled                # confirmed first
    teacher.checkbox(key="class.aside.sure").check().run()
    teacher.button(key="class.aside").click().run()
    assert not teacher.exception and any("Set aside as classroom.damaged-" in shown(s) for s in teacher.success)
    kept = list(root.glob("classroom.damaged-*.sqlite3"))
    assert len(kept) == 1 and kept[0].read_bytes() == before      # kept, untouched
    fresh = C.create_class("Tuesday again")                         # fresh records
    assert C.class_by_code(fresh.join_code).name == "Tuesday again" and C.roster(info.id) == []


def test_the_command_line_sets_a_damaged_file_aside_and_leaves_a_sound_one(root, capsys):
    _class_with_answers(20)
    assert cli.main(["set-aside", "--root", str(root)]) == 0
    assert "passes" in capsys.readouterr().out and C.database().exists()
    _damage(C.database(), range(2, 4))
    assert cli.main(["set-aside", "--root", str(root)]) == 0
    assert not C.database().exists() and len(list(root.glob("classroom.damaged-*"))) >= 1


_LIMITED = """
import json, os, resource, signal, sqlite3, sys
sys.path.insert(0, {root!r}); sys.path.insert(0, {tests!r})
from core import classroom as C
from apptest_util import page, shown
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)    # a write past the limit fails (EFBIG) instead of killing us
token = C.learner_alone()
c = sqlite3.connect(C.database()); c.execute("PRAGMA wal_checkpoint(TRUNCATE)"); c.close()
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
out = {{}}
lab = page("gradient_flow")
lab.session_state["_rnnlab_learner"] = token      # this browser's learner (its cookie)
lab.run()
resource.setrlimit(resource.RLIMIT_FSIZE, (1024, hard))   # from now on no file may grow past 1 kB
try:
    C.record_attempt(token, "gf_thirty", 1.0, True, 1.0)
except C.StorageFault as exc:
    out["core"] = [exc.what, str(exc)]
lab.radio(key="ex.gf_regime.answer").set_value("stable").run()
lab.button(key="ex.gf_regime.check").click().run()
out["shown"] = [s.value for s in [*lab.error, *lab.success]]
out["warned"] = [shown(w) for w in lab.warning]
resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))   # space again
out["kept_during"] = len(C.attempts(token))
lab.radio(key="ex.gf_regime.answer").set_value("exploding").run()
lab.button(key="ex.gf_regime.check").click().run()
out["after"] = [(a["answer"], a["correct"]) for a in C.attempts(token)]
out["first"] = C.progress(token)["gf_regime"]["answer"]
out["warned_after"] = [shown(w) for w in lab.warning]
out["exception"] = bool(lab.exception)
print("RESULT" + json.dumps(out))
"""


def _run(script: str, runs: Path, user: list[str] | None = None) -> dict:
    env = {**os.environ, "RNNLAB_RUNS_DIR": str(runs), "HOME": str(runs)}
    done = subprocess.run([*(user or []), sys.executable, "-c", script], capture_output=True, text=True, env=env,
                          timeout=300, cwd=runs)
    line = next((l for l in done.stdout.splitlines() if l.startswith("RESULT")), None)
    assert line is not None, done.stdout[-2000:] + done.stderr[-4000:]
    return json.loads(line[len("RESULT"):])


def test_a_check_on_a_full_disk_waits_in_the_tab_and_is_saved_when_there_is_space(tmp_path):
    """A file-size limit (RLIMIT_FSIZE) makes every write that grows a file fail, as a full disk does."""
    out = _run(_LIMITED.format(root=str(ROOT), tests=str(ROOT / "tests")), tmp_path)
    assert out["core"][0] == faults.FULL and "disk is full" in out["core"][1]
    assert any("You answered stable" in s for s in out["shown"]), out["shown"]     # graded and shown ...
    assert any("Not saved on the server yet" in w and "disk is full" in w for w in out["warned"]), out["warned"]
    assert out["kept_during"] == 0                                                 # ... though not saved yet
    assert out["after"] == [["stable", False], ["exploding", True]]          # in the order they were made
    assert out["first"] == "stable" and not out["warned_after"] and not out["exception"]


@pytest.fixture
def read_only(tmp_path, monkeypatch):
    """A runs folder with a class in it, then made read-only for real: a read-only bind mount where this process is
    root (root writes through any file mode), else the folder's and files' modes."""
    runs = tmp_path / "runs"
    runs.mkdir()
    monkeypatch.setenv("RNNLAB_RUNS_DIR", str(runs))
    info = C.create_class("Tuesday")
    token = C.join(info.join_code, "Ana")
    if os.geteuid() == 0:
        made = subprocess.run(["mount", "--bind", str(runs), str(runs)], capture_output=True)
        if made.returncode != 0:
            pytest.skip("root here cannot mount, so no folder is read-only to it: " + made.stderr.decode()[-200:])
        subprocess.run(["mount", "-o", "remount,bind,ro", str(runs)], check=True)
        yield info, token
        subprocess.run(["umount", str(runs)], check=True)
    else:
        for f in runs.iterdir():
            f.chmod(0o444)
        runs.chmod(0o555)
        yield info, token
        runs.chmod(0o755)


def test_a_read_only_folder_is_said_in_words_and_a_check_waits_in_the_tab(read_only):
    """A Check, a join and a new class each meet a StorageFault in words, never a raw database error; on the
    lab, the answer is graded, shown, and said to wait in the tab."""
    info, token = read_only
    with open(C.database(), "rb"):
        pass                                                        # still readable
    for work in (lambda: C.record_attempt(token, "gf_thirty", 1.0, True, 1.0),
                 lambda: C.join(info.join_code, "Ben"), lambda: C.create_class("Wednesday")):
        with pytest.raises(C.StorageFault, match="RNNLAB_RUNS_DIR") as caught:
            work()
        assert caught.value.what == faults.READ_ONLY
    lab = page("gradient_flow")
    lab.session_state["_rnnlab_learner"] = token                   # this browser's learner (its cookie)
    lab.run()
    lab.radio(key="ex.gf_regime.answer").set_value("exploding").run()
    lab.button(key="ex.gf_regime.check").click().run()
    assert not lab.exception and any("You answered exploding. Right." in shown(s) for s in lab.success)
    assert any("Not saved on the server yet" in shown(w) and "RNNLAB_RUNS_DIR" in shown(w) for w in lab.warning)
    joining = page("classroom", join=info.join_code).run()
    names = [t for t in joining.text_input if t.label.startswith("Your name")]
    if names:                                 # the class could be read: the join itself is refused in words
        names[0].input("Ben")
        joining = [b for b in joining.button if b.label == "Join"][0].click().run()
    assert not joining.exception and any("RNNLAB_RUNS_DIR" in shown(e) for e in joining.error), joining.error
