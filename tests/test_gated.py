"""The gated cells stepped in Python (core.nn.gated, issue 64's cells): their checks in `python -m core verify` can
fail, their gates are what the equations say, and bad input is refused in words."""
import pytest
import torch
from torch import nn

from core.nn.gated import GatedCell
from core.nn.verify import gates as verify_gates


def test_the_checks_can_fail():
    """A GRU with its update gate's rows in the reset gate's place computes other numbers: the forward check sees it."""
    ref, cell, X, state, _ = verify_gates._problem("gru", (2, 5, 3, 4), seed=1)
    with torch.no_grad():
        h = cell.hidden_size
        for p in (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh):
            p.data[:2 * h] = torch.cat([p.data[h:2 * h].clone(), p.data[:h].clone()])
        out_r, _ = ref(X, verify_gates._torch_state("gru", state))
        out_c, _ = cell(X, state)
    assert float((out_r - out_c).abs().max()) > 1e-3


def test_an_open_forget_gate_keeps_the_memory_cell():
    """With the forget gate's bias at +20 and the input gate's at -20, c_t = c_0 to the last digit after 50 steps,
    and the kept gates say why: forget near 1, input near 0."""
    torch.manual_seed(0)
    cell = GatedCell("lstm", 3, 4).double()
    cell.gate_bias("f").fill_(20.0)
    cell.gate_bias("i").fill_(-20.0)
    X = torch.randn(2, 50, 3, dtype=torch.float64)
    c0 = torch.randn(2, 4, dtype=torch.float64)
    with torch.no_grad():
        _, (_, c), g = cell(X, (torch.zeros(2, 4, dtype=torch.float64), c0), gates=True)
    assert torch.allclose(c, c0, atol=1e-6)
    assert g.mean("forget") > 1 - 1e-8 and g.mean("input") < 1e-8 and g.values["output"].shape == (2, 50, 4)


def test_a_gru_with_its_update_gate_shut_copies_its_state():
    torch.manual_seed(0)
    cell = GatedCell("gru", 2, 3).double()
    cell.gate_bias("z").fill_(30.0)           # z near 1: h_t = z h_{t-1} + (1 - z) n, the state carried
    h0 = torch.randn(1, 3, dtype=torch.float64)
    with torch.no_grad():
        _, h, g = cell(torch.randn(1, 20, 2, dtype=torch.float64), h0, gates=True)
    assert torch.allclose(h, h0, atol=1e-9) and set(g.values) == {"reset", "update"}


def test_bad_input_is_refused_in_words():
    with pytest.raises(ValueError, match="cell must be one of"):
        GatedCell("transformer", 2, 3)
    with pytest.raises(ValueError, match="hidden size"):
        GatedCell("gru", 2, 0)
    with pytest.raises(ValueError, match="batch, steps, inputs"):
        GatedCell("gru", 2, 3)(torch.zeros(4, 2))


def test_a_torch_layer_copies_in():
    ref = nn.LSTM(3, 4, batch_first=True)
    cell = GatedCell("lstm", 3, 4).copy_from(ref)
    assert torch.equal(cell.weight_hh, ref.weight_hh_l0) and torch.equal(cell.bias_ih, ref.bias_ih_l0)
