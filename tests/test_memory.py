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
    """assets/gates_run.json (python -m core gates): the three cells at the default comparison; each stored network,
    measured again here on the held-out sequences, answers exactly as its stored curve ends; and what the lab
    says of them: the plain RNN at chance after a delay of 40, the GRU and the LSTM remember. The stored delay sweep
    holds the same three numbers at delay 40 with seed 0, and each delay for every seed."""
    from core.nn import memory_readings, memory_store
    saved = memory_store.load()
    stored = saved.cells
    assert set(stored) == {"rnn", "gru", "lstm"} and saved.comparison == memory_store.Comparison()
    for kind, s in stored.items():
        assert s.plan == saved.comparison.plans()[kind] and s.steps[-1] == s.plan.steps
        assert memory.accuracy(s.net, s.plan.delay) == pytest.approx(s.final, abs=1e-9)
        assert s.parameters == s.net.parameter_count()
        assert saved.delays[kind][40][0] == s.final and list(saved.delays[kind]) == list(memory_store.SWEEP_DELAYS)
        assert all(len(by_seed) == len(memory_store.SWEEP_SEEDS) for by_seed in saved.delays[kind].values())
    kinds = {k: memory_readings.recall(k, s.final, s.plan.delay).kind for k, s in stored.items()}
    assert kinds == {"rnn": "memory.chance", "gru": "memory.remembers", "lstm": "memory.remembers"}


SMALL = dict(delay=3, hidden=4, steps=10)


def test_the_store_writes_and_reads_back_and_says_how_to_rebuild(tmp_path):
    from core.nn import memory_store
    seen = []
    saved = memory_store.train_comparison(memory_store.Comparison(**SMALL), tmp_path, on_progress=seen.append)
    back = memory_store.load(tmp_path)
    assert {k: s.accuracy for k, s in back.cells.items()} == {k: s.accuracy for k, s in saved.cells.items()}
    assert back.status == "finished" and set(back.cells) == set(memory_store.CELL_KINDS)
    assert [(p.cell, p.step) for p in seen] == [("rnn", 10), ("gru", 20), ("lstm", 30)] and seen[-1].eta == 0.0
    assert seen[-1].curves["lstm"] == [[s, a] for s, a in zip(back.cells["lstm"].steps, back.cells["lstm"].accuracy)]
    read = memory_store.ProgressReader(tmp_path)
    assert read.read() is None                       # nothing was written to a progress file here
    (tmp_path / memory_store.weights_file("rnn")).unlink()
    with pytest.raises(ValueError, match="python -m core gates"):
        memory_store.load(tmp_path)


def test_a_stopped_comparison_keeps_what_it_learnt_and_trains_no_further_cell(tmp_path):
    import threading
    from core.nn import memory_store
    stop = threading.Event()

    def on(p):
        if p.cell == "gru":          # its first measurement, after 50 of its 120 steps
            stop.set()
    saved = memory_store.train_comparison(memory_store.Comparison(**{**SMALL, "steps": 120}), tmp_path, stop, on)
    assert saved.status == "stopped" and set(saved.cells) == {"rnn", "gru"} and "kept" in saved.message
    assert saved.cells["rnn"].steps[-1] == 120 and saved.cells["gru"].steps == [0, 50]
    stop = threading.Event()
    stop.set()
    assert memory_store.train_comparison(memory_store.Comparison(**SMALL), tmp_path / "none", stop) is None


@pytest.mark.parametrize("mode", ["thread", "process"])
def test_a_comparison_trains_in_the_job_managers_workers_and_is_found_again_from_the_store(mode, tmp_path,
                                                                                          monkeypatch):
    """The lab's live comparison goes through the same slots, workers, progress and store as a language model's
    run: it reports as it goes, ends saved, repeats itself exactly, and a new server process finds it by its key."""
    from core.nn import memory_store
    from core.runs.jobs import JobManager
    from test_training import wait_for
    monkeypatch.setenv("RNNLAB_RUNS_DIR", str(tmp_path))
    manager = JobManager(max_cpu=1, max_gpu=0, mode=mode)
    comparison = memory_store.Comparison(**SMALL)
    job = manager.submit(comparison, "", "s", name="memory")
    assert job.kind.name == "memory"
    wait_for(lambda: not job.active, 120)
    assert job.status == "finished", job.message
    assert job.progress is not None and job.progress.step == comparison.total_steps
    alone = memory_store.train_comparison(comparison, tmp_path / "alone")
    assert {k: s.accuracy for k, s in job.result.cells.items()} == {k: s.accuracy for k, s in alone.cells.items()}
    again = JobManager(max_cpu=1, max_gpu=0, mode=mode).adopt(job.token, "t")
    assert again.config == comparison and again.result.cells["gru"].accuracy == alone.cells["gru"].accuracy


def test_a_queued_comparison_waits_for_the_slot_and_can_be_stopped(tmp_path, monkeypatch):
    from core.nn import memory_store
    from core.runs.jobs import JobManager
    from test_training import wait_for
    monkeypatch.setenv("RNNLAB_RUNS_DIR", str(tmp_path))
    manager = JobManager(max_cpu=1, max_gpu=0, mode="thread")
    first = manager.submit(memory_store.Comparison(**{**SMALL, "steps": 100_000 // 3}), "", "a")
    second = manager.submit(memory_store.Comparison(**SMALL), "", "b")
    assert second.status == "queued" and manager.position(second) == 1
    wait_for(lambda: first.progress is not None and first.progress.step > 0)
    manager.stop(first.id)
    wait_for(lambda: not first.active and not second.active, 120)
    assert first.status == "stopped" and set(first.result.cells) == {"rnn"}
    assert second.status == "finished"
