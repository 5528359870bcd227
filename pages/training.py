"""Lab 7, Training: draws what core.labs.training declares and computes (settings, figures, tables, readings), runs
the form (drawn from core.runs.config.SETTINGS, one declaration per setting), and follows runs that execute outside
the web server (core.runs.jobs: worker processes, or Ray tasks) from a fragment.
"""
from __future__ import annotations

import math
from dataclasses import replace

import pandas as pd
import streamlit as st

from core import classroom
from core.i18n import N_, _, current
from core.labs import Url, classroom as lab_classroom, controls_of, section_number, training as lab
from core.nn import said
from core.runs import saved
from core.runs.tasks import LM
from core.runs.config import DATA, FORM_GROUPS, FORM_SETTINGS, PRESETS, SETTINGS, Preset, config_overrides, \
    parse_overrides
from core.runs.record import Progress, Status
from ui import exercises, learner, model_choice, settings_form, sweep, texts, url_state
from ui.common import cite, header, learner_errors, plain, show_source
from ui.lab import metric_row
from ui.notebook import download_button
from ui.plots import show_chart
from ui.run_notice import group_line, queued_notice, status_word, together
from ui.session import fragment_only_run, job_manager, session_id

SOURCES = {"timemachine": N_("The Time Machine"), "upload": N_("My upload")}


def choose_preset() -> Preset:
    name = url_state.draw(controls_of("training")["preset"], choices=tuple(PRESETS),
                          format_func=lambda p: _(PRESETS[p].label)) or "book"
    st.caption(_(PRESETS[name].note))
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
        off["device"] = _("This server has no GPU: runs train on the CPU.")
    # Not an st.form: a choice that changes what applies (tokens, split) greys or frees the others at once.
    # Settings a teacher's link hides (?hide=lr,epochs) are not drawn: they keep the link's values.
    hidden = url_state.hidden_names()
    with st.container(border=True):
        for group in FORM_GROUPS:
            lead = [lambda col: col.radio(_("Text"), tuple(SOURCES), key=source_key,
                                          format_func=lambda k: _(SOURCES[k]))] \
                if group == DATA else []
            shown = [SETTINGS[n] for n in FORM_SETTINGS if SETTINGS[n].group == group and SETTINGS[n].key not in hidden]
            settings_form.section(group, shown, prefix, lead, lookup=SETTINGS, off=off)
        if any(SETTINGS[n].key in hidden for n in FORM_SETTINGS):
            fixed = ", ".join(f"{_(SETTINGS[n].label)} {_(SETTINGS[n].word(st.session_state[f'{prefix}.{n}']))}"
                              for n in FORM_SETTINGS if SETTINGS[n].key in hidden)
            st.caption(_("Your teacher's link fixes: {fixed}.").format(fixed=plain(fixed, 300)))
        submitted = st.button(_("Train"), type="primary", icon=":material/play_arrow:", disabled=busy,
                              key="tr.train")
        if (limits := class_limits()) is not None:
            st.caption(_("Your class's training limits, set by your teacher: {limits}.").format(limits=limits.words()))
    return st.session_state[source_key], submitted


def class_limits() -> classroom.Limits | None:
    """The training limits of this learner's class (None: not in a class, or the records cannot be read)."""
    who = learner.current()
    if who is None or who.class_id is None:
        return None
    try:
        return classroom.class_limits(who.class_id)
    except ValueError:
        return None


def check_class_limits(config) -> None:
    """ValueError in words when this run would pass the class's limits (epochs, runs at once)."""
    limits = class_limits()
    if limits is None:
        return
    who = learner.current()
    going = lab_classroom.active_runs(who.class_id)
    why = limits.refusal(config.epochs, sum(r.learner == who.name for r in going), len(going))
    if why:
        raise ValueError(why)


def training_text(source: str) -> str:
    if source == "upload":
        up = texts.uploaded()
        if up is None:
            raise ValueError(_("Upload a text first (in the box below), or train on The Time Machine."))
        return up["text"]
    text = texts.time_machine_or_none()
    if text is None:
        raise ValueError(_("The Time Machine is not available here. Upload a text below, or set RNNLAB_CORPUS."))
    return text


def start_run(preset: Preset, source: str, number: int) -> None:
    """Submit the form's run to the job manager and put its settings in the URL."""
    prefix = form_key(preset)
    chosen = {n: st.session_state[f"{prefix}.{n}"] for n in FORM_SETTINGS}
    wrong = lab.out_of_range(chosen)
    if wrong:
        st.error(_("Not started: {why}").format(why=" ".join(plain(w, 200) for w in wrong)), icon=":material/error:")
        return
    with learner_errors():
        if chosen["split"] == "book":
            chosen["truncation"] = "fresh"  # book windows are shuffled: each starts from a zero state
        config = replace(preset.config, **chosen)
        check_class_limits(config)
        job = job_manager().submit(config, training_text(source), session_id(), name=f"{preset.name} #{number}",
                                   on_saved=class_copy())
        keep_for_class(job.token, job.name, config)
        url_state.write_form(prefix, FORM_SETTINGS, config_overrides(preset.config, config))
        st.query_params[Url.RUN] = job.token   # the run's address: a reload or a new tab finds it again
        st.rerun()


def class_copy():
    """For a learner in a class: what copies their run's curve into the class's records once it is saved (called by
    the run's follower, not while a page draws), so the teacher keeps it after the run store cleans the run away."""
    who = learner.current()
    if who is None or who.class_id is None:
        return None
    return lambda key, run: classroom.keep_history(key, run.history, status=str(run.status))


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
    if not token or any(j.token == token for j in job_manager().for_session(session_id(), LM)):
        return
    try:
        found = job_manager().adopt(token, session_id())
    except ValueError as exc:   # there, but a file of it is damaged: say which
        st.error(_("{why} Train it again below.").format(why=plain(exc, 300)), icon=":material/error:")
        return
    if found is not None and found.kind.name != LM:
        st.warning(_("The run in this address is not a language model's: open it on its own lab's page."),
                   icon=":material/warning:")
    if found is None:
        st.warning(_("The run in this address is not in this server's run store: old runs are deleted after a "
                     "while (by age and total size). Train it again below (its settings are in the form)."),
                   icon=":material/warning:")


def run_metrics(p: Progress) -> None:
    metric_row(lab.progress_metrics(p))
    st.caption(_("Device: {device}").format(device=p.device))


def run_status(job) -> None:
    """The run's state: a progress bar and Stop while it runs, else how it ended."""
    p = job.progress
    if job.status == Status.QUEUED:
        queued_notice(job)
        if st.button(_("Cancel"), icon=":material/close:", key=f"cancel_{job.id}"):
            job_manager().stop(job.id)
            st.rerun()
        return
    if job.active:
        group_line(job)
        frac = p.step / p.total_steps if p and p.total_steps else 0.0
        st.progress(frac, text=_("epoch {epoch}/{epochs}, step {step}/{steps}").format(
            epoch=p.epoch, epochs=job.config.epochs, step=p.step, steps=p.total_steps) if p else
            _("preparing the data ..."))
        if not job.stopping and st.button(_("Stop"), icon=":material/stop:", key=f"stop_{job.id}"):
            job_manager().stop(job.id)
        if job.stopping:  # acknowledged at once, also in the very run that pressed Stop
            st.info(_("Stopping: the run ends after the step in progress and keeps everything learnt."),
                    icon=":material/hourglass_top:")
    elif job.status == Status.ERROR:
        st.error(plain(said.words(job.message), 600), icon=":material/error:")
    elif job.status == Status.DIVERGED:
        st.warning(plain(said.words(job.message), 600), icon=":material/error:")
    else:   # a message that names its status first ("finished 10 epochs") is shown as it is, in the page's language
        text = said.words(job.message) if job.message.startswith(job.status) else \
            _("{status}: {message}").format(status=status_word(job.status), message=said.words(job.message))
        st.success(plain(text, 600), icon=":material/check_circle:")


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


def progress_where_pressed() -> None:
    """Under the Train button, where the learner is looking: the run's progress in one line, with an estimate
    (its curves and samples are at the top of the page)."""
    job = next((j for j in job_manager().for_session(session_id(), LM) if j.active), None)
    if job is None:
        return
    p = job.progress
    others = job_manager().companions(job)
    if job.status == Status.QUEUED:
        st.progress(0.0, text=(_("Waiting in the queue for a free training slot, together with {others} in one "
                                 "computation: the top of the page says where.") if others else
                               _("Waiting in the queue for a free training slot: the top of the page says where."))
                    .format(others=together(others)))
        return
    if fragment_only_run() and st.session_state.get("training.line_every") != line_poll_seconds(job):
        st.rerun(scope="app")   # out of the queue: follow it at the training pace from now on
    if p is None:
        st.progress(0.0, text=_("Starting the run: preparing the data ..."))
        return
    where = {(False, False): _("{name}: epoch {epoch}/{epochs}, step {step}/{steps}"),
             (False, True): _("{name}: epoch {epoch}/{epochs}, step {step}/{steps}, about {eta:.0f} s left"),
             (True, False): _("{name}, together with {others} in one computation: epoch {epoch}/{epochs}, step "
                              "{step}/{steps}"),
             (True, True): _("{name}, together with {others} in one computation: epoch {epoch}/{epochs}, step "
                             "{step}/{steps}, about {eta:.0f} s left")}[(bool(others), math.isfinite(p.eta))]
    line = where.format(name=job.name, others=together(others), epoch=p.epoch, epochs=job.config.epochs, step=p.step,
                        steps=p.total_steps, eta=p.eta)
    st.progress(p.step / p.total_steps if p.total_steps else 0.0,
                text=_("{line}{perplexities}. Its curves and samples are at the top of the page.").format(
                    line=line, perplexities=lab.perplexities_when(p, job.config.epochs)))


def run_panel() -> None:
    mine = job_manager().for_session(session_id(), LM)
    current = [j for j in mine if j.active]
    latest = current[0] if current else (mine[-1] if mine else None)
    if latest is None:
        st.info(_("No run yet: choose a preset and press **{train}**.").format(train=_("Train")), icon=":material/info:")
        return
    if latest.active:
        st.session_state["training.watching"] = latest.id
    elif st.session_state.pop("training.watching", None) == latest.id and fragment_only_run():
        st.rerun(scope="app")  # the run just ended: redraw the whole page (compare and export appear)
    st.subheader(f"{plain(latest.name)}: {status_word(latest.status)}")
    run_status(latest)
    p = latest.progress
    if p is not None:
        run_metrics(p)
        show_chart(lab.curves_chart({latest.name: p.history}, _("Perplexity per epoch (epoch 0: untrained)"),
                                    f"curve-{latest.id}"))
        if latest.samples:
            temp = latest.config.sample_temperature
            st.markdown((_("**Samples** (prefix {prefix}, greedy)") if temp == 0 else
                         _("**Samples** (prefix {prefix}, T = {T:g})")).format(
                prefix=plain(repr(latest.config.sample_prefix)), T=temp))
            st.dataframe(pd.DataFrame([(s.epoch, s.text) for s in latest.samples[::-1]],
                                      columns=[_("epoch"), _("sample")]),
                         hide_index=True,
                         width="stretch", height=min(300, 40 + 35 * len(latest.samples)))


def upload_box() -> None:
    with st.expander(_("Train on your own text")):
        texts.upload_widget("training_upload")
        if texts.uploaded():
            st.caption(_("Uploaded: {name} ({n:,} characters)").format(name=plain(texts.uploaded()["name"]),
                                                                         n=len(texts.uploaded()["text"])))
        if texts.time_machine_or_none() is None:
            texts.missing_corpus_message()
            texts.download_button()


def export_row(j) -> None:
    with st.container(border=True):
        ppl = j.result.final.val_ppl if j.result.final else math.nan
        st.markdown(_("**{name}** · {status} · val perplexity {ppl:.2f}").format(name=plain(j.name),
                                                                               status=status_word(j.status), ppl=ppl))
        missing = j.result.missing()
        if missing:   # cleaned up, or damaged, after it finished: say so rather than offer what cannot be had
            st.warning(_("This run's {missing} are no longer in the run store (it may have been cleaned up): its "
                         "numbers above are all that is left.").format(missing=plain(", ".join(missing))),
                       icon=":material/warning:")
            return
        e1, e2, e3, e4 = st.columns(4)
        # deferred: the archive is built only when the learner clicks, not on every rerun
        e1.download_button(_("Download run (.zip: weights, JSON, CSV)"), lambda r=j.result: r.zip_bytes(),
                           file_name=f"rnnlab-run-{j.id}.zip", mime="application/zip", key=f"zip_{j.id}")
        e2.download_button(_("Metrics (.csv)"), lambda r=j.result: saved.metrics_csv(r.history),
                           file_name=f"rnnlab-{j.id}-metrics.csv", mime="text/csv", key=f"csv_{j.id}")
        if e3.button(_("Use in the Sampling lab"), key=f"use_{j.id}"):
            try:
                model_choice.add_session_model(j.name, j.result.lm)
            except ValueError as exc:   # its weights are damaged or gone
                st.error(plain(exc, 400), icon=":material/error:")
                return
            st.toast(_("{name} is now in the Sampling lab's model picker.").format(name=plain(j.name)))
        if e4.button(_("Delete"), key=f"delete_{j.id}", icon=":material/delete:",
                     help=_("Remove the run from this server for good: its weights, curve and address.")):
            job_manager().forget(j.id)
            if st.query_params.get(Url.RUN) == j.token:
                del st.query_params[Url.RUN]
            st.rerun()


def compare_and_export(done: list) -> None:
    st.header(_("Compare and export"))
    histories = {j.name: j.result.history for j in done}
    show_chart(lab.curves_chart(histories, _("Validation perplexity of this session's runs"), "compare"))
    st.dataframe(pd.DataFrame(lab.runs_rows(done)), hide_index=True, width="stretch",   # thousands separated
                 column_config={_("tokens/s"): st.column_config.NumberColumn(format="localized")})
    for j in reversed(done):
        export_row(j)


@st.cache_data(show_spinner=False)
def partition_rows(lang: str) -> list[dict]:   # lang: its headers' language
    return lab.partition_rows()


def partitions() -> None:
    """The book's two ways of cutting the text into minibatches (9.3), shown on token positions."""
    st.markdown(_("**Two ways to cut the text into minibatches** ({section}), shown on token positions 0 to 39, two "
                  "windows of five per minibatch, made by the functions training uses:").format(
        section=section_number("9.3")))
    st.dataframe(pd.DataFrame(partition_rows(current())), hide_index=True, width="stretch")
    st.caption(lab.partition_words())


def main() -> None:
    url_state.page("training")
    header(lab.KEY)
    st.markdown(_(lab.INTRO))
    cite(lab.SECTION)
    exercises.assignment("training")
    exercises.hold_figures("training")
    adopt_run_from_url()
    mine = job_manager().for_session(session_id(), LM)
    active = [j for j in mine if j.active]
    if active:
        st.sidebar.caption(_("Training {name}: its progress is on this page.").format(name=plain(active[0].name)))
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
    done = [j for j in job_manager().for_session(session_id(), LM) if not j.active and j.result is not None]
    if done:
        compare_and_export(done)
    with st.expander(_("How training works here")):
        st.markdown(_(lab.NOTES))
        partitions()
        show_source(*lab.SOURCE, title=_("The training loop"))
    exercises.section("training")


if __name__ == "__main__":
    main()
