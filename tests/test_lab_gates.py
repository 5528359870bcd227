"""Memory and gates (core.labs.gates, issue 64): its computation is a trained comparison (TRAINS), so its claims are
checked by rules written here from the data the page draws, on any numbers (hypothesis), on the shipped run and on a
fresh run of this test's own small size; and its exercises' answers pinned from independent formulas or from torch's
own layers on the shipped weights."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from core.claims import Claim
from core.exercises.bank import BANK
from core.labs import gates as lab
from core.nn import memory, memory_readings as mr, memory_store

NAMED = [dict(delay=60, lstm_bias=-3.0, gru_bias=-3.0, hidden=4, steps=50)]
# Each control is walked over its ends and default from this small comparison (the others at its values), trained
# by the sweep itself: seconds each, where the defaults' 300 steps at delay 40 take about 20.
BASE = lab.Settings(delay=3, hidden=4, steps=50)


def level(acc: float, answers: int) -> str:
    band = 3 * math.sqrt(0.25 * 0.75 / answers)
    if abs(acc - 0.25) <= band:
        return "chance"
    return "below" if acc < 0.25 else "remembers" if acc >= 0.9 else "partly"


def sweep_holds(c: Claim, by_delay: dict, answers: int) -> bool:
    """Each delay's verdict by this file's own rule; the claim's two delays are where the runs of verdicts end."""
    d = sorted(by_delay)
    words = [level(by_delay[x], answers) for x in d]
    kept = 0
    while kept < len(d) and words[kept] == "remembers":
        kept += 1
    lost = len(d)
    while lost > 0 and words[lost - 1] in ("chance", "below"):
        lost -= 1
    if c.kind == "memory.sweep_holds":
        return kept == len(d)
    said_kept = f"up to a delay of {d[kept - 1]} (" in c.text if kept else "does not remember even" in c.text
    if c.kind == "memory.sweep_falls":
        return kept < len(d) and lost < len(d) and said_kept and f"at chance from a delay of {d[lost]} on" in c.text
    return c.kind == "memory.sweep_partly" and lost == len(d) and kept < len(d) and said_kept


def examples() -> list:
    """The shipped comparison's result (the Chinese pages' test reads it; their readings on any numbers are
    checked there too)."""
    return [lab.compute(lab.Settings())]


def holds(c: Claim, r) -> bool:
    n = c.numbers
    rules = {
        "memory.chance": lambda: level(n["accuracy"], 1000) == "chance",
        "memory.below_chance": lambda: level(n["accuracy"], 1000) == "below",
        "memory.remembers": lambda: level(n["accuracy"], 1000) == "remembers",
        "memory.partly": lambda: level(n["accuracy"], 1000) == "partly",
        "memory.gradient_more": lambda: n["gated"] >= 10 * n["plain"],
        "memory.gradient_same": lambda: n["plain"] / 10 < n["gated"] < 10 * n["plain"],
        "memory.gradient_less": lambda: n["gated"] <= n["plain"] / 10 or n["gated"] == n["plain"] == 0,
        "memory.forget_kept": lambda: f"{n['forget']:.3f}" in c.text and math.isclose(
            n["kept"], n["forget"] ** n["delay"], rel_tol=1e-12),
    }
    if c.kind.startswith("memory.sweep"):
        seeds = len(next(iter(next(iter(r.sweep.values())).values())))
        cell = n["cell"]
        assert mr.NAMES[cell].lower() in c.text.lower()
        return sweep_holds(c, {d: float(np.mean(a)) for d, a in r.sweep[cell].items()}, 1000 * seeds)
    if c.kind.startswith("memory.gradient"):
        cell = n["cell"]
        g, p = r.gradients[cell], r.gradients["rnn"]
        if not (math.isclose(n["gated"], float(g[0]) / float(g[-1])) and
                math.isclose(n["plain"], float(p[0]) / float(p[-1]))):
            return False
    return rules[c.kind]()


def complete(claims, r) -> None:
    """One verdict per cell shown, one sweep sentence per cell swept, a gradient comparison per gated cell beside
    the RNN, and the forget gate where an LSTM is shown."""
    kinds = [c.kind for c in claims]
    cells = set(r.saved.cells)
    assert sum(k in ("memory.chance", "memory.below_chance", "memory.remembers", "memory.partly")
               for k in kinds) == len(cells)
    assert sum(k.startswith("memory.sweep") for k in kinds) == len(r.sweep)
    assert sum(k.startswith("memory.gradient") for k in kinds) == (len(cells & {"gru", "lstm"}) if "rnn" in cells
                                                                   else 0)
    assert ("memory.forget_kept" in kinds) == ("lstm" in cells)


def check(r) -> list[Claim]:
    claims = lab.readings(r)
    for c in claims:
        assert holds(c, r), (c.kind, c.text)
    complete(claims, r)
    return claims


@pytest.fixture(scope="module")
def shipped():
    return lab.compute(lab.Settings())


def test_the_shipped_comparison_says_what_the_issue_asks_and_every_claim_holds(shipped):
    """At delay 40: the plain RNN at chance (25%), the GRU and the LSTM remember; the gated cells pass far more
    of the gradient back to the symbol; the stored sweep has the RNN falling to chance within 100."""
    claims = {c.kind: c for c in check(shipped)}
    said = [c.text for c in lab.recalls(shipped)]
    assert "the plain RNN answers at chance" in said[0] and "the GRU remembers" in said[1] and \
        "the LSTM remembers" in said[2]
    assert [c.kind for c in lab.first_inputs(shipped)] == ["memory.gradient_more"] * 2
    rnn_sweep = lab.over_delays(shipped)[0]
    assert rnn_sweep.kind == "memory.sweep_falls" and rnn_sweep.numbers["chance_from"] <= 60
    assert "memory.forget_kept" in claims and shipped.shows_settings
    assert {c.key for c in lab.charts(shipped)} == {"accuracy", "delays", "gradients", "gates"}


def test_a_fresh_small_run_repeats_the_comparison():
    """The test's own small size (150 steps, trained here): the plain RNN at chance, the GRU remembers, the LSTM
    above chance; and every claim holds (tests/test_memory.py: a comparison repeats itself exactly)."""
    s = lab.Settings(steps=150)
    r = lab.compute(s)
    acc = {k: c.final for k, c in r.saved.cells.items()}
    assert acc["rnn"] < 0.35 and acc["gru"] > 0.9 and acc["lstm"] > 0.5, acc
    check(r)
    assert r.shows_settings and r.saved.comparison == lab.comparison(s)


@settings(max_examples=200, deadline=None)
@given(acc=st.floats(0.0, 1.0), delay=st.integers(1, 100), kind=st.sampled_from(["rnn", "gru", "lstm"]))
def test_a_recall_verdict_holds_at_any_accuracy(acc, delay, kind):
    c = mr.recall(kind, acc, delay)
    assert holds(c, None) and f"delay of {delay}" in c.text


@settings(max_examples=200, deadline=None)
@given(accs=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=8), seeds=st.integers(1, 3))
def test_a_sweep_sentence_holds_for_any_sweep(accs, seeds):
    delays = list(memory_store.SWEEP_DELAYS)[:len(accs)]
    by_delay = dict(zip(delays, accs))
    c = mr.over_delays("rnn", by_delay, 1000 * seeds)
    assert sweep_holds(c, by_delay, 1000 * seeds), c.text


@settings(max_examples=200, deadline=None)
@given(first=st.floats(0.0, 10.0), last=st.floats(1e-6, 10.0), p_first=st.floats(0.0, 10.0),
       p_last=st.floats(1e-6, 10.0))
def test_a_gradient_comparison_holds_for_any_norms(first, last, p_first, p_last):
    c = mr.first_input("lstm", [first, 1.0, last], [p_first, 1.0, p_last])
    assert math.isclose(c.numbers["gated"], first / last) and math.isclose(c.numbers["plain"], p_first / p_last)
    n = c.numbers
    assert {"memory.gradient_more": n["gated"] >= 10 * n["plain"] and n["plain"] >= 0,
            "memory.gradient_same": n["plain"] / 10 < n["gated"] < 10 * n["plain"],
            "memory.gradient_less": n["gated"] <= n["plain"] / 10 or n["gated"] == n["plain"] == 0}[c.kind]


def test_a_planted_wrong_claim_fails_its_rule(shipped):
    wrong = mr.recall("rnn", 0.99, 40)
    wrong.numbers["accuracy"] = shipped.saved.cells["rnn"].final
    assert not holds(wrong, shipped)


# --- Its exercises, pinned ------------------------------------------------------------------------------------


def test_gates_forget__the_share_left_is_sigmoid_of_the_bias_to_the_delay():
    ex = BANK["gates_forget"]
    for bias, delay in ((3.0, 40), (-3.0, 40), (5.0, 100)):
        expected = (1 / (1 + math.exp(-bias))) ** delay
        assert ex.run({"bias": bias, "delay": delay}).answer == pytest.approx(expected, rel=1e-5, abs=1e-30)


def test_gates_params__four_times_two_weights_and_two_biases():
    for cell, g in (("lstm", 4), ("gru", 3), ("rnn", 1)):
        assert BANK["gates_params"].run({"cell": cell}).answer == g * (32 * 8 + 32 * 32 + 2 * 32)
    assert BANK["gates_params"].run().answer == 5376


def test_gates_rnn_delay__from_the_shipped_sweep_by_this_files_rule():
    sweep = memory_store.load().delays
    for cell in ("rnn", "lstm"):
        by = {d: float(np.mean(a)) for d, a in sweep[cell].items()}
        words = [level(by[d], 3000) for d in sorted(by)]
        lost = len(words)
        while lost > 0 and words[lost - 1] in ("chance", "below"):
            lost -= 1
        expected = sorted(by)[lost] if lost < len(words) else 0
        assert BANK["gates_rnn_delay"].run({"cell": cell}).answer == expected


def _torch_layer(stored, kind):
    """torch's own nn.RNN / nn.LSTM with the stored cell's weights (the same layout), and the stored net's ends."""
    layer = {"rnn": torch.nn.RNN, "lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[kind](memory.EMBED, stored.plan.hidden,
                                                                                   batch_first=True)
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(layer, f"{name}_l0").copy_(getattr(stored.net.cell, name))
    return layer


def test_gates_ratio__by_torchs_own_layers_on_the_shipped_weights():
    """Independently of the lab's cells: torch's fused layers with the shipped weights, autograd through them."""
    saved = memory_store.load()
    delay = saved.comparison.delay
    tokens, symbols = memory.sequences(delay, 256, torch.Generator().manual_seed(memory.HELD_OUT_SEED + 1))
    share = {}
    for kind in ("rnn", "lstm", "gru"):
        net = saved.cells[kind].net
        x = net.embedding(tokens).detach().requires_grad_()
        out, _ = _torch_layer(saved.cells[kind], kind)(x)
        torch.nn.functional.cross_entropy(net.readout(out[:, -1]), symbols).backward()
        g = x.grad.norm(dim=2).mean(dim=0)
        share[kind] = float(g[0] / g[-1])
    for kind in ("lstm", "gru"):
        r = share[kind] / share["rnn"]
        expected = "about the same" if 0.1 < r < 10 else "10 to 1,000 times as much" if 10 <= r < 1000 else \
            "over 1,000 times as much" if r >= 1000 else "less"
        assert BANK["gates_ratio"].run({"cell": kind}).answer == expected, (kind, r)


# --- Its page -------------------------------------------------------------------------------------------------


def test_the_page_opens_with_the_stored_comparison_and_its_readings():
    from apptest_util import metric, page
    at = page("gates")
    at.run()
    assert not at.exception
    r = lab.compute(lab.Settings())
    assert metric(at, "Plain RNN") == f"{100 * r.saved.cells['rnn'].final:.1f}%"
    said = " ".join(m.value for m in at.markdown)
    assert all(c.text in said for c in lab.recalls(r))
    assert at.button(key="gates.train").label == "Train again" and not at.warning


def test_other_settings_say_the_figures_are_the_stored_run_until_trained_then_show_the_learners_own(tmp_path,
                                                                                                    monkeypatch):
    """The comparison trains in the server's workers (never in the page's script); the page follows it and then
    shows the learner's own run at those settings, with the readings of its numbers."""
    from apptest_util import page, rerun_until
    monkeypatch.setenv("RNNLAB_RUNS_DIR", str(tmp_path))
    at = page("gates", delay=3, hidden=4, steps=50)
    at.run()
    assert "still show the stored run" in at.warning[0].value and at.button(key="gates.train").label == "Train these"
    at.button(key="gates.train").click().run()
    assert not at.exception
    assert rerun_until(at, lambda a: any("your own run" in c.value for c in a.caption), 120)
    assert not at.warning and at.button(key="gates.train").label == "Train again"
    said = " ".join(m.value for m in at.markdown)
    assert "After a delay of 3, the plain RNN" in said and "After a delay of 3, the LSTM" in said
    key = at.query_params["run"]
    again = page("gates", delay=3, hidden=4, steps=50, run=key[0] if isinstance(key, list) else key)
    again.run()                       # a reload: a new session finds the run by the address's key
    assert any("your own run" in c.value for c in again.caption) and not again.warning


def test_stop_keeps_what_the_comparison_learnt_and_the_page_shows_it(tmp_path, monkeypatch):
    from apptest_util import page, rerun_until
    monkeypatch.setenv("RNNLAB_RUNS_DIR", str(tmp_path))
    at = page("gates", delay=3, hidden=4, steps=1000)
    at.run()
    at.button(key="gates.train").click().run()
    assert rerun_until(at, lambda a: any("step" in p.proto.text for p in a.get("progress")), 120)
    at.button(key="gates.stop").click().run()
    assert rerun_until(at, lambda a: any("your own run" in c.value for c in a.caption), 120)
    assert "everything learnt is kept" in at.info[0].value and not at.exception
    assert [m.label for m in at.metric][-1] == "Chance" and len(at.metric) < 4     # the cells it reached
