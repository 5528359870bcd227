"""The RNN core: the verification checks as tests, plus shape checks and model behaviour."""
import subprocess
import sys

import numpy as np
import pytest
import torch

from core.nn import rnn_ref, verify
from core.nn.cells import CELLS, get_cell
from core.nn.models import ModelSpec, RNNLM, clip_gradients, load_reference_params

RESULTS = verify.run_checks()


def test_at_least_forty_checks():
    assert len(RESULTS) >= 40


@pytest.mark.parametrize("result", RESULTS, ids=[r.name for r in RESULTS])
def test_verification_check(result):
    assert result.passed, f"{result.name}: error {result.error} > {result.tolerance} {result.detail}"


def test_the_readme_states_the_counts_the_commands_print():
    """Issue 63: the README said 118 numeric checks (there were 122) and 27 exercises passed (21, and 6 skipped,
    without the corpus). The counts it states are these: the checks run here and the exercise bank."""
    import re
    from apptest_util import ROOT
    from core.exercises.bank import BANK
    text = (ROOT / "README.md").read_text()
    stated = {int(n) for n in re.findall(r"(\d+) numeric checks", text)}
    stated |= {int(n) for n in re.findall(r'core verify .*"(\d+) passed, 0 failed"', text)}
    assert stated == {len(RESULTS)}, (stated, len(RESULTS))
    says = re.search(r'core exercises .*"(\d+) passed, 0 failed"(.*)', text)
    assert says and int(says.group(1)) == len(BANK), says
    needs = sum(ex.needs_corpus for ex in BANK.values())
    if needs:
        assert f"{len(BANK) - needs} and {needs} skipped without the corpus" in says.group(2), says.group(2)


def test_verify_command_prints_summary_and_exits_zero():
    out = subprocess.run([sys.executable, "-m", "core", "verify", "-q"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    last = out.stdout.strip().splitlines()[-1]
    passed = int(last.split()[0])
    assert passed >= 40 and last.endswith(" passed, 0 failed")


def test_a_wrong_gradient_is_caught():
    """The checks can fail: break the backward pass and the autograd comparison must notice."""
    case = verify.CASES[0]
    params, tokens, targets, H0 = case.data()
    _, grads = rnn_ref.loss_and_grads(params, tokens, targets, H0)
    numeric = rnn_ref.finite_difference(params, tokens, targets, "W_hh", (1, 2), H0=H0)
    assert verify.rel_err(grads["W_hh"][1, 2], numeric) < 1e-6
    assert verify.rel_err(grads["W_hh"][1, 2] * 1.001, numeric) > 1e-6


@pytest.mark.parametrize("bad, message", [
    (dict(tokens=np.zeros((3,), dtype=int)), "2-D"),
    (dict(tokens=np.full((2, 3), 99)), "token ids"),
    (dict(targets=np.zeros((2, 4), dtype=int)), "same shape"),
    (dict(H0=np.zeros((5, 4))), "H0"),
    (dict(tokens=np.zeros((2, 3))), "integer"),
])
def test_invalid_inputs_raise(bad, message):
    params = rnn_ref.init_params(7, 4)
    args = dict(tokens=np.zeros((2, 3), dtype=int), targets=np.zeros((2, 3), dtype=int), H0=None)
    args.update(bad)
    with pytest.raises(ValueError, match=message):
        rnn_ref.forward(params, **args)


def test_mismatched_parameter_shapes_raise():
    params = rnn_ref.init_params(7, 4)
    params["W_hh"] = np.zeros((4, 5))
    with pytest.raises(ValueError, match="shapes"):
        rnn_ref.forward(params, np.zeros((1, 2), dtype=int))


@pytest.mark.parametrize("kwargs, message", [
    (dict(vocab_size=1), "vocab_size"), (dict(vocab_size=10, cell="transformer"), "cell"),
    (dict(vocab_size=10, hidden_size=0), "hidden_size"), (dict(vocab_size=10, cell="scratch", num_layers=2), "scratch"),
    (dict(vocab_size=10, dropout=1.5), "dropout"),
])
def test_model_spec_validation(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ModelSpec(**kwargs)


@pytest.mark.parametrize("cell", ["scratch", "rnn", "gru", "lstm"])
@pytest.mark.parametrize("embed", [0, 8])
def test_models_run_forward_and_backward(cell, embed):
    model = RNNLM(ModelSpec(13, 10, cell, embed, num_layers=1))
    tokens = torch.randint(0, 13, (3, 7))
    logits, state = model(tokens)
    assert logits.shape == (3, 7, 13)
    logits.sum().backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())


def test_scratch_and_fused_agree_in_float32_too():
    params = rnn_ref.init_params(9, 12, None, seed=4)
    tokens = torch.randint(0, 9, (4, 20))
    a = load_reference_params(RNNLM(ModelSpec(9, 12, "scratch")), params)
    b = load_reference_params(RNNLM(ModelSpec(9, 12, "rnn")), params)
    with torch.no_grad():
        assert torch.allclose(a(tokens)[0], b(tokens)[0], atol=1e-5)


def test_clip_gradients_rejects_bad_threshold():
    p = torch.nn.Parameter(torch.zeros(2))
    p.grad = torch.ones(2)
    with pytest.raises(ValueError, match="max_norm"):
        clip_gradients([p], 0)
    assert clip_gradients([p], 10.0) == pytest.approx(2 ** 0.5)


def test_core_never_imports_streamlit():
    from pathlib import Path
    for path in (Path(__file__).parents[1] / "core").glob("*.py"):
        text = path.read_text()
        assert "import streamlit" not in text and "from streamlit" not in text, path


@pytest.mark.parametrize("cell, embed, layers", [("rnn", 0, 1), ("rnn", 0, 2), ("rnn", 6, 1), ("scratch", 0, 1), ("gru", 0, 1)])
def test_model_loss_equals_cross_entropy_of_logits(cell, embed, layers):
    torch.manual_seed(0)
    model = RNNLM(ModelSpec(11, 9, cell, embed, layers)).double().eval()
    x, y = torch.randint(0, 11, (4, 7)), torch.randint(0, 11, (4, 7))
    logits, s1 = model(x)
    ref = torch.nn.functional.cross_entropy(logits.reshape(-1, 11), y.reshape(-1))
    loss, s2 = model.loss(x, y)
    assert abs(float(loss.detach()) - float(ref.detach())) < 1e-12
    g_ref = torch.autograd.grad(ref, list(model.parameters()))
    g = torch.autograd.grad(model.loss(x, y)[0], list(model.parameters()))
    assert max(float((a - b).abs().max()) for a, b in zip(g, g_ref)) < 1e-12


@pytest.mark.parametrize("cell", sorted(CELLS))
@pytest.mark.parametrize("embed, layers", [(0, 1), (5, 1), (0, 2)])
def test_a_training_step_gives_what_autograd_gives_for_every_cell(cell, embed, layers):
    """RNNLM.training_loss (the loop's step: by hand for one tanh layer over one-hot tokens, else autograd) puts the
    same gradients into .grad as loss() + backward(), bit for bit, for every cell of the registry."""
    if layers > get_cell(cell).max_layers:
        pytest.skip(f"the {cell} cell has one layer")
    torch.manual_seed(1)
    nets = [RNNLM(ModelSpec(11, 9, cell, embed, layers)) for _ in range(2)]
    nets[1].load_state_dict(nets[0].state_dict())
    x, y, state = torch.randint(0, 11, (4, 7)), torch.randint(0, 11, (4, 7)), None
    loss, _, backward = nets[0].training_loss(x, y, state)
    backward()
    ref, _ = nets[1].loss(x, y, state)
    ref.backward()
    assert torch.equal(loss.detach(), ref.detach())
    for a, b in zip(nets[0].parameters(), nets[1].parameters()):
        assert (a.grad is None) == (b.grad is None)
        assert a.grad is None or torch.equal(a.grad, b.grad)
    by_hand = cell == "rnn" and embed == 0 and layers == 1    # the one path without an autograd graph
    assert (loss.grad_fn is None) == by_hand


def test_allocator_tuning_takes_on_glibc_and_is_harmless():
    import platform
    from core.runs.budget import keep_freed_memory, release_freed_memory
    took = keep_freed_memory()
    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        assert took is True
    x = torch.randn(4096, 1024)  # 16 MiB: from the heap now, and reusable after it is freed
    del x
    release_freed_memory()
    assert float(torch.ones(3).sum()) == 3.0


@pytest.mark.parametrize("cell", ["scratch", "rnn"])
def test_one_hot_input_gradients_are_bitwise_repeatable(cell):
    # Many repeated token ids in one batch: a parallel scatter-add would give different last digits each time.
    torch.manual_seed(0)
    model = RNNLM(ModelSpec(28, 32, cell))
    tokens, targets = torch.randint(0, 28, (512, 16)), torch.randint(0, 28, (512, 16))
    seen = set()
    for _ in range(6):
        model.zero_grad(set_to_none=True)
        model.loss(tokens, targets)[0].backward()
        seen.add(tuple(p.grad.double().sum().item().hex() for p in model.parameters()))
    assert len(seen) == 1


def test_log_probabilities_written_over_the_logits_and_the_target_positions():
    # The fused output layer's log-softmax overwrites its logits on the CPU: the same numbers as log_softmax into
    # a new tensor, bit for bit. Target positions: two sizes in a row (their column numbers are kept by size).
    from core.nn.fused import log_probs_t, target_positions
    g = torch.Generator().manual_seed(3)
    weight, bias = torch.randn(28, 32, generator=g), torch.randn(28, generator=g)
    for n in (4096, 1000, 4096):
        h = torch.randn(n, 32, generator=g)
        assert torch.equal(log_probs_t(h, weight, bias),
                           torch.log_softmax(torch.mm(weight, h.t()) + bias.unsqueeze(1), dim=0))
        targets = torch.randint(0, 28, (n,), generator=g)
        at = target_positions(targets)
        assert torch.equal(torch.div(at, n, rounding_mode="floor"), targets)
        assert torch.equal(at % n, torch.arange(n))


def test_every_checks_name_is_said_in_the_pages_language():
    """Issue 66: the RNN cell page shows each check's name through a template of core.nn.verify.words: every name
    and detail is matched (in English it reads back as itself), and in Chinese it is Chinese around its identifiers."""
    import re
    from core.i18n import speaking
    from core.nn.verify import words
    said = [s for r in RESULTS for s in (r.name, r.detail) if s and "== X W_xh" not in s]   # that one is all maths
    assert all(words.known(s) for s in said)
    assert all(words.words(s) == s for s in said)
    with speaking("zh"):
        assert all(re.search(r"[\u4e00-\u9fff]", words.words(s)) for s in said)
