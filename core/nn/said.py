"""What a run says when it ends or stops: written once, in English, by whoever trains it (a worker process, another
web process), and kept in the run store for every reader; shown in the reader's language. Each message is one of
these templates filled in: say() writes it, words() finds which and says it again in the language in force (a
message from elsewhere, such as an exception's text, stays as it is)."""
from __future__ import annotations

from core.i18n import N_, reword

TEMPLATES = {
    "finished": N_("finished {epochs} epochs"),
    "kept_best": N_("{message}; kept the best epoch ({epoch}) by validation loss"),
    "stopped_at": N_("stopped by the learner at step {step}"),
    "stopped_during": N_("stopped by the learner during step {step} (that step abandoned; everything learnt before it "
                         "kept)"),
    "time_limit": N_("stopped at the time limit ({seconds} s)"),
    "diverged_loss": N_("diverged at step {step} (loss {loss}): lower the learning rate. The weights from the last good "
                        "step are kept."),
    "diverged_norm": N_("diverged at step {step} (gradient norm {norm}): lower the learning rate."),
    "not_started": N_("stopped before its first step: nothing was learnt yet"),
    "server_gone": N_("stopped when the server went away, after {steps} steps; everything learnt is kept"),
    "together": N_("{n} runs trained together"),
    "failed": N_("training failed: {why}"),
    "abandoned": N_("stopped after {seconds} s with no one watching; everything learnt so far is kept"),
    "queue_gone": N_("it waited in the queue of a server that has since stopped"),
    "stale": N_("nothing new for {seconds} s: its trainer seems to be gone"),
    "curve_kept": N_("{message}; the curve so far is kept"),
    "nothing_saved": N_("the run ended before anything was saved; its curve is kept"),
    "follow_failed": N_("following the run failed: {why}"),
    "memory_stopped": N_("stopped after {steps} of {total} steps; everything learnt is kept"),
}
NESTED = "message"      # a placeholder that holds another message, itself said again


def say(key: str, **values) -> str:
    """The message, in English (what the run store keeps)."""
    return TEMPLATES[key].format(**values)


def words(message: str) -> str:
    """A stored message in the language in force: its template's translation, filled with the same values."""
    said = reword(message, TEMPLATES.values(), lambda name, value: words(value) if name == NESTED else value)
    return message if said is None else said
