"""Input checks shared by the core modules: each raises ValueError with a message a learner can act on."""
from __future__ import annotations

import math
import numbers
import unicodedata

import numpy as np


def check_int(name: str, value, lo: int | None = None, hi: int | None = None, what: str | None = None) -> int:
    """value as an int in [lo, hi]; bools, floats with a fraction and strings are refused."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be a whole number, got {value!r}.")
    value = int(value)
    if lo is not None and value < lo:
        raise ValueError(f"{name} must be at least {lo}, got {value}.")
    if hi is not None and value > hi:
        limit = f"{hi} ({what})" if what else str(hi)
        raise ValueError(f"{name} must be at most {limit}, got {value}.")
    return value


def check_real(name: str, value, lo: float | None = None, hi: float | None = None,
               lo_open: bool = False) -> float:
    """value as a finite float in [lo, hi] (or (lo, hi] with lo_open)."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise ValueError(f"{name} must be a number, got {value!r}.")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value}.")
    if lo is not None and (value <= lo if lo_open else value < lo):
        raise ValueError(f"{name} must be {'greater than' if lo_open else 'at least'} {lo}, got {value:g}.")
    if hi is not None and value > hi:
        raise ValueError(f"{name} must be at most {hi}, got {value:g}.")
    return value


def check_finite_array(name: str, x, ndim: int | None = None, dtype=np.float64) -> np.ndarray:
    """x as a numpy array of dtype with no NaN or infinity."""
    try:
        arr = np.asarray(x, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an array of numbers ({exc}).") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError(f"{name} is empty.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values.")
    return arr


def check_choice(name: str, value, choices) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(str, choices))}; got {value!r}.")
    return value


# Display names (a learner's or a class's): shown as typed, compared as they look. Letters that look like Latin
# ones in most fonts (a short list from Unicode's confusables, UTS #39), applied with the case kept (a capital I
# looks like a small l) and after case folding (a capital Cyrillic Es folds to a small one).
_LOOK_ALIKE = str.maketrans({
    **dict(zip("АВЕКМНОРСТХУЅІЈԚԜаеорсухѕіјԁԛԝһӏӀ", "ABEKMHOPCTXYSlJQWaeopcyxsijdqwhll")),
    **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧοαρνικ", "ABEZHlKMNOPTYXoapvik")),
    **dict(zip("I1|0ɡı", "lllOgi")),
})
# Characters that draw nothing: gone from the comparison (zero-width space, joiners, word joiner, soft hyphen,
# byte-order mark, combining grapheme joiner), with the variation selectors.
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\u00ad\ufeff\u034f"), None) | dict.fromkeys(
    range(0xFE00, 0xFE10), None)
# The format characters a name may hold: the joiners that build emoji sequences (and join letters in some
# scripts), and the tag characters of flag emoji. Any other (a right-to-left override, say) is refused.
_FORMAT_ALLOWED = {0x200C, 0x200D, *range(0xE0020, 0xE0080)}


def check_display_name(name: object, what: str = "name", most: int = 40) -> str:
    """A display name: plain text of 1 to `most` characters, no control characters, spaces tidied (NFC, as typed)."""
    if not isinstance(name, str):
        raise ValueError(f"Type a {what}.")
    name = " ".join(unicodedata.normalize("NFC", name).split())
    if not name:
        raise ValueError(f"Type a {what}.")
    if len(name) > most:
        raise ValueError(f"A {what} has at most {most} characters.")
    if any(unicodedata.category(c).startswith("C") and ord(c) not in _FORMAT_ALLOWED for c in name):
        raise ValueError(f"A {what} cannot contain control characters.")
    if not name.translate(_INVISIBLE).strip():
        raise ValueError(f"Type a {what} that can be seen.")
    return name


def name_keys(name: str) -> set[str]:
    """How a name reads on screen: NFKC (full-width letters are letters), no invisible characters, look-alike
    letters as the Latin ones, case folded (the letters mapped before and after folding: two keys). Two names
    that share a key look the same to a reader."""
    text = unicodedata.normalize("NFKC", name).translate(_INVISIBLE)
    return {" ".join(text.translate(_LOOK_ALIKE).casefold().split()),
            " ".join(text.casefold().translate(_LOOK_ALIKE).split())}


def looks_like(a: str, b: str) -> bool:
    """Whether two display names read the same ('WS One', 'ws one', 'WЅ One' with a Cyrillic letter, 'ＷＳ Ｏｎｅ')."""
    return bool(name_keys(a) & name_keys(b))
