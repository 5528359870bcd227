"""Input checks shared by the core modules: each raises ValueError with a message a learner can act on."""
from __future__ import annotations

import math
import numbers

import numpy as np

from core.i18n import _


def check_int(name: str, value, lo: int | None = None, hi: int | None = None, what: str | None = None) -> int:
    """value as an int in [lo, hi]; bools, floats with a fraction and strings are refused."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        else:
            raise ValueError(_("{name} must be a whole number, got {value!r}.").format(name=name, value=value))
    value = int(value)
    if lo is not None and value < lo:
        raise ValueError(_("{name} must be at least {lo}, got {value}.").format(name=name, lo=lo, value=value))
    if hi is not None and value > hi:
        limit = f"{hi} ({what})" if what else str(hi)
        raise ValueError(_("{name} must be at most {hi}, got {value}.").format(name=name, hi=limit, value=value))
    return value


def check_real(name: str, value, lo: float | None = None, hi: float | None = None,
               lo_open: bool = False) -> float:
    """value as a finite float in [lo, hi] (or (lo, hi] with lo_open)."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise ValueError(_("{name} must be a number, got {value!r}.").format(name=name, value=value))
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(_("{name} must be a finite number, got {value}.").format(name=name, value=value))
    if lo is not None and (value <= lo if lo_open else value < lo):
        raise ValueError((_("{name} must be greater than {lo}, got {value:g}.") if lo_open else
                          _("{name} must be at least {lo}, got {value:g}.")).format(name=name, lo=lo, value=value))
    if hi is not None and value > hi:
        raise ValueError(_("{name} must be at most {hi}, got {value:g}.").format(name=name, hi=hi, value=value))
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
        raise ValueError(_("{name} must be one of {choices}; got {value!r}.").format(
            name=name, choices=", ".join(map(str, choices)), value=value))
    return value
