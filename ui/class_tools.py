"""The teacher's side of a class, Streamlit side: the teacher's key kept in the session and a cookie (the address
then shows only the public join code, safe to project or share), the live view's poll, and the tools that change
the class (assign exercises, open or close joining, rename or remove a learner, reset, hand out a sweep).
The records and their checks are core.classroom's."""
from __future__ import annotations

import streamlit as st

from core.i18n import _
from core import classroom
from core.exercises.bank import BANK
from core.labs import Url, controls_of
from core.runs.config import FORM_SETTINGS, SETTINGS
from core.labs import lab_title
from ui.common import plain
from ui.exercises import link
from ui.learner import write_cookie

KEYS = "_rnnlab_teacher_keys"         # join code -> the teacher's key, this session
COOKIE_PREFIX = "rnnlab_teacher_"     # + the join code: this browser remembers the key of each class it teaches
VERSION = "_rnnlab_class_version"     # the version the view on screen shows in full
_READ = "_rnnlab_class_version_read"   # the version this run read before drawing
_INLINE = "_rnnlab_class_poll_inline"  # the poll is being drawn as part of the page's own run
POLL_S = 1.0                          # the open view asks whether anything changed this often (one small query)


def _keep(info: classroom.ClassInfo) -> None:
    st.session_state.setdefault(KEYS, {})[info.join_code] = info.teacher_token


def teacher_class() -> classroom.ClassInfo | None:
    """The class this browser teaches at this address. A teacher link (?teacher=KEY) is read once: the key goes into
    the session and a cookie, and the address becomes the class's join link (?join=CODE), which opens the teacher's
    view only where the key is kept. ValueError when the records cannot be read."""
    key = st.query_params.get(Url.TEACHER)
    if key:
        info = classroom.class_by_teacher(key)
        if info is not None:
            _keep(info)
            write_cookie(COOKIE_PREFIX + info.join_code, info.teacher_token)
            del st.query_params[Url.TEACHER]
            st.query_params[Url.JOIN] = info.join_code
        return info
    code = classroom.normal_code(st.query_params.get(Url.JOIN))
    if code is None:
        return None
    key = st.session_state.get(KEYS, {}).get(code) or (st.context.cookies or {}).get(COOKIE_PREFIX + code)
    info = classroom.class_by_teacher(key) if key else None
    if info is None or info.join_code != code:
        return None
    _keep(info)
    return info


def damaged_records(fault: classroom.StorageFault) -> None:
    """The Class page while the records file is damaged: said by name. A teacher of a class in it (their key in
    this browser, found in the file read without writing) may set it aside here; everyone else is told who can."""
    st.error(plain(fault, 800), icon=":material/error:")
    keys = [st.query_params.get(Url.TEACHER), *st.session_state.get(KEYS, {}).values(),
            *(v for k, v in (st.context.cookies or {}).items() if k.startswith(COOKIE_PREFIX))]
    if not any(classroom.is_token(k) and classroom.faults.teaches_in(fault.path, k) for k in keys):
        st.caption(_("Only a teacher of a class in that file (from the browser that keeps their key) can set it aside "
                   "here, or whoever runs the server, from the command line."))
        return
    sure = st.checkbox(_("Yes: set the damaged file aside (kept, renamed beside it) and start fresh class records. "
                       "Classes start again: learners join anew."), key="class.aside.sure")
    if st.button(_("Set the damaged file aside"), key="class.aside", icon=":material/inventory_2:", disabled=not sure):
        kept = classroom.faults.set_aside(fault.path)
        st.success(_("Set aside as {name}. Fresh class records start now: start your class again below.").format(
            name=plain(kept.name if kept else "", 120)), icon=":material/check_circle:")
        st.query_params.clear()


def forget_key(info: classroom.ClassInfo) -> None:
    st.session_state.get(KEYS, {}).pop(info.join_code, None)
    write_cookie(COOKIE_PREFIX + info.join_code, None)


def watch(info: classroom.ClassInfo) -> None:
    """Rerun the page as soon as anything in the class changes (polled every POLL_S in a fragment: a change
    shows within about a second, and nothing is redrawn while nothing changes). Call drawn() when the view is
    complete: a run cut short (by a newer change) never counts as drawn, so the next poll draws it all again
    rather than leaving half of the older view on screen."""
    st.session_state[_READ] = classroom.version(info.id)

    @st.fragment(run_every=POLL_S)
    def poll() -> None:
        if not st.session_state.get(_INLINE):    # drawn with the page: it is the page's run that draws the view
            rerun_if_changed(info)
    st.session_state[_INLINE] = True
    try:
        poll()
    finally:
        st.session_state[_INLINE] = False


def rerun_if_changed(info: classroom.ClassInfo, since_read: bool = False) -> None:
    """Rerun the whole view when the class changed since it was drawn in full (since_read: since the page's last
    run began, as a fragment drawn inside that run asks). The poll asks every POLL_S, and so does the runs' own
    fragment (it redraws every few seconds while a run trains), so a change waits for neither."""
    try:
        now = classroom.version(info.id)
    except ValueError:
        return
    if now != st.session_state.get(_READ if since_read else VERSION):
        st.rerun()


def drawn() -> None:
    """The view is on screen in full, as of the version watch() read before drawing it."""
    st.session_state[VERSION] = st.session_state.get(_READ)


def teacher_link(info: classroom.ClassInfo, base: str) -> None:
    with st.expander(_("Your teacher link (private: keep it, never project it)"), icon=":material/key:"):
        st.caption(_("This link is the only key to the class: bookmark it or keep it somewhere private. This browser "
                   "remembers it, so this page's own address shows only the join code; on another computer, open "
                   "the class with the link. Anyone with it sees and manages the class."))
        st.code(f"{base}/classroom?{Url.TEACHER}={info.teacher_token}", language=None, wrap_lines=True)
        if st.button(_("Forget the key in this browser"), key="class.forget_key", icon=":material/logout:"):
            forget_key(info)
            st.query_params.clear()
            st.rerun()


def _done(message: str) -> None:
    st.toast(message, icon=":material/check_circle:")
    st.rerun()


def _try(work, message: str) -> None:
    try:
        work()
    except ValueError as exc:
        st.error(plain(exc, 300), icon=":material/error:")
        return
    _done(message)


def assignment(info: classroom.ClassInfo, base: str) -> set[str]:
    """The exercises assigned to the class (scores are out of them), with a link to hand out for each."""
    chosen = classroom.assigned(info.id)
    picked = st.multiselect(_("Assigned exercises (scores are out of these; none: out of all)"), list(BANK),
                            default=[k for k in BANK if k in chosen], key=f"class.assign.{sorted(chosen)}",
                            format_func=lambda k: f"{_(lab_title(BANK[k].lab))}: {_(BANK[k].question)[:70]}")
    if set(picked) != chosen and st.button(_("Save the assignment"), key="class.assign.save", icon=":material/save:"):
        _try(lambda: classroom.assign(info.id, picked), _("{n} exercises assigned.").format(n=len(picked)))
    if chosen:
        st.caption(_("A link for each assigned exercise: it opens the lab set up for it, the exercise on top, the "
                   "figures hidden until the learner checks (built as on the Exercises page)."))
        st.code("\n".join(base + link(BANK[k], list(BANK[k].url)) for k in BANK if k in chosen), language=None,
                wrap_lines=True)
    return chosen


def manage(info: classroom.ClassInfo, names: list[str]) -> None:
    """Open or close joining, rename or remove a learner, read or renew their resume code, reset the class (each one
    confirmed)."""
    opened = st.toggle(_("Open for joining"), value=info.open, key=f"class.open.{info.open}",
                       help=_("Closed: the join link and code refuse new learners; those in the class carry on."))
    if opened != info.open:
        _try(lambda: classroom.set_open(info.id, opened), _("Joining opened.") if opened else _("Joining closed."))
    if not names:
        st.caption(_("No learners yet: rename, remove and reset appear when someone has joined."))
        return
    who = st.selectbox(_("Learner"), names, key="class.who")
    rename, remove = st.columns(2)
    new = rename.text_input(_("New name"), max_chars=classroom.NAME_MAX, key="class.new_name")
    if rename.button(_("Rename"), key="class.rename", icon=":material/edit:", disabled=not new):
        _try(lambda: classroom.rename(info.id, who, new), _("Renamed."))
    sure = remove.checkbox(_("Yes, remove {who} from the class").format(who=plain(who, 40)), key="class.remove.sure")
    if remove.button(_("Remove"), key="class.remove", icon=":material/person_remove:", disabled=not sure):
        _try(lambda: classroom.remove(info.id, who), _("Removed: their answers stay theirs, out of this class."))
    code = classroom.class_resume_codes(info.id).get(who)
    st.caption((_("{who}'s resume code: **{code}**. They type it to go on with their answers on another device (no "
                  "link carries it).") if code else
                _("{who} gets a resume code when they next open a page.")).format(who=plain(who, 40), code=code))
    if st.button(_("Give them a new resume code"), key="class.resume", icon=":material/key:",
                 help=_("For a learner who lost theirs or shared it: the old code stops working at once.")):
        _try(lambda: classroom.new_resume_code(info.id, who), _("A new resume code: the old one no longer works."))
    sure = st.checkbox(_("Yes, remove all {n} learners (the class and its code stay)").format(n=len(names)),
                       key="class.reset.sure")
    if st.button(_("Reset the class"), key="class.reset", icon=":material/restart_alt:", disabled=not sure):
        _try(lambda: classroom.reset(info.id), _("The class is empty again."))


def training_limits(info: classroom.ClassInfo) -> None:
    """The class's training limits, which the Training page states to its learners and keeps to."""
    now = classroom.class_limits(info.id)
    with st.form("class.limits", border=False):
        a, b, c = st.columns(3)
        epochs = a.number_input(_("Most epochs a run"), 1, classroom.MOST_EPOCHS, now.epochs,
                                key="class.limits.epochs")
        each = b.number_input(_("Runs at once, each learner"), 1, 50, now.per_learner, key="class.limits.each")
        whole = c.number_input(_("Runs at once, the class (0: no limit)"), 0, 500, now.per_class,
                               key="class.limits.class",
                               help=_("Training or waiting. The server trains a few at a time whatever this says; "
                                    "the rest wait in its queue."))
        if st.form_submit_button(_("Save the limits"), icon=":material/save:"):
            _try(lambda: classroom.set_limits(info.id, classroom.Limits(int(epochs), int(each), int(whole))),
                 _("Training limits saved: the Training page states them to your learners."))
    st.caption(_("Now: {limits}. A run already going is not cut short: stop it above if need be.").format(
        limits=now.words()))


SWEEPABLE = [n for n in FORM_SETTINGS if SETTINGS[n].kind in (int, float) or SETTINGS[n].choices]


def sweep_builder(base: str) -> None:
    """A Training link that hands each learner who opens it the next value of one setting."""
    name = st.selectbox(_("Setting to sweep"), SWEEPABLE, index=SWEEPABLE.index("lr"), key="class.sweep.setting",
                        format_func=lambda n: _(SETTINGS[n].label) or n)
    s = SETTINGS[name]
    text = st.text_input(_("Values, in turn (comma-separated)"), value="0.1, 0.3, 1, 2, 4" if name == "lr" else "",
                         key=f"class.sweep.values.{name}")
    if not text.strip():
        return
    try:
        sweep = classroom.sweep.parse(f"{s.key}:{text}", {n: SETTINGS[n] for n in FORM_SETTINGS})
    except ValueError as exc:
        st.error(plain(exc, 300), icon=":material/error:")
        return
    preset = controls_of("training")["preset"]
    st.code(f"{base}/training?{preset.key}=tiny&{Url.SWEEP}={sweep.text()}", language=None, wrap_lines=True)
    st.caption(_("The first learner to open it trains with {key} {first}, the next with {second}, and so on, starting "
                 "again after the last; a learner keeps their value on a reload. Their runs then meet in 'The class's "
                 "training runs' above: final perplexity against the value, one point per learner.").format(
        key=s.key, first=sweep.values[0], second=sweep.values[1 % len(sweep.values)]))
