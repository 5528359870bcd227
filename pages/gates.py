"""Lab 6, Memory and gates: draws what core.labs.gates computes (settings, figures, readings all there). A comparison
trains in the server's training workers (core.runs.jobs, a run of the kind "memory"), never in this script: the page
shows the stored comparison until the learner's own has trained, and follows it live meanwhile."""
from __future__ import annotations

import math

import streamlit as st

from core.i18n import _, current
from core.labs import Url, controls_of, gates as lab
from core.nn import said
from core.nn.memory_store import COMMAND, Saved
from core.runs.tasks import MEMORY
from ui import exercises, url_state
from ui.common import learner_errors, plain
from ui.lab import lab_body, lab_intro, metric_row
from ui.plots import frozen_chart, show_chart
from ui.run_notice import queued_notice, status_word
from ui.session import fragment_only_run, job_manager, session_id

CONTROLS = controls_of(lab.KEY)
POLL_SECONDS = 1.0
_JOB = "gates.job"


def controls() -> lab.Settings:
    return lab.Settings(**{name: url_state.draw(s) for name, s in CONTROLS.items()})


@st.cache_resource(show_spinner=False)
def shipped() -> Saved:
    """The defaults' comparison from assets/, read once per server (ValueError says how to rebuild it)."""
    return lab.shipped()


@st.cache_resource(show_spinner=False, max_entries=32)
def analysed(s: lab.Settings, token: str | None, lang: str, _saved: Saved) -> tuple:
    """The result and its charts for a comparison (the stored one, token None, or the run with this key), once
    per server and language: a class opening the page at its defaults shares one. Shared, so nothing changes them
    after."""
    r = lab.analyse(s, _saved, shipped().delays)
    return r, {c.key: frozen_chart(c) for c in lab.charts(r)}


def my_job():
    """This session's latest comparison run, if the server still has it."""
    job_id = st.session_state.get(_JOB)
    return next((j for j in job_manager().for_session(session_id(), MEMORY) if j.id == job_id), None)


def shown(s: lab.Settings):
    """The learner's finished run trained at these settings, else None (the stored comparison is shown)."""
    job = my_job()
    if job is not None and not job.active and job.result is not None and job.config == lab.comparison(s):
        return job
    return None


def train(s: lab.Settings) -> None:
    with learner_errors():
        job = job_manager().submit(lab.comparison(s), "", session_id(), name=_("memory, delay {delay}").format(
            delay=s.delay))
    st.session_state[_JOB] = job.id
    st.query_params[Url.RUN] = job.token     # the run's address: a reload or a new tab finds it again


def adopt_run_from_url() -> None:
    """A reloaded page (or the address opened in a new tab) gets its comparison back, training or trained."""
    token = st.query_params.get(Url.RUN)
    if not token or (my_job() is not None and my_job().token == token):
        return
    try:
        found = job_manager().adopt(token, session_id())
    except ValueError as exc:   # there, but a file of it is damaged
        st.warning(_("{why} Train it again.").format(why=plain(exc, 300)), icon=":material/warning:")
        return
    if found is None or found.kind.name != MEMORY:
        st.warning(_("The run in this address is not a memory comparison this server still has (old runs are "
                     "deleted after a while): train it again."), icon=":material/warning:")
        return
    st.session_state[_JOB] = found.id


def train_row(s: lab.Settings, own) -> None:
    """The Train button, and where the figures come from (own: the learner's run shown, else None)."""
    job, stored = my_job(), shipped()
    busy = job is not None and job.active
    same = own is not None or stored.comparison == lab.comparison(s)
    c1, c2 = st.columns([1, 3], vertical_alignment="center")
    c1.button(_("Train again") if same else _("Train these"), type="primary", disabled=busy, key="gates.train",
              on_click=train, args=(s,), help=_("Trains the three cells one after another in the server's training "
                                                "workers; this page follows them."))
    if own is not None:
        c2.caption(_("The figures show your own run at these settings."))
    elif same:
        c2.caption(_("The figures show the stored run at these settings (`{command}` rebuilt it); training again with "
                     "this seed on the same machine gives the same numbers.").format(command=COMMAND))
    elif busy and job.config == lab.comparison(s):
        c2.info(_("Your run at these settings is training: the figures below show the stored run until it ends."),
                icon=":material/hourglass_top:")
    else:
        c2.warning(_("The figures still show the stored run ({described}). Press **{train}** to train the three cells "
                     "at your settings.").format(described=lab.described(stored.comparison), train=_("Train these")),
                   icon=":material/info:")


def run_panel() -> None:
    """The learner's run while it waits or trains: where it stands, its curves so far, Stop. Once it ends, the page
    draws again with its figures."""
    job = my_job()
    if job is None:
        return
    if not job.active:
        if st.session_state.pop("gates.watching", None) == job.id and fragment_only_run():
            st.rerun(scope="app")
        if job.status not in ("finished",):
            st.info(_("Your run ended ({status}): {message}").format(status=status_word(job.status),
                                                                      message=plain(said.words(job.message), 300)),
                    icon=":material/info:")
        return
    st.session_state["gates.watching"] = job.id
    if job.status == "queued":
        queued_notice(job)
    p = job.progress
    if p is not None:
        text = (_("Training the {cell}: step {step} of {total}, about {eta:.0f} s left") if math.isfinite(p.eta) else
                _("Training the {cell}: step {step} of {total}"))
        st.progress(min(1.0, p.step / p.total_steps), text=text.format(cell=_(lab.NAMES[p.cell]), step=p.step,
                                                                         total=p.total_steps, eta=p.eta))
        show_chart(frozen_chart(lab.progress_chart(p, job.config.delay)))
    elif job.status != "queued":
        st.progress(0.0, text=_("Starting the training worker…"))
    if st.button(_("Stop"), key="gates.stop", icon=":material/stop:",
                 help=_("Stops at the next step; everything learnt so far is kept.")):
        job_manager().stop(job.id)


def view(s: lab.Settings) -> None:
    exercises.hold_figures(lab.KEY)
    own = shown(s)
    train_row(s, own)
    job = my_job()
    if job is not None and job.active:
        st.fragment(run_every=POLL_SECONDS)(run_panel)()
    else:
        run_panel()
    stored = shipped()
    r, charts = analysed(s, own.token, current(), own.result) if own else \
        analysed(lab.settings_of(stored.comparison), None, current(), stored)
    metric_row(lab.metrics(r))
    st.caption(lab.sizes(r))
    for claim in lab.recalls(r):
        st.markdown(claim.text)
    show_chart(charts["accuracy"])
    show_chart(charts["delays"])
    show_chart(charts["gradients"])
    show_chart(charts["gates"])
    st.markdown(lab.notes(r))


def main() -> None:
    url_state.page("gates")
    adopt_run_from_url()
    lab_intro(lab)
    exercises.assignment(lab.KEY)
    lab_body(lab, controls, view)
    exercises.section(lab.KEY)


if __name__ == "__main__":
    main()
