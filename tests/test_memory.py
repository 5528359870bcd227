"""The memory task (core.nn.memory, issue 64's lab-to-be): its sequences, chance, a run that repeats itself, the
measurements, and what the cells do with a delay: the plain RNN forgets where a gated cell remembers."""
import threading

import numpy as np
import pytest
import torch

from core.nn import memory


def test_a_sequence_is_a_symbol_a_delay_of_distractors_and_the_cue():
    tokens, symbols = memory.sequences(7, 500, torch.Generator().manual_seed(0))
    assert tokens.shape == (500, 9) and torch.equal(tokens[:, 0], symbols)
    assert int(symbols.min()) >= 0 and int(symbols.max()) == memory.SYMBOLS - 1
    assert int(tokens[:, 1:-1].min()) == memory.SYMBOLS and int(tokens[:, 1:-1].max()) == memory.CUE - 1
    assert bool((tokens[:, -1] == memory.CUE).all())
    with pytest.raises(ValueError, match="delay"):
        memory.sequences(memory.MAX_DELAY + 1, 4, torch.Generator())


def test_an_untrained_network_answers_at_chance_within_its_sampling_spread():
    """1,000 held-out answers at chance 1/4: the share right has a standard deviation of about 0.014."""
    for kind in ("rnn", "gru", "lstm"):
        acc = memory.accuracy(memory.build(memory.Plan(kind=kind, delay=10)), 10)
        assert abs(acc - memory.CHANCE) < 5 * (memory.CHANCE * (1 - memory.CHANCE) / 1000) ** 0.5 + 0.06, (kind, acc)


def test_a_run_repeats_itself_and_a_stop_keeps_what_it_learnt():
    plan = memory.Plan(kind="gru", delay=5, hidden=8, steps=20, every=10)
    a, b = memory.train(plan), memory.train(plan)
    assert a.accuracy == b.accuracy and a.steps == [0, 10, 20]
    assert all(torch.equal(p, q) for p, q in zip(a.net.parameters(), b.net.parameters()))
    stop = threading.Event()
    seen = []
    stopped = memory.train(plan, on_progress=lambda r: (seen.append(r.steps[-1]), stop.set()), stop=stop)
    assert stopped.stopped and stopped.steps == [0, 10] and seen == [10] and stopped.accuracy == a.accuracy[:2]


def test_the_plain_rnn_forgets_across_a_delay_a_gated_cell_carries():
    """Delay 40, 120 steps each (a shorter run than the lab's, so the suite stays quick): the plain RNN answers
    at chance, the GRU (update bias 3) nearly always, the LSTM (forget bias 3) well above chance already."""
    got = {kind: memory.train(memory.Plan(kind=kind, delay=40, steps=120, every=120)).final
           for kind in ("rnn", "gru", "lstm")}
    assert got["rnn"] < 0.35 and got["gru"] > 0.9 and got["lstm"] > 0.5, got


def test_the_gradient_reaching_the_first_input_and_the_gates():
    """Untrained, the LSTM with its forget gate open (bias 3) passes far more of the loss's gradient back to the
    first step than the plain RNN, whose gradient shrinks step by step; its forget gate's mean is sigmoid(~3)."""
    rnn = memory.build(memory.Plan(kind="rnn", delay=30))
    lstm = memory.build(memory.Plan(kind="lstm", delay=30))
    g_rnn, g_lstm = memory.input_gradients(rnn, 30), memory.input_gradients(lstm, 30)
    assert g_rnn.shape == g_lstm.shape == (32,) and np.all(np.isfinite(g_rnn))
    assert g_rnn[0] < 1e-3 * g_rnn[-1] and g_lstm[0] / g_lstm[-1] > 100 * g_rnn[0] / g_rnn[-1]
    means = memory.gate_means(lstm, 30)
    assert set(means) == {"input", "forget", "output"} and 0.85 < means["forget"] < 0.98
    assert memory.gate_means(rnn, 30) == {}


def test_a_plan_refuses_what_it_cannot_train():
    for bad, words in ((dict(kind="transformer"), "cell"), (dict(delay=-1), "delay"), (dict(hidden=0), "hidden"),
                       (dict(lr=0.0), "learning rate"), (dict(gate_bias=99.0), "gate bias")):
        with pytest.raises(ValueError, match=words):
            memory.Plan(**bad)


def test_the_stored_comparison_is_the_defaults_and_its_weights_are_its_curves():
    """assets/gates_run.json (python -m core gates): the three cells at the default Plan; each stored network,
    measured again here on the held-out sequences, answers exactly as its stored curve ends; and what the lab
    will say of them: the plain RNN at chance after a delay of 40, the GRU remembers, the LSTM at least partly."""
    from core.nn import memory_readings, memory_store
    stored = memory_store.load_baked()
    assert set(stored) == {"rnn", "gru", "lstm"}
    for kind, s in stored.items():
        assert s.plan == memory.Plan(kind=kind) and s.steps[-1] == s.plan.steps
        assert memory.accuracy(s.net, s.plan.delay) == pytest.approx(s.final, abs=1e-9)
        assert s.parameters == s.net.parameter_count()
    kinds = {k: memory_readings.recall(k, s.final, s.plan.delay).kind for k, s in stored.items()}
    assert kinds["rnn"] == "memory.chance" and kinds["gru"] == "memory.remembers"
    assert kinds["lstm"] in ("memory.remembers", "memory.partly")


def test_the_store_writes_and_reads_back_and_says_how_to_rebuild(tmp_path):
    from core.nn import memory_store
    plans = {kind: memory.Plan(kind=kind, delay=3, hidden=4, steps=5, every=5) for kind in ("rnn", "lstm")}
    meta = memory_store.bake(tmp_path, plans)
    back = memory_store.load_baked(tmp_path)
    assert {k: s.accuracy for k, s in back.items()} == {k: c["accuracy"] for k, c in meta["cells"].items()}
    (tmp_path / memory_store.weights_file("rnn")).unlink()
    with pytest.raises(ValueError, match="python -m core gates"):
        memory_store.load_baked(tmp_path)
