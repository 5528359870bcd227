"""Lab 6, Training: train RNN language models live (CPU or GPU), with progress, stop, compare and export.

The form is drawn from core.runs.config.SETTINGS (one declaration per setting); runs execute outside the web server
(core.runs.jobs: worker processes, or Ray tasks) and this page reads their progress from a fragment.
"""
from __future__ import annotations

import math
from dataclasses import replace

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.runs import data as data_module, loop, readings as run_readings, saved
from core.labs import Url, controls_of
from core.runs.record import HistoryRow, Progress, Status
from core.runs.config import DATA, FORM_GROUPS, FORM_SETTINGS, PRESETS, SETTINGS, Preset, config_overrides, parse_overrides
from core import classroom
from ui import exercises, learner, model_choice, settings_form, sweep, texts, url_state
from ui.notebook import download_button
from ui.common import cite, header, learner_errors, plain, show_source
from core.figures import chart_text, style
from ui.plots import show
from ui.run_notice import queued_notice
from ui.session import fragment_only_run, job_manager, session_id

SOURCES = {"timemachine": "The Time Machine", "upload": "My upload"}
INTRO = (
    "Pick a preset or set every knob, press **Train**, and watch the model learn: perplexity falls, and the "
    "samples turn from noise into words. Training runs on the server in the background, so you can visit "
    "other labs and come back. Perplexity is exp(mean cross-entropy): a model guessing uniformly among V "
    "tokens scores V. **Bits per byte** divides the cross-entropy in bits by the bytes per token, so a "
    "character model and a BPE model can be compared."
)


def curves_figure(histories: dict[str, list[HistoryRow]], title: str) -> go.Figure:
    """Validation perplexity per epoch of each named run; for a single run also its training perplexity. (Bits per
    byte is the same quantity on another scale: it is in the metrics above the chart, not on a second axis.)"""
    fig = go.Figure()
    last_epoch = 1
    single = len(histories) == 1
    for name, rows in histories.items():
        if not rows:
            continue
        epochs = [r.epoch for r in rows]
        last_epoch = max(last_epoch, max(epochs))
        if single:
            fig.add_trace(go.Scatter(x=epochs, y=[r.train_ppl for r in rows], name="train perplexity",
                                     mode="lines+markers"))
        fig.add_trace(go.Scatter(x=epochs, y=[r.val_ppl for r in rows], mode="lines+markers",
                                 name="validation perplexity" if single else chart_text(name)))
    style(fig, title, "epoch", "perplexity", height=340, log_y=True)
    fig.update_layout(xaxis=dict(dtick=max(1, math.ceil(last_epoch / 10))),  # whole epochs only
                      legend=dict(orientation="h", y=-0.25))
    return fig


def curves_summary(histories: dict[str, list[HistoryRow]]) -> str:
    """Each run's curve in words: validation perplexity at the start, at the end, and at its best."""
    parts = []
    for name, rows in histories.items():
        vals = [(r.epoch, r.val_ppl) for r in rows if math.isfinite(r.val_ppl)]
        if not vals:
            parts.append(f"{name}: no validation yet")
            continue
        best = min(vals, key=lambda ev: ev[1])
        parts.append(f"{name}: validation perplexity {vals[0][1]:.2f} at epoch {vals[0][0]}, {vals[-1][1]:.2f} at "
                     f"epoch {vals[-1][0]} (best {best[1]:.2f} at epoch {best[0]})")
    text = "; ".join(parts) + "."
    if len(histories) == 1:
        text += train_above_val(next(iter(histories.values())))
    return text


def train_above_val(rows: list[HistoryRow]) -> str:
    said = run_readings.train_above_val(rows)
    return f" {said}" if said else ""


def choose_preset() -> Preset:
    name = url_state.draw(controls_of("training")["preset"], choices=tuple(PRESETS),
                          format_func=lambda p: PRESETS[p].label) or "book"
    st.caption(PRESETS[name].note)
    return PRESETS[name]


def form_key(preset: Preset) -> str:
    return f"tr.{preset.name}"


def seed_form_from_url(preset: Preset) -> None:
    """Every form setting lives in the URL too (only those that differ from the preset), written when the
    learner presses Train: a copied address opens the same form, ready to train the same run."""
    if st.session_state.get("_tr_preset", preset.name) != preset.name:
        url_state.clear_form(FORM_SETTINGS)  # settings written for another preset
    st.session_state["_tr_preset"] = preset.name

    def form_values(url: dict) -> tuple[dict, list[str]]:
        config, problems = parse_overrides(preset.config, url)
        return {n: getattr(config, n) for n in FORM_SETTINGS}, problems

    url_state.seed_form(form_key(preset), FORM_SETTINGS, form_values)


def settings_form_rows(preset: Preset, busy: bool) -> tuple[str, bool]:
    """The form, drawn from the setting declarations. Returns the text source and whether Train was pressed."""
    prefix = form_key(preset)
    source_key = f"tr.source.{preset.name}"
    off = {}
    if job_manager().gpus == 0:   # nothing to choose: say so rather than offer a GPU that is not there
        st.session_state[f"{prefix}.device"] = "auto"
        off["device"] = "This server has no GPU: runs train on the CPU."
    # Not an st.form: a choice that changes what applies (tokens, split) greys or frees the others at once.
    # Settings a teacher's link hides (?hide=lr,epochs) are not drawn: they keep the link's values.
    hidden = url_state.hidden_names()
    with st.container(border=True):
        for group in FORM_GROUPS:
            lead = [lambda col: col.radio("Text", tuple(SOURCES), key=source_key, format_func=SOURCES.get)] \
                if group == DATA else []
            shown = [SETTINGS[n] for n in FORM_SETTINGS if SETTINGS[n].group == group and SETTINGS[n].key not in hidden]
            settings_form.section(group, shown, prefix, lead, lookup=SETTINGS, off=off)
        if any(SETTINGS[n].key in hidden for n in FORM_SETTINGS):
            fixed = ", ".join(f"{SETTINGS[n].label} {SETTINGS[n].word(st.session_state[f'{prefix}.{n}'])}"
                              for n in FORM_SETTINGS if SETTINGS[n].key in hidden)
            st.caption(f"Your teacher's link fixes: {plain(fixed, 300)}.")
        submitted = st.button("Train", type="primary", icon=":material/play_arrow:", disabled=busy,
                              key="tr.train")
    return st.session_state[source_key], submitted


def training_text(source: str) -> str:
    if source == "upload":
        up = texts.uploaded()
        if up is None:
            raise ValueError("Upload a text first (in the box below), or train on The Time Machine.")
        return up["text"]
    text = texts.time_machine_or_none()
    if text is None:
        raise ValueError("The Time Machine is not available here. Upload a text below, or set RNNLAB_CORPUS.")
    return text


def out_of_range(chosen: dict) -> list[str]:
    """The form's values that the engine would refuse, each in words with its allowed range."""
    wrong = []
    for name, value in chosen.items():
        s = SETTINGS[name]
        try:
            s.check(value)
        except ValueError:
            wrong.append(f"{s.label} is {value:,.6g}; {settings_form.allowed(s).lower()}" if s.kind in (int, float)
                         and not s.choices else f"{s.label} has a value it cannot take ({value!r}).")
    return wrong


def start_run(preset: Preset, source: str, number: int) -> None:
    """Submit the form's run to the job manager and put its settings in the URL."""
    prefix = form_key(preset)
    chosen = {n: st.session_state[f"{prefix}.{n}"] for n in FORM_SETTINGS}
    wrong = out_of_range(chosen)
    if wrong:
        st.error("Not started: " + " ".join(plain(w, 200) for w in wrong), icon=":material/error:")
        return
    with learner_errors():
        if chosen["split"] == "book":
            chosen["truncation"] = "fresh"  # book windows are shuffled: each starts from a zero state
        config = replace(preset.config, **chosen)
        job = job_manager().submit(config, training_text(source), session_id(), name=f"{preset.name} #{number}")
        keep_for_class(job.token, job.name, config)
        url_state.write_form(prefix, FORM_SETTINGS, config_overrides(preset.config, config))
        st.query_params[Url.RUN] = job.token   # the run's address: a reload or a new tab finds it again
        st.rerun()


def keep_for_class(key: str, name: str, config) -> None:
    """A learner's run goes on their record, so their teacher sees its curve beside the class's."""
    who = learner.current()
    if who is not None and who.class_id is not None:
        try:
            classroom.record_run(who.token, key, name, config.to_dict())
        except ValueError:
            pass   # the class records cannot be written: the run itself goes on


def adopt_run_from_url() -> None:
    """A reloaded page (or the run's address opened in a new tab) gets its run back."""
    token = st.query_params.get(Url.RUN)
    if not token or any(j.token == token for j in job_manager().for_session(session_id())):
        return
    try:
        found = job_manager().adopt(token, session_id())
    except ValueError as exc:   # there, but a file of it is damaged: say which
        st.error(f"{plain(exc, 300)} Train it again below.", icon=":material/error:")
        return
    if found is None:
        st.warning("The run in this address is not in this server's run store: old runs are deleted after a "
                   "while (by age and total size). Train it again below (its settings are in the form).",
                   icon=":material/warning:")


def seconds_text(s: float) -> str:
    """Seconds as the runs table rounds them below ten (a half-second run reads 0.5 s, not 0 s), whole above."""
    return f"{s:.1f} s" if s < 9.95 else f"{s:,.0f} s"


def run_metrics(p: Progress) -> None:
    c = st.columns(6)
    c[0].metric("Train perplexity", f"{p.train_ppl:.2f}" if math.isfinite(p.train_ppl) else "–",
                help="Over the steps of the epoch in progress so far (a whole epoch's once it ends).")
    c[1].metric("Validation perplexity", f"{p.val_ppl:.2f}" if math.isfinite(p.val_ppl) else "–",
                help="On the held-out text, measured at the end of the last finished epoch (epoch 0: before "
                     "training). Compare it with the train perplexity once an epoch has ended.")
    c[2].metric("Bits per byte", f"{p.val_bpb:.3f}" if math.isfinite(p.val_bpb) else "–")
    c[3].metric("Tokens / s", f"{p.tokens_per_s:,.0f}")
    c[4].metric("Elapsed", seconds_text(p.elapsed))
    c[5].metric("ETA", seconds_text(p.eta) if math.isfinite(p.eta) else "–")
    st.caption(f"Device: {p.device}")


def run_status(job) -> None:
    """The run's state: a progress bar and Stop while it runs, else how it ended."""
    p = job.progress
    if job.status == Status.QUEUED:
        queued_notice(job)
        if st.button("Cancel", icon=":material/close:", key=f"cancel_{job.id}"):
            job_manager().stop(job.id)
            st.rerun()
        return
    if job.active:
        frac = p.step / p.total_steps if p and p.total_steps else 0.0
        st.progress(frac, text=f"epoch {p.epoch}/{job.config.epochs}, step {p.step}/{p.total_steps}"
                    if p else "preparing the data ...")
        if not job.stopping and st.button("Stop", icon=":material/stop:", key=f"stop_{job.id}"):
            job_manager().stop(job.id)
        if job.stopping:  # acknowledged at once, also in the very run that pressed Stop
            st.info("Stopping: the run ends after the step in progress and keeps everything learnt.", icon=":material/hourglass_top:")
    elif job.status == Status.ERROR:
        st.error(plain(job.message, 600), icon=":material/error:")
    elif job.status == Status.DIVERGED:
        st.warning(plain(job.message, 600), icon=":material/error:")
    else:
        message = job.message if job.message.startswith(job.status) else f"{job.status}: {job.message}"
        st.success(plain(message, 600), icon=":material/check_circle:")


POLL_SECONDS = 1.0          # how often a run's panel (curves, metrics, samples) is read again while it goes
LINE_POLL_SECONDS = 0.25    # ... and the one line under Train, while the run trains: it answers within a step


def line_poll_seconds(job) -> float:
    """The line under Train follows a training run four times a second (a progress bar and a sentence: cheap to
    send and to draw), a queued one once a second."""
    return LINE_POLL_SECONDS if job.status.training else POLL_SECONDS


def live_panel(running: bool) -> None:
    """The session's current (or last) run: refreshed every second while one of its runs is going (running),
    drawn once otherwise (an idle tab schedules no reruns)."""
    if running:
        st.fragment(run_every=POLL_SECONDS)(run_panel)()
    else:
        run_panel()


def perplexities_when(p: Progress, epochs: int) -> str:
    """The two perplexities of a progress report, each with when it was measured: they come from different
    moments (the train figure from the steps of the epoch in progress, the validation one from the last finished
    epoch), so side by side without that they would read as a gap between training and held-out text."""
    per_epoch = p.total_steps // epochs if epochs else 0
    current = p.epoch + 1 if per_epoch and p.step > p.epoch * per_epoch else p.epoch
    checked = p.history[-1].epoch if p.history else p.epoch
    parts = []
    if math.isfinite(p.train_ppl):
        parts.append(f"; train perplexity {p.train_ppl:.2f} over epoch {current}'s steps so far")
    if math.isfinite(p.val_ppl):
        parts.append(f"; validation perplexity {p.val_ppl:.2f} "
                     + ("before training" if checked == 0 else f"after epoch {checked}"))
    return "".join(parts)


def progress_where_pressed() -> None:
    """Under the Train button, where the learner is looking: the run's progress in one line, with an estimate
    (its curves and samples are at the top of the page)."""
    job = next((j for j in job_manager().for_session(session_id()) if j.active), None)
    if job is None:
        return
    p = job.progress
    if job.status == Status.QUEUED:
        st.progress(0.0, text="Waiting in the queue for a free training slot: the top of the page says where.")
        return
    if fragment_only_run() and st.session_state.get("training.line_every") != line_poll_seconds(job):
        st.rerun(scope="app")   # out of the queue: follow it at the training pace from now on
    if p is None:
        st.progress(0.0, text="Starting the run: preparing the data ...")
        return
    left = f", about {p.eta:.0f} s left" if math.isfinite(p.eta) else ""
    st.progress(p.step / p.total_steps if p.total_steps else 0.0,
                text=f"{job.name}: epoch {p.epoch}/{job.config.epochs}, step {p.step}/{p.total_steps}{left}"
                     f"{perplexities_when(p, job.config.epochs)}. "
                     "Its curves and samples are at the top of the page.")


def run_panel() -> None:
    mine = job_manager().for_session(session_id())
    current = [j for j in mine if j.active]
    latest = current[0] if current else (mine[-1] if mine else None)
    if latest is None:
        st.info("No run yet: choose a preset and press **Train**.", icon=":material/info:")
        return
    if latest.active:
        st.session_state["training.watching"] = latest.id
    elif st.session_state.pop("training.watching", None) == latest.id and fragment_only_run():
        st.rerun(scope="app")  # the run just ended: redraw the whole page (compare and export appear)
    st.subheader(f"{plain(latest.name)}: {latest.status}")
    run_status(latest)
    p = latest.progress
    if p is not None:
        run_metrics(p)
        show(curves_figure({latest.name: p.history}, "Perplexity per epoch (epoch 0: untrained)"),
             curves_summary({latest.name: p.history}), f"curve-{latest.id}")
        if latest.samples:
            temp = latest.config.sample_temperature
            st.markdown(f"**Samples** (prefix {plain(repr(latest.config.sample_prefix))}, "
                        f"{'greedy' if temp == 0 else f'T = {temp:g}'})")
            st.dataframe(pd.DataFrame([(s.epoch, s.text) for s in latest.samples[::-1]], columns=["epoch", "sample"]),
                         hide_index=True,
                         width="stretch", height=min(300, 40 + 35 * len(latest.samples)))


def upload_box() -> None:
    with st.expander("Train on your own text"):
        texts.upload_widget("training_upload")
        if texts.uploaded():
            st.caption(f"Uploaded: {plain(texts.uploaded()['name'])} ({len(texts.uploaded()['text']):,} characters)")
        if texts.time_machine_or_none() is None:
            texts.missing_corpus_message()
            texts.download_button()


def runs_table(done: list) -> pd.DataFrame:
    rows = []
    for j in done:
        last = j.result.final
        rows.append({"run": j.name, "status": j.status, "cell": j.config.cell, "tokens": j.config.tokenizer,
                     "hidden": j.config.hidden_size, "optimizer": j.config.optimizer, "lr": j.config.lr,
                     "epochs": last.epoch if last else None, "val ppl": round(last.val_ppl if last else math.nan, 3),
                     "bits/byte": round(last.val_bpb if last else math.nan, 3), "seconds": round(j.result.elapsed, 1),
                     "tokens/s": round(j.result.tokens_per_s), "device": j.result.device})
    return pd.DataFrame(rows)


def export_row(j) -> None:
    with st.container(border=True):
        ppl = j.result.final.val_ppl if j.result.final else math.nan
        st.markdown(f"**{plain(j.name)}** · {j.status} · val perplexity {ppl:.2f}")
        missing = j.result.missing()
        if missing:   # cleaned up, or damaged, after it finished: say so rather than offer what cannot be had
            st.warning(f"This run's {plain(', '.join(missing))} are no longer in the run store (it may have been "
                       "cleaned up): its numbers above are all that is left.", icon=":material/warning:")
            return
        e1, e2, e3, e4 = st.columns(4)
        # deferred: the archive is built only when the learner clicks, not on every rerun
        e1.download_button("Download run (.zip: weights, JSON, CSV)", lambda r=j.result: r.zip_bytes(),
                           file_name=f"rnnlab-run-{j.id}.zip", mime="application/zip", key=f"zip_{j.id}")
        e2.download_button("Metrics (.csv)", lambda r=j.result: saved.metrics_csv(r.history),
                           file_name=f"rnnlab-{j.id}-metrics.csv", mime="text/csv", key=f"csv_{j.id}")
        if e3.button("Use in the Sampling lab", key=f"use_{j.id}"):
            try:
                model_choice.add_session_model(j.name, j.result.lm)
            except ValueError as exc:   # its weights are damaged or gone
                st.error(plain(exc, 400), icon=":material/error:")
                return
            st.toast(f"{plain(j.name)} is now in the Sampling lab's model picker.")
        if e4.button("Delete", key=f"delete_{j.id}", icon=":material/delete:",
                     help="Remove the run from this server for good: its weights, curve and address."):
            job_manager().forget(j.id)
            if st.query_params.get(Url.RUN) == j.token:
                del st.query_params[Url.RUN]
            st.rerun()


def compare_and_export(done: list) -> None:
    st.header("Compare and export")
    histories = {j.name: j.result.history for j in done}
    show(curves_figure(histories, "Validation perplexity of this session's runs"), curves_summary(histories),
         "compare")
    st.dataframe(runs_table(done), hide_index=True, width="stretch",   # thousands separated, as the metrics above
                 column_config={"tokens/s": st.column_config.NumberColumn(format="localized")})
    for j in reversed(done):
        export_row(j)


NOTES = """
- **Book split**: the first *num_train* windows of *num_steps* tokens (stride one) train, the next *num_val*
  validate; every window starts from a zero state. **Whole corpus**: the first 90% trains as *batch size*
  parallel streams read in order from a random offset each epoch; the last 10% validates.
- **Clipping** rescales the whole gradient to norm θ when it is larger. **Divergence**: a NaN or infinite loss
  stops the run and restores the weights of the last good step. **Stop** keeps everything learnt so far.
- The **RNN (fused)** cell runs a hand-written, verified time loop on the CPU and cuDNN on a GPU; **from scratch**
  is the book's loop over time steps in plain PyTorch. Both compute the same function.
- **On a GPU** a run starts from the same weights as on the CPU and works in full float32 (no TF32 shortcuts),
  with cuDNN's deterministic algorithms: the same seed gives the same run again, and the numbers stay within
  float32 rounding of the CPU's.
- **Seeds matter**: with plain SGD at a constant learning rate the validation perplexity still jumps by about
  ±0.1 from one epoch to the next at the end of the book preset, so the final number depends on the seed
  (7.19 to 7.47 over sixteen seeds here; a book-style loop spreads at least as much). Compare settings over a few
  seeds, or with the *Compare* chart, before trusting a difference of a tenth.
- **One hidden bias**: the book's RNN adds one bias b_h inside the tanh; PyTorch's nn.RNN adds two (b_ih and b_hh)
  that always appear as a sum. In the book preset b_hh stays at zero, so plain SGD updates the sum at the book's
  learning rate rather than twice it.
"""


def span(window: list[int]) -> str:
    return f"{window[0]}-{window[-1]}"


@st.cache_data(show_spinner=False)
def partition_demo() -> dict:
    return data_module.partition_demo()


def partitions() -> None:
    """The book's two ways of cutting the text into minibatches (9.3), shown on token positions."""
    demo = partition_demo()
    rows = [{"minibatch": i + 1, "random windows (split 'book')": ", ".join(span(w) for w in r),
             "sequential partitioning (split 'whole')": ", ".join(span(w) for w in q)}
            for i, (r, q) in enumerate(zip(demo["random"], demo["sequential"]))]
    st.markdown("**Two ways to cut the text into minibatches** (9.3), shown on token positions 0 to 39, two "
                "windows of five per minibatch, made by the functions training uses:")
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    by = {split: ", ".join(p.label for p in PRESETS.values() if p.config.split == split) for split in ("book", "whole")}
    st.caption(f"Random windows ({by['book']}): any window, in any order, so each must start from a zero state. "
               f"Sequential ({by['whole']}): "
               "the text is split into as many streams as the batch holds, and each row of a "
               "minibatch continues the same row of the one before, so the state is carried across (its gradient "
               "stopped at the boundary: truncation 'detach').")


def main() -> None:
    url_state.page("training")
    header("training")
    st.markdown(INTRO)
    cite("9.5 Recurrent Neural Network Implementation from Scratch and 9.6 Concise Implementation")
    exercises.assignment("training")
    exercises.hold_figures("training")
    adopt_run_from_url()
    mine = job_manager().for_session(session_id())
    active = [j for j in mine if j.active]
    if active:
        st.sidebar.caption(f"Training {plain(active[0].name)}: its progress is on this page.")
    live_panel(bool(active))
    preset = choose_preset()
    sweep.take_part({n: SETTINGS[n] for n in FORM_SETTINGS})
    seed_form_from_url(preset)
    source, submitted = settings_form_rows(preset, busy=bool(active))
    download_button("training")      # after the form: the notebook takes its settings as they are now
    if active:
        st.session_state["training.line_every"] = line_poll_seconds(active[0])
        st.fragment(run_every=st.session_state["training.line_every"])(progress_where_pressed)()
    if submitted:
        start_run(preset, source, len(mine) + 1)
    upload_box()
    done = [j for j in job_manager().for_session(session_id()) if not j.active and j.result is not None]
    if done:
        compare_and_export(done)
    with st.expander("How training works here"):
        st.markdown(NOTES)
        partitions()
        show_source(loop.train, loop.Run.epoch, loop.Run.train_step, title="The training loop")
    exercises.section("training")


if __name__ == "__main__":
    main()
