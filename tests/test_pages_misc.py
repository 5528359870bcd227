"""AppTest for the RNN cell, Sampling and Training pages."""
import re
import time
from dataclasses import replace

import pytest

from core.labs import Url

from apptest_util import has_subheader, metric, page, rerun_until, sampling_with_session_model, shown
from core.runs.config import PRESETS


def forget_runs(manager, stop=None) -> None:
    """Stop this run and wait for it (if given), then forget every run: AppTest sessions share one session id, so a
    test that trains starts and ends with none."""
    if stop is not None:
        manager.stop(stop.id)
        stop.thread.join(60)
    for job in list(manager.jobs.values()):
        manager.forget(job.id)


def test_cell_page_defaults_and_stepping():
    at = page("rnn_cell").run()
    assert not at.exception and not at.error
    assert float(metric(at, "Largest difference")) < 1e-12
    first = [m.value for m in at.markdown if shown(m).startswith("Step t = 1:")]
    assert first
    at.slider(key="rnn_cell.t").set_value(3).run()
    assert any(shown(m).startswith("Step t = 3:") for m in at.markdown)
    assert float(metric(at, "Relative error")) < 1e-6


def test_cell_page_runs_the_proof():
    at = page("rnn_cell").run()
    at.button(key="rnn_cell.verify").click().run()
    assert not at.exception
    summary = at.success[0].value
    passed = int(summary.split()[0])
    assert passed >= 40 and summary.endswith("0 failed")
    from core.nn import verify
    from core.labs.rnn_cell import tol
    text, tolerances = " ".join(m.value for m in at.markdown), [r[2] for r in at.session_state["rnn_cell.results"]]
    assert f"no more than its tolerance: {tol(verify.TOL_ABS)}" in text     # the tolerances said are those used
    said = {verify.TOL_ABS, verify.TOL_REL, verify.TOL_IDENTITY, 0.0}
    assert set(tolerances) <= said and f"{tol(verify.TOL_IDENTITY)} where" in text
    exact = tolerances.count(0.0)
    caption = " ".join(c.value for c in at.caption)
    assert f"{exact} checks must agree to the last bit" in caption and "Largest error against its tolerance: " in caption


def test_the_proofs_words_follow_its_numbers():
    from core.labs.rnn_cell import largest_error_words
    rows = [("a", 2e-9, 1e-6, True), ("b", 5e-7, 1e-5, True), ("c", 0.0, 0.0, True)]
    said = ("Largest error against its tolerance: 5.0e-07 (tolerance 1e-5). "
            "1 check must agree to the last bit (tolerance 0).")
    assert largest_error_words(rows) == said.replace("e-", "e\u2011")   # no line break inside a number
    assert largest_error_words(rows[2:] * 2) == "2 checks must agree to the last bit (tolerance 0)."


def test_cell_page_bad_input():
    at = page("rnn_cell", word="a", h="99").run()
    assert not at.exception
    assert at.error and "two letters" in at.error[0].value
    assert any("h=" in w.value for w in at.warning)


def test_cell_page_two_letter_words_have_one_step_and_no_slider():
    for word in ("ab", "zz", "日本"):
        at = page("rnn_cell", word=word).run()
        assert not at.exception, word
        assert any(shown(m).startswith("Step t = 1:") for m in at.markdown), word
        assert not [s for s in at.slider if s.key == "rnn_cell.t"]


def test_sampling_top_k_is_bounded_by_the_model():
    at = page("sampling", top_k="40").run()  # inside the old slider's range, beyond the 28-token model
    assert not at.exception and not at.error
    assert at.slider(key="sampling.topk").max <= 28
    assert any("topk" in w.value for w in at.warning)


def test_sampling_page_changes_with_temperature_and_regenerates():
    at = page("sampling").run()
    assert not at.exception and not at.error
    first = at.metric[0].value
    at.slider(key="sampling.temp").set_value(1.6).run()
    assert not at.exception
    assert at.metric[0].value != first  # higher temperature: more surprising text
    seed = at.number_input(key="sampling.seed").value
    at.button[0].click().run()
    assert at.number_input(key="sampling.seed").value == seed + 1
    assert not at.exception


def test_sampling_page_bad_query_params_and_unknown_characters():
    at = page("sampling", temperature="hot", top_k="-4", prefix="Ünïcode 123!").run()
    assert not at.exception
    assert len(at.warning) >= 2


def test_training_page_runs_a_tiny_job_and_exports(corpus_file):
    at = page("training", preset="tiny", timeout=120).run()
    assert not at.exception
    at.button[0].click().run()  # Train
    assert not at.error
    assert rerun_until(at, has_subheader("finished"), seconds=90)
    assert float(metric(at, "Validation perplexity")) < 15
    exports = [b for b in at.get("download_button")       # each chart has its own CSV too, the sidebar the notebook
               if b.label not in ("Data (.csv)", "Download as notebook")]
    assert [b.label for b in exports] == ["Download run (.zip: weights, JSON, CSV)", "Metrics (.csv)"]
    use = [b for b in at.button if b.label == "Use in the Sampling lab"][0]
    use.click().run()
    assert "tiny #1" in at.session_state["_rnnlab_session_models"]
    from core.runs import store
    token = at.query_params[Url.RUN]
    token = token[0] if isinstance(token, list) else token
    assert store.run_folder(token).is_dir()
    [b for b in at.button if b.label == "Delete"][0].click().run()
    assert not at.exception and not any(b.label == "Use in the Sampling lab" for b in at.button)
    assert not store.run_folder(token).exists() and Url.RUN not in at.query_params   # gone, address too


def test_training_page_stop(corpus_file):
    at = page("training", preset="whole", timeout=120).run()
    at.button[0].click().run()
    assert rerun_until(at, lambda a: any(b.label == "Stop" for b in a.button) and bool(a.metric), seconds=30)
    # Issue 29: the progress also shows under the Train button, where the learner pressed it
    assert any("at the top of the page" in str(e.proto) for e in at.get("progress"))
    [b for b in at.button if b.label == "Stop"][0].click().run()
    assert rerun_until(at, has_subheader("stopped"), seconds=30)
    assert not at.exception


def test_training_run_comes_back_in_a_reloaded_tab(corpus_file):
    first = page("training", preset="tiny", epochs="2", timeout=120).run()
    first.button[0].click().run()
    assert rerun_until(first, lambda a: any(": " in h.value for h in a.subheader), seconds=30)
    name = [h.value for h in first.subheader if ": " in h.value][0].split(":")[0]
    token = first.query_params[Url.RUN]
    token = token[0] if isinstance(token, list) else token
    assert token and len(token) >= 10                    # not guessable from a run number
    again = page("training", preset="tiny", run=token, timeout=120).run()   # a new session: the reloaded tab
    assert not again.exception and not again.warning
    assert rerun_until(again, has_subheader("finished"), seconds=90)
    assert any(s.value.startswith(name + ":") for s in again.subheader)
    gone = page("training", preset="tiny", run="no-such-run", timeout=60).run()
    assert any("not in this server's run store" in w.value for w in gone.warning)


def test_a_run_opens_from_the_store_after_a_server_restart(corpus_file):
    """The server forgot the run (a restart): its address still opens it, from the run store, with its
    numbers, samples and downloads."""
    from core.runs.config import PRESETS
    from ui.session import job_manager
    manager = job_manager()
    job = manager.submit(replace(PRESETS["tiny"].config, epochs=2), corpus_file.read_text(), "a closed tab")
    job.thread.join(120)
    assert job.status == "finished"
    with manager.lock:
        manager.jobs.clear()                              # what a restart leaves in memory: nothing
    try:
        at = page("training", preset="tiny", run=job.token, timeout=120).run()
        assert not at.exception and not at.warning
        assert any(h.value.startswith(f"{job.name}: finished") for h in at.subheader)
        assert float(metric(at, "Validation perplexity")) == pytest.approx(job.result.final.val_ppl, abs=0.01)
        assert any(b.label == "Download run (.zip: weights, JSON, CSV)" for b in at.get("download_button"))
    finally:
        forget_runs(manager)


def test_sampling_page_with_a_session_bpe_model():
    """A BPE model trained in the session appears in the picker and samples without errors."""
    from core.runs.config import TrainConfig
    from core.runs.loop import train
    text = "the time traveller smiled and the psychologist frowned at the little machine " * 60
    result = train(TrainConfig(tokenizer="bpe", bpe_vocab=300, embed_dim=8, hidden_size=16, split="whole",
                               truncation="detach", batch_size=4, num_steps=16, epochs=1, optimizer="adam",
                               lr=0.01, device="cpu", sample_length=5), text)
    at = sampling_with_session_model("my bpe", result.lm)
    assert not at.exception and not at.error
    assert at.selectbox(key="sampling.model").value == "my bpe"


def test_training_on_a_short_upload_gives_a_clear_message():
    at = page("training", preset="book", timeout=120)
    at.session_state["_rnnlab_upload"] = {"name": "tiny.txt", "text": "a short text of a few words only " * 20}
    at.run()
    at.radio(key="tr.source.book").set_value("upload")
    at.button[0].click().run()
    assert rerun_until(at, lambda a: bool(a.error), seconds=20)
    assert not at.exception
    assert at.error and "tokens" in shown(at.error[0]) and "num_train" in shown(at.error[0])


def test_training_form_comes_from_the_url_and_goes_back_to_it(corpus_file):
    at = page("training", preset="tiny", hidden_size="48", cell="gru", lr="0.02", epochs="many", timeout=120).run()
    assert not at.exception
    assert at.number_input(key="tr.tiny.hidden_size").value == 48
    assert at.selectbox(key="tr.tiny.cell").value == "gru"
    assert at.number_input(key="tr.tiny.lr").value == 0.02
    assert at.number_input(key="tr.tiny.epochs").value == PRESETS["tiny"].config.epochs
    assert any("epochs" in w.value for w in at.warning)
    at.number_input(key="tr.tiny.epochs").set_value(1)
    at.number_input(key="tr.tiny.hidden_size").set_value(16)
    at.button[0].click().run()  # Train
    assert not at.exception and not at.error
    url = {k: str(at.query_params[k]) for k in at.query_params}
    assert "16" in url["hidden_size"] and "gru" in url["cell"] and "1" in url["epochs"]
    assert "seed" not in url and "batch_size" not in url  # only the settings that differ from the preset
    assert rerun_until(at, has_subheader("finished"), seconds=90)
    runs = [df.value for df in at.dataframe if "hidden" in df.value.columns][0]
    assert runs.iloc[-1]["hidden"] == 16 and runs.iloc[-1]["cell"] == "gru" and runs.iloc[-1]["lr"] == 0.02
    # Another preset: the tiny preset's settings leave the URL, and the form shows the new preset's own.
    at.query_params["preset"] = "whole"
    at.run()
    assert "hidden_size" not in at.query_params and "cell" not in at.query_params
    assert at.number_input(key="tr.whole.hidden_size").value == 256


def test_sampling_page_scores_the_learners_texts():
    at = page("sampling").run()
    assert not at.exception
    ordered, shuffled = (float(metric_values(at, "Surprisal")[i].split()[0]) for i in (0, 1))
    assert ordered < shuffled  # the pretrained model knows word order
    at.text_input(key="sampling.score_a").set_value("Ωmega ☃").run()
    assert not at.exception
    assert any("cleaned as its training text: ' mega '" in shown(c) for c in at.caption)
    assert at.query_params["score_a"] == "Ωmega ☃" or "Ωmega" in str(at.query_params["score_a"])


def metric_values(at, label: str) -> list[str]:
    return [m.value for m in at.metric if m.label == label]


def test_an_idle_training_page_schedules_no_reruns(monkeypatch, corpus_file):
    """Only a page with a run going refreshes itself; an idle Training tab costs what a Forecasting tab does."""
    import streamlit
    intervals = []
    real = streamlit.fragment

    def recording(func=None, *, run_every=None, **kw):
        intervals.append(run_every)
        return real(func, run_every=run_every, **kw) if func is not None else real(run_every=run_every, **kw)
    monkeypatch.setattr(streamlit, "fragment", recording)
    from ui.session import job_manager
    forget_runs(job_manager())
    at = page("training", preset="tiny", timeout=120).run()
    assert not at.exception and not any(intervals)
    at.button[0].click().run()  # Train: now the panel refreshes while the run goes
    assert any(intervals)
    assert rerun_until(at, has_subheader("finished"), seconds=90)
    intervals.clear()
    at.run()
    assert not any(intervals)   # finished: no more refreshing
    forget_runs(job_manager())


def test_an_out_of_range_number_in_the_form_is_named_not_ignored():
    at = page("training", preset="tiny", timeout=120).run()
    at.number_input(key="tr.tiny.hidden_size").set_value(99_999)
    at.number_input(key="tr.tiny.lr").set_value(0.0)
    at.button[0].click().run()   # Train
    assert not at.exception
    errors = " ".join(shown(e) for e in at.error)
    assert "Not started" in errors and "Hidden units is 99,999; allowed: 1 to 2,048." in errors
    assert "Learning rate is 0; allowed: 1e-05 to 100." in errors
    assert Url.RUN not in at.query_params


def test_a_learner_behind_another_run_is_queued_and_told_so(corpus_file):
    from core.runs.config import PRESETS
    from ui.session import job_manager
    manager = job_manager()
    forget_runs(manager)
    other = manager.submit(replace(PRESETS["tiny"].config, epochs=200), corpus_file.read_text(), "another learner")
    try:
        while other.progress is None or other.progress.epoch < 1:   # its own estimate of the time left
            time.sleep(0.05)
        at = page("training", preset="tiny", timeout=120).run()
        at.button[0].click().run()   # Train: the CPU slot is taken by the other learner
        assert not at.exception and not at.error
        assert any("Queued on the CPU, number 1 in line" in i.value and "starts by itself" in i.value
                   and "It should start in about" in i.value for i in at.info)
        at.button(key=next(b.key for b in at.button if b.key and b.key.startswith("cancel_"))).click().run()
        assert not manager.queue and not at.exception
        assert any("cancelled before it started" in shown(s) for s in [*at.success, *at.info, *at.warning])
    finally:
        forget_runs(manager, stop=other)


def test_settings_that_do_nothing_are_greyed_with_the_reason():
    at = page("training", preset="book", timeout=120).run()
    bpe = at.number_input(key="tr.book.bpe_vocab")
    assert bpe.disabled and "Not used: only with tokens set to BPE." in bpe.help
    assert not at.number_input(key="tr.book.num_train").disabled
    assert at.radio(key="tr.book.truncation").disabled
    at.radio(key="tr.book.tokenizer").set_value("bpe")
    at.radio(key="tr.book.split").set_value("whole").run()     # no Train pressed: the form follows at once
    assert not at.number_input(key="tr.book.bpe_vocab").disabled
    assert at.number_input(key="tr.book.num_train").disabled and not at.radio(key="tr.book.truncation").disabled
    import torch
    if not torch.cuda.is_available():
        device = at.radio(key="tr.book.device")
        assert device.disabled and device.value == "auto" and "no GPU" in device.help


def test_training_perplexity_above_validation_is_explained_only_when_it_is():
    from core.runs.record import HistoryRow
    from core.labs.training import curves_figure, train_above_val
    row = lambda e, t, v: HistoryRow(e, 10 * e, t, v, 2.0, 1.0, float(e), 1000.0)   # noqa: E731
    above = [row(0, 28.0, 28.0), row(1, 9.5, 8.1)]
    below = [row(0, 28.0, 28.0), row(1, 7.0, 8.1)]
    assert "(9.50) is above the validation perplexity (8.10)" in train_above_val(above).text
    assert train_above_val(below) is None and train_above_val(above[:1]) is None
    fig = curves_figure({"run 1": above}, "t")
    assert {t.name for t in fig.data} == {"train perplexity", "validation perplexity"}   # one quantity, one axis
    assert "yaxis2" not in fig.to_plotly_json()["layout"]


def test_a_class_at_the_same_setting_shares_one_set_of_figures_and_each_draw_reads_the_same_dict():
    """Issue 29: learners at the same setting get the same (frozen) figures, built once; at another step, others.
    A draw reads the frozen dict without copying or changing it."""
    import json
    import plotly.io as pio
    from pages import rnn_cell
    first = rnn_cell.step_views("hello world", 4, 0, 3, "en")
    assert rnn_cell.step_views("hello world", 4, 0, 3, "en") is first
    assert rnn_cell.step_views("hello world", 4, 0, 4, "en")[2].figure is not first[2].figure
    fig = first[2].figure
    before = json.dumps(fig.to_dict(), default=str)
    assert fig.to_dict() is fig.to_dict()                      # no copy per draw
    at = page("rnn_cell")
    at.query_params["word"], at.query_params["h"], at.query_params["t"] = "hello world", "4", "3"
    at.run()
    assert not at.exception and any(shown(m).startswith("Step t = 3: the network reads 'l'") for m in at.markdown)
    assert json.dumps(fig.to_dict(), default=str) == before   # drawing it changed nothing
    assert json.loads(pio.to_json(fig.to_dict(), validate=False))["data"][0]["type"] == "heatmap"


def test_a_short_run_s_time_reads_as_the_runs_table_rounds_it():
    from core.labs.training import seconds_text
    assert [seconds_text(s) for s in (0.47, 0.0, 9.94, 9.96, 12.4, 1234.0)] == \
        ["0.5 s", "0.0 s", "9.9 s", "10 s", "12 s", "1,234 s"]


def test_an_exact_zero_difference_says_so():
    from core.labs.rnn_cell import difference_text
    assert (difference_text(0.0), difference_text(4.4e-16)) == ("0, exactly", "4.4e-16")


def test_the_one_hot_section_has_its_own_letter_and_does_not_follow_the_step_slider():
    """The step slider reruns its fragment only, so nothing outside it may depend on t."""
    at = page("rnn_cell", letter="c").run()
    lookup = lambda: next(m.value for m in at.markdown if m.value.startswith("A one-hot input is a row"))
    before = lookup()
    assert "the letter 'c' (fed in at step t = 3) has id" in before
    at.slider(key="rnn_cell.t").set_value(5).run()
    assert lookup() == before and not at.exception
    at.selectbox(key="rnn_cell.letter").set_value("h").run()
    assert "the letter 'h' (fed in at step t = 4)" in lookup() and at.query_params["letter"] == "h"
    odd = page("rnn_cell", letter="e").run()   # 'e' ends "machine": it is only ever a target, never fed in
    assert not odd.exception and "the letter 'm' (fed in at step t = 1)" in " ".join(m.value for m in odd.markdown)


def test_the_line_under_train_gives_the_first_steps_perplexity(corpus_file):
    """Issue 43: after Train, the line under the button follows the run four times a second and gives the train
    perplexity from the first step on (the curves at the top follow once a second)."""
    from ui.session import job_manager
    manager = job_manager()
    at = page("training", preset="tiny", epochs=200, timeout=120).run()
    at.button(key="tr.train").click().run()
    job = next(j for j in manager.jobs.values() if j.active)
    try:
        while job.progress is None or job.progress.step < 1:
            time.sleep(0.05)
        at.run()
        lines = [e.proto.text for e in at.get("progress")]
        assert any(re.search(r"tiny #\d+: epoch \d+/200, step \d+/\d+.*train perplexity \d", t) for t in lines), lines
        assert at.session_state["training.line_every"] == 0.25
    finally:
        forget_runs(manager, stop=job)


def test_the_line_under_train_says_when_each_perplexity_was_measured():
    """The train perplexity of a report is the epoch in progress, the validation one the last finished epoch: the
    line names both moments, so 14 against 28 at step 36 does not read as a gap between train and held-out text."""
    import math
    from core.runs.record import HistoryRow, Progress
    from core.labs.training import perplexities_when
    nan = math.nan

    def report(epoch, step, train, val, checked):
        rows = [HistoryRow(e, e * 76, nan, 27.9, 4.0, 3.3, 1.0, 1.0) for e in range(checked + 1)]
        return Progress(epoch, 20, step, 1520, train, val, 4.0, 1.0, 1.0, 9.0, "cpu", history=rows)

    assert perplexities_when(report(0, 36, 14.35, 27.91, 0), 20) == \
        "; train perplexity 14.35 over epoch 1's steps so far; validation perplexity 27.91 before training"
    assert perplexities_when(report(2, 152, 6.1, 6.0, 2), 20) == \
        "; train perplexity 6.10 over epoch 2's steps so far; validation perplexity 6.00 after epoch 2"
    assert perplexities_when(report(2, 160, 6.0, 6.0, 2), 20).startswith("; train perplexity 6.00 over epoch 3's")
    assert perplexities_when(report(0, 0, nan, nan, 0), 20) == ""


@pytest.mark.parametrize("lab", ["forecasting", "sampling", "gradient_flow"])
def test_every_control_of_a_fragment_lab_is_drawn_inside_its_fragment(monkeypatch, lab):
    """Issue 43 (a class moving a slider together): moving a control of these labs reruns their fragment only
    (ui.lab), so every control must be drawn inside it, and the notebook download, which carries their values,
    must sit there too and not in the sidebar, where a fragment's rerun would leave it stale."""
    import streamlit
    from core.labs import controls_of
    from ui import url_state
    inside, drawn = [0], {}
    real_fragment, real_draw = streamlit.fragment, url_state.draw

    def recording(func=None, **kw):
        if func is None:
            return lambda f: recording(f, **kw)

        def run(*args, **kwargs):
            inside[0] += 1
            try:
                return func(*args, **kwargs)
            finally:
                inside[0] -= 1
        run.__module__, run.__qualname__ = func.__module__, func.__qualname__
        return real_fragment(run, **kw)

    def draw(s, **kw):
        drawn[s.name] = inside[0] > 0
        return real_draw(s, **kw)
    monkeypatch.setattr(streamlit, "fragment", recording)
    monkeypatch.setattr(url_state, "draw", draw)
    at = page(lab).run()
    assert not at.exception
    assert drawn == {name: True for name in controls_of(lab)}
    buttons = [b for b in at.get("download_button") if b.proto.label == "Download as notebook"]
    assert len(buttons) == 1 and not [b for b in at.sidebar.get("download_button")]
