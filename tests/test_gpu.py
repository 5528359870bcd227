"""The GPU path (skipped where PyTorch sees no CUDA device; run on a lent GPU by bench/gpu_check.sh).

On a GPU the fused tanh RNN is nn.RNN itself (cuDNN), GRU and LSTM are cuDNN's, and the scratch RNN runs its
Python loop on CUDA tensors. These tests check that all of them compute the same numbers as the CPU code that
core.nn.verify proves right, and that training, stopping, divergence, saving and sampling work there too."""
import copy
import math
import threading

import pytest
import torch

from core.runs import loop as T, saved as R
from core.nn.device import resolve_device
from core.nn.models import ModelSpec, RNNLM
from core.nn.sampling import sample
from core.runs.config import TrainConfig
from registry import cells
from test_training import wait_for

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU visible")

TEXT = ("the quick brown fox jumps over the lazy dog while the time traveller talks of the fourth dimension "
        "and the psychologist doubts him and the medical man smiles ") * 40
SMALL = dict(split="whole", truncation="detach", hidden_size=24, optimizer="adam", lr=1e-2, epochs=3, batch_size=8,
             num_steps=16, device="cuda", sample_length=20)
SPECS = [dict(cell=c) for c in cells()] + [dict(cell="rnn", num_layers=2), dict(cell="rnn", embed_dim=8),
                                           dict(cell="lstm", embed_dim=8, num_layers=2)]   # every cell, and more


def _loss_and_grads(net, tokens, targets, state):
    net.zero_grad(set_to_none=True)
    loss, _ = net.loss(tokens, targets, state)
    loss.backward()
    return float(loss.detach()), {k: p.grad.detach().cpu() for k, p in net.named_parameters()}


@pytest.mark.parametrize("dtype, tol", [(torch.float64, 1e-10), (torch.float32, 2e-5)])
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: "-".join(f"{k}{v}" for k, v in s.items()))
def test_cuda_loss_and_gradients_match_the_cpu(spec, dtype, tol):
    resolve_device("cuda")  # the settings training uses on a GPU (deterministic, full float32)
    torch.manual_seed(0)
    V, B, L = 30, 5, 12
    cpu = RNNLM(ModelSpec(vocab_size=V, hidden_size=16, **spec)).to(dtype)
    with torch.no_grad():
        for p in cpu.parameters():
            p.uniform_(-0.4, 0.4)  # large enough that the recurrence is far from linear
    gpu = copy.deepcopy(cpu).cuda()
    tokens, targets = torch.randint(0, V, (B, L)), torch.randint(0, V, (B, L))
    with torch.no_grad():
        _, state = cpu(tokens)   # a state of the cell's own shape, then made random
    state = tuple(torch.randn_like(s) * 0.5 for s in state) if isinstance(state, tuple) else torch.randn_like(state) * 0.5
    gpu_state = tuple(s.cuda() for s in state) if isinstance(state, tuple) else state.cuda()
    cpu_loss, cpu_grads = _loss_and_grads(cpu, tokens, targets, state)
    gpu_loss, gpu_grads = _loss_and_grads(gpu, tokens.cuda(), targets.cuda(), gpu_state)
    assert gpu_loss == pytest.approx(cpu_loss, rel=tol)
    for name, g in cpu_grads.items():
        scale = max(1.0, float(g.abs().max()))
        assert float((gpu_grads[name] - g).abs().max()) <= tol * scale, name


def test_cuda_run_is_reproducible_and_learns():
    a = T.train(TrainConfig(**SMALL), TEXT)
    b = T.train(TrainConfig(**SMALL), TEXT)
    assert a.device.startswith("cuda") and a.status == "finished"
    assert [r.val_ce for r in a.history] == [r.val_ce for r in b.history]
    assert a.history[-1].val_ppl < 0.6 * a.history[0].val_ppl


@pytest.mark.parametrize("cell", cells())
def test_cuda_and_cpu_runs_start_from_the_same_weights_and_agree(cell):
    cfg = dict(SMALL, cell=cell, epochs=1)
    gpu = T.train(TrainConfig(**cfg), TEXT)
    cpu = T.train(TrainConfig(**dict(cfg, device="cpu")), TEXT)
    assert gpu.history[0].val_ce == pytest.approx(cpu.history[0].val_ce, rel=1e-6)
    # After a whole epoch of Adam the float32 rounding of two devices has drifted a little, no more.
    assert gpu.history[-1].val_ce == pytest.approx(cpu.history[-1].val_ce, rel=2e-2)


def test_book_preset_setup_on_cuda_learns():
    cfg = TrainConfig(init="book", num_train=600, num_val=200, batch_size=64, epochs=3, device="cuda",
                      sample_length=10)
    result = T.train(cfg, TEXT)
    assert result.status == "finished"
    assert result.history[-1].val_ppl < result.history[0].val_ppl


def test_cuda_divergence_keeps_the_last_good_weights():
    result = T.train(TrainConfig(**dict(SMALL, optimizer="sgd", lr=100.0, clip=0.0)), TEXT)
    assert result.status == "diverged" and "lower the learning rate" in result.message
    assert all(torch.isfinite(p).all() for p in result.lm.net.parameters())


def test_cuda_stop_event_is_honoured():
    stop = threading.Event()
    seen = []

    def on_progress(p):
        seen.append(p.step)
        stop.set()

    result = T.train(TrainConfig(**dict(SMALL, epochs=50)), TEXT, on_progress=on_progress, stop_event=stop,
                     report_every=0.0)
    assert result.status == "stopped" and result.history[-1].epoch <= 1


def test_cuda_run_saves_loads_on_the_cpu_and_samples(tmp_path):
    result = T.train(TrainConfig(**dict(SMALL, epochs=1)), TEXT)
    R.save_run(result, tmp_path / "run")
    loaded = R.load_run(tmp_path / "run", device="cpu")
    assert next(loaded.net.parameters()).device.type == "cpu"
    tokens = torch.randint(0, len(result.lm.vocab), (2, 9))
    with torch.no_grad():
        on_gpu = result.lm.net.eval()(tokens.cuda())[0].cpu()
        on_cpu = loaded.net(tokens)[0]
    # Full float32 on both: the devices differ only in the order of their sums (at most 2e-5 here; with cuDNN's
    # default TF32 products one logit was 0.024 off).
    assert float((on_gpu - on_cpu).abs().max()) < 1e-4
    text = sample(result.lm, "the ", 40, 0.8, seed=3).text
    assert len(text) == 40 and set(text) <= set(TEXT)
    assert sample(loaded, "the ", 40, 0.0).text == sample(result.lm, "the ", 40, 0.0).text


def test_training_page_runs_on_the_gpu(corpus_file):
    pytest.importorskip("streamlit")
    from apptest_util import has_subheader, page, rerun_until
    at = page("training", preset="tiny", timeout=120).run()
    assert not at.exception
    at.radio(key="tr.tiny.device").set_value("cuda")
    at.button[0].click().run()  # Train
    assert not at.error
    assert rerun_until(at, has_subheader("finished"), seconds=90)
    assert any("cuda" in c.value for c in at.caption), [c.value for c in at.caption]
    assert math.isfinite(float([m for m in at.metric if m.label.startswith("Validation perplexity")][0].value))


def test_one_gpu_run_at_a_time_and_a_cpu_run_beside_it():
    """Another learner's GPU run waits in the queue while the GPU's one slot is taken; a CPU run starts beside
    it; the queued run starts on the GPU by itself once the first one stops."""
    from core.runs.jobs import JobManager
    manager = JobManager(max_cpu=1)  # max_gpu defaults to one run per visible GPU
    assert manager.max_gpu == torch.cuda.device_count()
    first = manager.submit(TrainConfig(**dict(SMALL, epochs=500)), TEXT, "s1")
    try:
        second = manager.submit(TrainConfig(**dict(SMALL, epochs=1)), TEXT, "s2")
        assert second.status == "queued" and manager.position(second) == 1
        beside = manager.submit(TrainConfig(**dict(SMALL, device="cpu", epochs=1)), TEXT, "s2")
        beside.thread.join(60)
        assert beside.status == "finished" and beside.result.device == "cpu"
    finally:
        manager.stop(first.id)
        first.thread.join(30)
    assert first.status == "stopped" and first.result.device.startswith("cuda")
    wait_for(lambda: second.status == "finished")   # it starts when the slot frees, then trains its one epoch
    assert second.status == "finished" and second.result.device.startswith("cuda")


def test_sampling_page_with_a_model_trained_on_the_gpu():
    pytest.importorskip("streamlit")
    from apptest_util import sampling_with_session_model
    result = T.train(TrainConfig(**dict(SMALL, epochs=1)), TEXT)
    assert next(result.lm.net.parameters()).is_cuda
    at = sampling_with_session_model("gpu run", result.lm)
    assert not at.exception and not at.error
    assert at.selectbox(key="sampling.model").value == "gpu run"
