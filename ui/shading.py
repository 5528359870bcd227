"""Text shaded by surprisal, as HTML: each token's background by its bits under the model (the Sampling lab's
generated text and the texts a learner scores). Tokens are escaped, so a model's or a learner's text is only text."""
from __future__ import annotations

import html

import numpy as np


def tint(bits: float) -> str:
    level = min(bits / 6.0, 1.0)  # 0 bits: white, 6+ bits: strong red
    return f"rgba(228, 87, 86, {0.08 + 0.72 * level:.2f})"


def shaded(tokens: list[str], bits: np.ndarray, bold: str = "") -> str:
    """Tokens as HTML, each shaded by its surprisal (hover: probability and bits), after an optional bold lead."""
    spans = "".join(f'<span title="p = {2.0 ** -b:.3f} ({b:.1f} bits)" style="background:{tint(b)}">'
                    f'{html.escape(t)}</span>' for t, b in zip(tokens, bits))
    return (f'<div style="font-family:monospace;font-size:1.05em;line-height:1.7;white-space:pre-wrap;'
            f'border:1px solid #e5e7eb;border-radius:6px;padding:12px"><b>{html.escape(bold)}</b>{spans}</div>')


def surprisal_legend() -> str:
    legend = "".join(f'<span style="background:{tint(b)};padding:0 6px;margin-right:4px;white-space:nowrap">'
                     f'{b} bits</span>'
                     for b in (0, 1, 2, 4, 6))
    return (f'<div style="font-size:0.85em">Shade = surprisal −log₂ p of each generated character under the '
            f'model at T = 1: {legend} (bold: your prefix)</div>')
