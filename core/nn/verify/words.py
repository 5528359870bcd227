"""The verification checks' names in the reader's language. A check is named in English where it runs (the command
line prints that, and the tests read it); the RNN cell page shows each name again through one of these templates,
its parts (what is compared with what, the case in brackets) said in the language in force."""
from __future__ import annotations

import re

from core.i18n import N_, _, reword

TEMPLATES = (
    N_("forward: numpy reference == {phrase} [{case}]"),
    N_("numpy hand-written BPTT == {phrase}: d{param} [{case}]"),
    N_("BPTT == central differences, {n} entries of every parameter [{case}]"),
    N_("fused CPU RNN forward == torch.nn.RNN [{case}]"),
    N_("fused CPU RNN hand-written BPTT == autograd through torch.nn.RNN, inputs, state and all weights [{case}]"),
    N_("fused token-id RNN forward == torch.nn.RNN on one-hot inputs [{case}]"),
    N_("fused token-id RNN gradients (state and all weights) == autograd through torch.nn.RNN [{case}]"),
    N_("lean linear + cross-entropy == F.linear + F.cross_entropy, value and gradients [{case}]"),
    N_("one-Function training step (tanh layer, output layer, loss) == {phrase}, value, final state and every "
       "gradient [{case}]"),
    N_("hand-differentiated training step == the same step through autograd, bit for bit (float32): loss, final "
       "state, every gradient [{case}]"),
    N_("no starting state == nn.RNN with none (zeros), {phrase}: states, final states and every weight's gradient "
       "[{case}]"),
    N_("hand-differentiated step with no starting state == with a state of zeros, bit for bit (float32): loss, final "
       "state, every gradient [{case}]"),
    N_("{n} blocks of a batch == the whole batch through autograd (float64): mean loss, summed loss, every gradient "
       "[{case}]"),
    N_("{n} blocks in one process == the same blocks in {m} processes, bit for bit (float32): mean loss, summed loss, "
       "every gradient [{case}]"),
    N_("gated: stepped cell (core.nn.gated) == torch nn.{cell}, outputs and last h [{case}]"),
    N_("gated: autograd through the stepped cell == torch nn.{cell}'s backward, every weight and the inputs [{case}]"),
    N_("gated: autograd through the stepped {cell} == central differences, {n} entries of every weight [{case}]"),
    N_("clipping at theta={theta} gives norm theta (norm before {before})"),
    N_("clipping leaves a gradient below theta unchanged"),
    N_("a uniform model over {n} tokens has perplexity {m}"),
    N_("detached state stops the gradient at the window edge ({cell})"),
    N_("gradients stay finite over {n} steps"),
    N_("worst at {where}"),
    N_("worst: {where}"),
)
PHRASES = (N_("the torch scratch loop (core.nn.cells.ScratchRNN)"), N_("torch.nn.RNN (torch's own kernel)"),
           N_("the fused RNN (core.nn.fused)"), N_("autograd through the torch scratch loop"),
           N_("autograd through torch.nn.RNN (torch's own backward)"),
           N_("the fused RNN's hand-written backward (core.nn.fused)"),
           N_("nn.RNN on one-hot inputs + F.linear + F.cross_entropy"),
           N_("the two-Function path it replaces, bit for bit (float32)"), N_("dense inputs"), N_("token ids"))
CASE_WORDS = {"one-hot": N_("one-hot"), "embed": N_("embed")}   # words inside a case's brackets


def _part(key: str, value: str) -> str:
    if key == "phrase":
        return _(value) if value in PHRASES else value
    if key == "case":
        return re.sub(r"one-hot|embed", lambda m: _(CASE_WORDS[m.group(0)]), value)
    return value


def known(name: str) -> bool:
    """Whether a template says this name (or detail)."""
    return reword(name, TEMPLATES) is not None


def words(name: str) -> str:
    """A check's name (or its detail) in the language in force; a name no template matches, as it is."""
    said = reword(name, TEMPLATES, _part)
    return name if said is None else said
