"""The training loop: reproducibility, stop, divergence, the book initialisation, jobs and their limits."""
import math
import sys
import threading
import time

import pytest
import torch

from core.runs import loop as T
from core.runs.config import TrainConfig
from core.runs.data import batches, book_windows, prepare_data
from core.nn.models import perplexity
from registry import cells

TEXT = ("the quick brown fox jumps over the lazy dog while the time traveller talks of the fourth dimension "
        "and the psychologist doubts him and the medical man smiles ") * 40

SMALL = dict(split="whole", truncation="detach", hidden_size=24, optimizer="adam", lr=1e-2, epochs=3, batch_size=8,
             num_steps=16, device="cpu", sample_length=20)


def test_cuda_request_without_gpu_is_clear():
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(ValueError, match="no CUDA GPU"):
        T.train(TrainConfig(**{**SMALL, "device": "cuda"}), TEXT)


@pytest.mark.parametrize("cell", cells())
def test_loss_decreases(cell):
    result = T.train(TrainConfig(**{**SMALL, "cell": cell, "epochs": 4}), TEXT)
    assert result.status == "finished"
    ppl = [row.val_ppl for row in result.history]
    assert ppl[-1] < 0.6 * ppl[0]
    assert result.history[0].epoch == 0 and len(result.history) == 5


def test_book_split_and_bpe_run():
    cfg = TrainConfig(tokenizer="bpe", bpe_vocab=300, embed_dim=8, hidden_size=16, num_train=200, num_val=50,
                      batch_size=32, num_steps=8, epochs=2, lr=1.0, device="cpu", sample_length=10)
    result = T.train(cfg, TEXT)
    assert result.status == "finished"
    last = result.final
    assert math.isfinite(last.val_bpb) and last.val_bpb > 0


def test_book_batches_are_the_windows_read_time_major():
    # Each batch holds the very windows of train_x and train_y in the run's shuffled order, as (batch, time)
    # views of time-major storage (what the fused RNN reads without a copy); a validation chunk too.
    cfg = TrainConfig(num_train=300, num_val=100, num_steps=12, batch_size=64, device="cpu")
    data = prepare_data(cfg, TEXT)
    order = torch.randperm(300, generator=torch.Generator().manual_seed(cfg.seed))
    got = list(batches(data, cfg, torch.Generator().manual_seed(cfg.seed)))
    assert [len(x) for x, _, _ in got] == [64, 64, 64, 64, 44]
    for k, (x, y, fresh) in enumerate(got):
        idx = order[64 * k: 64 * (k + 1)]
        assert fresh and torch.equal(x, data.train_x[idx]) and torch.equal(y, data.train_y[idx])
        assert x.t().is_contiguous() and y.t().is_contiguous()
    x, y = book_windows(data, "val", slice(10, 40))
    assert torch.equal(x, data.val_x[10:40]) and torch.equal(y, data.val_y[10:40]) and x.t().is_contiguous()


def test_same_seed_same_losses():
    a = T.train(TrainConfig(**SMALL), TEXT)
    b = T.train(TrainConfig(**SMALL), TEXT)
    assert [r.val_ppl for r in a.history] == [r.val_ppl for r in b.history]


def test_stop_event_honoured_within_one_step():
    stop = threading.Event()
    steps = []

    def on_progress(p):
        steps.append(p.step)
        if p.step >= 3:
            stop.set()

    result = T.train(TrainConfig(**{**SMALL, "epochs": 50}), TEXT, on_progress=on_progress, stop_event=stop,
                     report_every=0.0)
    assert result.status == "stopped"
    assert result.history[-1].step <= 4
    assert all(math.isfinite(r.val_ppl) for r in result.history)


def test_divergence_stops_cleanly_and_keeps_weights():
    cfg = TrainConfig(**{**SMALL, "optimizer": "sgd", "lr": 100.0, "clip": 0.0, "epochs": 20})
    result = T.train(cfg, TEXT)
    assert result.status == "diverged"
    assert "diverged at step" in result.message and "lower the learning rate" in result.message
    assert all(torch.isfinite(p).all() for p in result.lm.net.parameters())


def test_bits_per_byte_formula_by_hand():
    # A uniform model over 4 tokens has cross-entropy ln 4 nats = 2 bits per token; at 2 bytes per token
    # that is 1 bit per byte.
    ce = math.log(4)
    assert ce / T.LN2 / 2.0 == pytest.approx(1.0)
    assert perplexity(ce) == pytest.approx(4.0)


def test_text_too_short_for_config():
    with pytest.raises(ValueError, match="tokens"):
        prepare_data(TrainConfig(num_train=10_000), TEXT[:500])


def test_a_busy_server_queues_runs_and_starts_them_by_itself():
    from core.runs.jobs import JobManager
    manager = JobManager(max_cpu=1, max_gpu=0, mode="thread")
    manager.max_queue = 1
    first = manager.submit(TrainConfig(**{**SMALL, "epochs": 200}), TEXT, "s1")
    second = manager.submit(TrainConfig(**{**SMALL, "epochs": 1}), TEXT, "s2")   # another learner: waits
    try:
        assert second.status == "queued" and manager.position(second) == 1 and second.active
        with pytest.raises(ValueError, match="Your own run on the CPU is still going: stop it"):
            manager.submit(TrainConfig(**SMALL), TEXT, "s1")
        with pytest.raises(ValueError, match="1 more are waiting"):
            manager.submit(TrainConfig(**SMALL), TEXT, "s3")                      # the queue is full
    finally:
        manager.stop(first.id)
        first.thread.join(30)
    assert first.status == "stopped"
    deadline = time.monotonic() + 60
    while second.status != "finished" and time.monotonic() < deadline:   # started when the slot freed
        time.sleep(0.1)
    assert second.status == "finished" and second.text is None and manager.position(second) == 0


def test_a_queued_run_can_be_cancelled():
    from core.runs.jobs import JobManager
    manager = JobManager(max_cpu=1, max_gpu=0, mode="thread")
    first = manager.submit(TrainConfig(**{**SMALL, "epochs": 200}), TEXT, "s1")
    waiting = manager.submit(TrainConfig(**SMALL), TEXT, "s2")
    manager.stop(waiting.id)
    assert waiting.status == "stopped" and "before it started" in waiting.message and not manager.queue
    manager.stop(first.id)
    first.thread.join(30)


def wait_for(condition, seconds: float = 60) -> None:
    """Wait for a state (polling), failing after `seconds`: never a fixed sleep that a busy machine outlasts."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


def test_a_run_nobody_watches_stops_after_the_documented_time_and_is_then_dropped():
    """The manager's clock is the test's: the run goes unwatched for 101 s of it, whatever the machine's speed,
    then stops keeping what it learnt, and is dropped from memory."""
    from core.runs.jobs import JobManager
    alive, now = {"s": True}, [1000.0]
    manager = JobManager(max_cpu=1, session_alive=lambda sid: alive["s"], abandon_after=100.0,
                         clock=lambda: now[0])
    job = manager.submit(TrainConfig(**{**SMALL, "epochs": 500}), TEXT, "s")
    wait_for(lambda: job.progress is not None and job.progress.step > 0)   # it has learnt something
    alive["s"] = False
    assert manager.unwatched_for(job) == 0.0 and job.active   # gone just now: not yet abandoned
    now[0] += 101.0
    job.thread.join(60)
    assert job.status == "stopped" and "no one watching" in job.message and job.result is not None
    assert job.result.history[-1].step > 0          # everything learnt is kept
    assert manager.for_session("other") == [] and job.id not in manager.jobs and job.result is None


def test_a_reloaded_page_adopts_its_run_by_token():
    """A reload (or a network drop) gives the browser a new session: the run goes on and the new session,
    opening ?run=TOKEN, gets it back, live, then finished."""
    from core.runs.jobs import JobManager
    alive = {"old": True, "new": True}
    manager = JobManager(max_cpu=1, session_alive=lambda sid: alive.get(sid, False), abandon_after=30)
    job = manager.submit(TrainConfig(**{**SMALL, "epochs": 3}), TEXT, "old")
    alive["old"] = False                                    # the tab reloads: its session is gone
    assert manager.adopt("not-a-token", "new") is None
    assert manager.adopt(job.token, "new") is job and manager.for_session("new") == [job]
    job.thread.join(60)
    assert job.status == "finished" and manager.for_session("new") == [job] and job.result is not None


def test_book_init_gives_the_fused_rnn_one_hidden_bias_like_the_book():
    """nn.RNN's two hidden biases only enter as a sum; with the book's recipe b_hh stays zero, so SGD moves the
    one bias the book's model has at the book's learning rate."""
    cfg = TrainConfig(init="book", num_train=300, num_val=100, batch_size=32, num_steps=8, epochs=2, lr=1.0,
                      device="cpu", sample_length=5, num_layers=2)
    net = T.train(cfg, TEXT).lm.net
    for k in range(2):
        assert torch.count_nonzero(getattr(net.rnn, f"bias_hh_l{k}")) == 0
        assert torch.count_nonzero(getattr(net.rnn, f"bias_ih_l{k}")) > 0
    default = T.train(TrainConfig(**{**SMALL, "epochs": 1}), TEXT).lm.net  # nn.RNN's own init: both biases learn
    assert torch.count_nonzero(default.rnn.bias_hh_l0) > 0


def test_a_run_that_cannot_fit_in_memory_is_refused_before_it_starts():
    from core.runs import budget
    big = TrainConfig(hidden_size=2048, batch_size=8192, num_steps=512, num_train=8192, num_val=50, device="cpu")
    assert budget.plan_run(big, 28).need > 50 * 2**30
    assert budget.plan_run(TrainConfig(), 28).need < 2**30          # the book preset fits anywhere
    reports = []
    with pytest.raises(ValueError, match="Lower the hidden units"):
        T.train(big, TEXT * 40, on_progress=reports.append)
    assert reports == []                                              # refused before its first report


def test_the_memory_estimate_bounds_a_real_run():
    """The estimate is not below what a small run really allocates for its weights and activations."""
    from core.runs import budget
    cfg = TrainConfig(**{**SMALL, "hidden_size": 128, "batch_size": 16, "num_steps": 32})
    net = cfg.model(30)
    weights = sum(p.numel() for p in net.parameters())
    assert budget.plan_run(cfg, 30).params == weights
    assert budget.plan_run(cfg, 30).need > 4 * weights * 5


@pytest.mark.parametrize("vocab,hidden,steps", [(28, 32, 32), (1024, 128, 32), (30, 2048, 64), (50_000, 64, 512)])
def test_validation_chunks_stay_under_the_fresh_memory_bound(vocab, hidden, steps):
    """A validation chunk's scores and states fit in EVAL_NUMBERS numbers (past glibc's mapping threshold every
    chunk would be faulted in anew), except that a chunk holds at least one window."""
    from core.runs import budget
    cfg = TrainConfig(hidden_size=hidden, num_steps=steps)
    windows = budget.chunk_windows(cfg, vocab)
    assert windows >= 1
    assert windows == 1 or windows * steps * max(vocab, hidden) <= budget.EVAL_NUMBERS
    assert (windows + 1) * steps * max(vocab, hidden) > budget.EVAL_NUMBERS   # and as large as that allows
    assert budget.chunk_windows(TrainConfig(), 28) == 2048   # the book's 5,000 windows: three chunks of 1,667


def test_the_heap_keeps_what_a_step_frees_and_the_estimate_counts_it():
    from core.runs import budget
    assert budget.thresholds(0) == (64 << 20, 256 << 20)
    assert budget.thresholds(128 << 20) == (256 << 20, 512 << 20)   # the BPE preset's scores: 128 MiB a step
    assert budget.thresholds(4 << 30) == (512 << 20, 1 << 30)        # a huge run keeps at most 1 GiB
    bpe = TrainConfig(tokenizer="bpe", bpe_vocab=1024, embed_dim=64, hidden_size=128, num_train=50_000)
    assert budget.plan_run(bpe, 1024).largest == 1024 * 32 * 1024 * 4
    assert budget.plan_run(TrainConfig(cell="lstm", hidden_size=256), 28).largest == 1024 * 32 * 256 * 4 * 4
    smaller = budget.plan_run(bpe, 1024).need - budget.kept_bytes(budget.plan_run(bpe, 1024).largest)
    assert smaller > 0 and budget.plan_run(bpe, 1024).need - smaller == 512 << 20


def test_stop_skips_a_slow_validation_pass(monkeypatch):
    """When the last validation took longer than SLOW_VALIDATION_S, Stop does not make the learner wait for
    another one. Every pass counts as slow here (a threshold of 0 s), so no machine is too fast for the test."""
    real, validations = T.evaluate, []
    monkeypatch.setattr(T, "SLOW_VALIDATION_S", 0.0)

    def slow(*args, **kwargs):
        if kwargs.get("part", "val") == "val":
            validations.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(T, "evaluate", slow)
    stop = threading.Event()
    seen = []

    def on_progress(p):
        seen.append(p.step)
        if p.step > 0:
            stop.set()

    result = T.train(TrainConfig(**{**SMALL, "epochs": 50}), TEXT, on_progress=on_progress, stop_event=stop,
                     report_every=0.0)
    assert result.status == "stopped" and result.history[-1].step > 0
    assert math.isnan(result.history[-1].val_ppl)          # the slow pass was skipped ...
    assert not math.isnan(result.history[0].val_ppl)       # ... not the ones before
    assert len(validations) == 1                              # one slow pass (epoch 0) and the stop, no second


class StopPressedInsideAStep(threading.Event):
    """A Stop that a learner presses while a step is under way, on no clock: once armed, it is set by the first
    look the step itself takes at it (core.nn.interrupt.poll, inside the forward or backward pass)."""

    armed = False

    def is_set(self) -> bool:
        if self.armed and sys._getframe(1).f_code.co_name == "poll":
            self.set()
        return super().is_set()


@pytest.mark.parametrize("cell", cells())
def test_stop_lands_inside_a_step(cell):
    """Stop ends the run inside the step it lands in (the step is abandoned, nothing learnt before it is lost),
    for every cell. How long that takes on a step of seconds: bench/stop_latency.py."""
    cfg = TrainConfig(**{**SMALL, "cell": cell, "epochs": 1})
    stop = StopPressedInsideAStep()

    def arm(p):
        stop.armed = True    # after the report before the first step: the next poll is inside step 1
    result = T.train(cfg, TEXT, on_progress=arm, stop_event=stop)
    assert result.status == "stopped" and "during step 1" in result.message   # inside the step, not after it
    assert result.history[-1].step == 0


def test_the_first_step_is_reported_at_once_then_every_report_every_seconds():
    """Issue 43: Train answers within a step: the first trained step is reported even when the next report is a
    long way off (report_every), so the page shows a train perplexity after one step, not after a second."""
    reports = []
    T.train(TrainConfig(**{**SMALL, "epochs": 2}), TEXT, on_progress=reports.append, report_every=3600.0)
    steps = [p.step for p in reports]
    assert steps[:2] == [0, 1] and math.isfinite(reports[1].train_ppl)
    assert 2 not in steps    # no other report inside an epoch: only epoch ends and the final one follow


def test_a_saved_run_reaches_its_listener_once_from_its_follower_and_a_failing_listener_loses_nothing():
    """Issue 62: a learner's class keeps a run's curve when the run is saved (the job's on_saved, called by the
    thread that follows the run), not when a teacher's page happens to draw; the teacher's view only reads."""
    from core import classroom as C
    from core.labs import classroom as reports
    from core.runs.jobs import JobManager
    manager = JobManager(max_cpu=1, max_gpu=0, mode="thread")
    info = C.create_class("Thursday")
    ana = C.join(info.join_code, "Ana")
    threads = []
    copy = lambda key, run: (threads.append(threading.current_thread().name),   # noqa: E731
                             C.keep_history(key, run.history, status=str(run.status)))
    job = manager.submit(TrainConfig(**SMALL), TEXT, "s1", on_saved=copy)
    C.record_run(ana, job.token, job.name, job.config.to_dict())
    job.thread.join(120)
    assert job.status == "finished" and job.on_saved is None and threads == [job.thread.name]
    kept = C.class_runs(info.id)[0].history
    assert C.class_runs(info.id)[0].status == "finished"
    assert [r.val_ppl for r in kept] == [r.val_ppl for r in job.result.history]
    before = C.version(info.id)
    shown = reports.run_histories(info)          # what the teacher's view draws: read, never written
    assert len(shown[0].history) == len(kept) and C.version(info.id) == before
    bad = manager.submit(TrainConfig(**SMALL), TEXT, "s2", on_saved=lambda key, run: 1 / 0)
    bad.thread.join(120)
    assert bad.status == "finished" and bad.result is not None and bad.result.history


def test_the_plan_cuts_a_batch_into_blocks_on_the_book_split_only():
    """The plan says how many blocks a batch is cut into and the token ids the largest block holds: a training batch
    or a validation chunk, whichever has more windows, in `blocks` nearly equal parts (the first ones larger)."""
    from dataclasses import replace
    from core.runs import budget
    from core.runs.config import PRESETS
    book = PRESETS["book"].config           # 2 blocks; batches of 1,024 windows of 32 steps, 32 hidden units
    plan = budget.plan_run(book, 28)        # a validation chunk: 2^21 numbers / (32 steps x 32 hidden) = 2,048
    assert plan.blocks == 2 and plan.chunk == 2048 and plan.block_ids == 1024 * 32
    odd = budget.plan_run(replace(book, blocks=3, batch_size=100, num_val=10), 28)
    assert odd.chunk > 100 and odd.block_ids == math.ceil(odd.chunk / 3) * 32
    whole = budget.plan_run(replace(book, split="whole", truncation="detach", blocks=3), 28)
    assert whole.blocks == 1 and whole.block_ids == max(whole.chunk, 1024) * 32
