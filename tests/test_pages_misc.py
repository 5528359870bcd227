"""AppTest for the RNN cell page."""
from apptest_util import metric, page


def test_cell_page_defaults_and_stepping():
    at = page("rnn_cell").run()
    assert not at.exception and not at.error
    assert float(metric(at, "Largest difference")) < 1e-12
    first = [m.value for m in at.markdown if m.value.startswith("Step **t = 1**")]
    assert first
    at.slider(key="cell.t").set_value(3).run()
    assert any(m.value.startswith("Step **t = 3**") for m in at.markdown)
    assert float(metric(at, "Relative error")) < 1e-6


def test_cell_page_runs_the_proof():
    at = page("rnn_cell").run()
    at.button(key="cell.verify").click().run()
    assert not at.exception
    summary = at.success[0].value
    passed = int(summary.split()[0])
    assert passed >= 40 and summary.endswith("0 failed")


def test_cell_page_bad_input():
    at = page("rnn_cell", word="a", h="99").run()
    assert not at.exception
    assert at.error and "two letters" in at.error[0].value
    assert any("h=" in w.value for w in at.warning)
