"""Issue 14's corrections: each sentence a page shows now follows the numbers on the same page."""
import re

import numpy as np
import pytest

from apptest_util import page, shown
from core.sequences import forecast
from core.nn import gradflow, param_counts


def test_noise_power_is_the_mean_square_of_the_noise():
    assert forecast.noise_power(forecast.make_series(500, 0.0, 0), 0, 500) == pytest.approx(0.0, abs=1e-24)
    x = forecast.make_series(1000, 0.2, 0)
    t = np.arange(601, 1001)
    assert forecast.noise_power(x, 600, 1000) == pytest.approx(np.mean((x[600:] - np.sin(0.01 * t)) ** 2))


def test_forecasting_explains_a_test_error_below_the_training_error_with_its_own_numbers():
    at = page("forecasting").run()
    text = " ".join(m.value for m in at.markdown)
    x = forecast.make_series(1000, 0.2, 0)
    a = forecast.analyse(x, 4, 600, 16)
    assert a.test_mse < a.train_mse                      # the case to explain, at the defaults
    assert f"{forecast.noise_power(x, 600, 1000):.4f} on the test range" in text
    assert f"the test error is {a.k_mse:.4f}, {a.k_mse / a.test_mse:.1f} times the one-step error" in text
    assert "whatever τ" not in text


def test_the_parameter_calculator_names_its_largest_terms_from_the_numbers():
    at = page("tokens").run()
    text = " ".join(m.value for m in at.markdown)
    assert "W_hh has 65,536 parameters (the largest term has 39.1 times as many)" in text   # |V| = 10,000, h = d = 256
    assert "recurrent weights W_hh" in param_counts.largest_terms(param_counts.rnn_parameter_terms(28, 0, 512)
                                                                    ).text.split(".")[0]


def test_the_parameter_calculator_at_the_smallest_sizes():
    """Issue 62: at V=2&k=1&h=1&d=0 it wrote '10^0.6' for a 4-entry table, '1, 2 times fewer', and named two of
    three terms tied at 2, leaving out b_q."""
    at = page("tokens", V="2", k="1", h="1", d="0").run()
    assert not at.exception
    assert any(m.value == "4" for m in at.metric)                          # 2^(1+1) entries, written out
    text = " ".join(shown(m) for m in at.markdown)
    assert "tied at 2 each, are input weights W_xh (|V| x h), output weights W_hq (h x |V|) and output bias b_q" in text
    assert "W_hh has 1 parameter (the largest term has 2 times as many)" in text and "1, 2 times" not in text
    assert param_counts.power_of_ten(10 ** 84) == "10^84" and param_counts.power_of_ten(531_441) == "531,441"


def test_the_saturation_message_quotes_the_measured_slope():
    at = page("gradient_flow", scale="2", input_scale="3").run()
    a = gradflow.analyse(32, 2.0, 24, input_scale=3.0)
    info = " ".join(i.value for i in at.info)
    assert f"average {a.mean_slope:.2f} in this run" in info and f"{100 * a.saturated:.0f}% of the units" in info


def test_the_orthogonal_note_holds_only_at_scale_one():
    one = gradflow.analyse(16, 1.0, 10, kind="orthogonal", use_tanh=False)
    half = gradflow.analyse(16, 0.5, 10, kind="orthogonal", use_tanh=False)
    assert np.allclose(one.linear, 1.0) and np.allclose(half.linear, 0.5 ** np.arange(11))
    notes = " ".join(m.value for m in page("gradient_flow").run().markdown)
    assert "at weight scale 1" in notes and "exactly sᵏ" in notes


def test_the_gradient_flow_page_says_which_convention_it_uses():
    captions = " ".join(c.value for c in page("gradient_flow").run().caption)
    assert "columns" in captions and "rows" in captions


def test_the_clipping_caption_follows_the_figure_at_the_defaults():
    at = page("gradient_flow").run()
    a = gradflow.analyse()
    caption = " ".join(shown(c) for c in at.caption)
    assert f"multiplied by the same {a.clip_factor:.3g}" in caption
    # issue 41: the norm it quotes is the stacked state gradients', and it says so (training clips the parameters')
    assert "with respect to the states" in caption and "gradient of the parameters" in caption


def test_the_sampling_lab_says_its_model_is_not_the_chapters():
    at = page("sampling").run()
    caption = " ".join(shown(c) for c in at.caption)
    assert "Not the chapter's model" in caption and re.search(r"3 layers of 384", caption)


def test_the_concatenation_shapes_are_spelt_out():
    text = " ".join(m.value for m in page("rnn_cell").run().markdown)
    assert "3×5" in text and "5×4" in text and "before the loop" in text


def test_the_proof_compares_with_a_plain_torch_nn_rnn_and_says_so():
    import torch
    from core.nn import verify
    from core.nn.fused import FusedRNN
    case = verify.CASES[0]
    model = verify.torch_model(case, "torch", case.data()[0])
    assert type(model.rnn) is torch.nn.RNN and not isinstance(model.rnn, FusedRNN)
    names = [r.name for r in verify.forward_checks()] + [r.name for r in verify.autograd_checks()]
    assert sum("torch.nn.RNN (torch's own kernel)" in n for n in names) == len(verify.CASES)
    assert any("autograd through torch.nn.RNN (torch's own backward)" in n for n in names)
    fused_rows = [n for n in names if "fused" in n]
    assert fused_rows and all("hand-written backward" in n or "forward" in n for n in fused_rows)
    assert not any(n.endswith("== nn.RNN") or "(nn.RNN)" in n for n in names)


def test_the_text_lab_sets_an_ngram_model_beside_the_rnn(corpus_file):
    at = page("tokens").run()
    caption = next(shown(c) for c in at.caption if "held out" in shown(c))
    assert "α = 0.1" in caption and "The pretrained RNN scores 3.94" in caption
    at.select_slider(key="tokens.alpha").set_value(1.0).run()
    assert not at.exception
    assert any("α = 1)" in shown(c) for c in at.caption)


def test_the_text_lab_shows_how_bpe_learns(corpus_file):
    at = page("tokens").run()
    table = at.table[0].value
    assert table.index[0].startswith("256 (bytes only, no merge)") and table["tokens"].iloc[0] == 32
    assert list(table["tokens"]) == sorted(table["tokens"], reverse=True)   # bigger vocabularies, fewer tokens
    assert any("The first merge joins “␣” and “t” (5,570 times)" in shown(c) for c in at.caption)
    at.text_input(key="tokens.bpetext").set_value("zzz").run()
    assert at.table[0].value["tokens"].iloc[0] == 3 and not at.exception


def test_a_one_hot_row_times_w_xh_is_a_row_lookup():
    from core.nn import cell_demo
    run = cell_demo.read_word("machine", 4, 0)
    for t in range(1, run.steps + 1):
        look = cell_demo.one_hot_lookup(run, t)
        assert look.difference == 0.0 and look.token_id == run.x_ids[0, t - 1]
    assert param_counts.input_parameters(28, 256, 0) == 28 * 256
    assert param_counts.input_parameters(10_000, 256, 64) == 10_000 * 64 + 64 * 256
    at = page("rnn_cell").run()
    assert not at.exception
    assert any(m.label.startswith("Product minus lookup") and m.value == "0, exactly" for m in at.metric)
    assert any("one-hot: W_xh" in str(df.value.columns.tolist()) for df in at.dataframe)
