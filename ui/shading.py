"""Text marked up as HTML: shaded by surprisal, each token's background by its bits under the model (the Sampling
lab's generated text and the texts a learner scores), Act 4's strips of the text against a network's guesses, and
tokens in alternating colours (Text to tokens).
Every character is escaped, so a model's or a learner's text is only text."""
from __future__ import annotations

import html

import numpy as np

from core.i18n import N_, _


def tint(bits: float) -> str:
    level = min(bits / 6.0, 1.0)  # 0 bits: white, 6+ bits: strong red
    return f"rgba(228, 87, 86, {0.08 + 0.72 * level:.2f})"


def shaded(tokens: list[str], bits: np.ndarray, bold: str = "") -> str:
    """Tokens as HTML, each shaded by its surprisal (hover: probability and bits), after an optional bold lead."""
    hover = _("p = {p:.3f} ({bits:.1f} bits)")
    spans = "".join(f'<span title="{html.escape(hover.format(p=2.0 ** -b, bits=b))}" style="background:{tint(b)}">'
                    f'{html.escape(t)}</span>' for t, b in zip(tokens, bits))
    return (f'<div style="font-family:monospace;font-size:1.05em;line-height:1.7;white-space:pre-wrap;'
            f'border:1px solid #e5e7eb;border-radius:6px;padding:12px"><b>{html.escape(bold)}</b>{spans}</div>')


def surprisal_legend() -> str:
    legend = "".join(f'<span style="background:{tint(b)};padding:0 6px;margin-right:4px;white-space:nowrap">'
                     + _("{bits} bits").format(bits=b) + "</span>"
                     for b in (0, 1, 2, 4, 6))
    words = _("Shade = surprisal −log₂ p of each generated character under the model at T = 1: {legend} (bold: your "
              "prefix)").format(legend=legend)
    return f'<div style="font-size:0.85em">{words}</div>'


def _cell(ch: str, wrong: bool) -> str:
    ch = html.escape("·" if ch == " " else ch)
    return f'<span style="background:#f4c7c3;text-decoration:underline">{ch}</span>' if wrong else f"<span>{ch}</span>"


ROWS = (N_("text"), N_("forced"), N_("free"))   # the strips' row labels: the text, then the two ways of guessing
STRIP = 15   # characters per group: each group carries the row labels, so a wrapped line is labelled too


def strips(truth: str, forced: str, free: str) -> str:
    """The text and the two kinds of guesses as HTML, one column of three characters per position (the text, the
    teacher-forced guess, the free-running guess), each wrong guess marked. The columns come in groups of STRIP,
    each with its own row labels; the groups wrap like words, so the three rows stay aligned and labelled at any
    width and nothing is cut at the right of a phone."""
    column = "display:inline-flex;flex-direction:column;line-height:1.5;font-family:monospace"
    labels = ('<span style="display:inline-flex;flex-direction:column;line-height:1.875;margin-right:.4em;'
              'font-size:.75em;color:#555;text-align:right">'
              + "".join(f"<span>{html.escape(_(word))}</span>" for word in ROWS) + "</span>")
    cols = [f'<span style="{column}">{_cell(t, False)}{_cell(g, g != t)}{_cell(f, f != t)}</span>'
            for t, g, f in zip(truth, forced, free)]
    groups = "".join(f"<span style='display:inline-flex;margin-right:.8em'>{labels}{''.join(cols[i:i + STRIP])}</span>"
                     for i in range(0, len(cols), STRIP))
    return f"<div style='display:flex;flex-wrap:wrap;row-gap:.8em;margin-bottom:1em'>{groups}</div>"


TOKEN_COLOURS = ("#dbeafe", "#fcd34d")


def token_spans(vocab, ids) -> str:
    """The tokens as HTML, alternately coloured so their boundaries show; hover for the id."""
    return "".join(
        f'<span title="id {int(i)}" style="background:{TOKEN_COLOURS[n % len(TOKEN_COLOURS)]};'
        f'border-left:1px solid #1f2937;padding:1px 0;white-space:pre-wrap">{html.escape(vocab.token_text(int(i)))}'
        '</span>' for n, i in enumerate(ids))
