"""One declaration per setting: name, type, default, range or choices, label, help.

A dataclass field made with `setting(...)` carries its declaration in the field's metadata; `declared(cls)`
reads the declarations back with the name and type filled in from the field itself (the choices of a
`typing.Literal` annotation become the setting's choices). Checking a value, parsing it from a URL or the
command line, writing it back as text and drawing its form widget all start from that one declaration.
"""
from __future__ import annotations

import math
import typing
from dataclasses import dataclass, field, fields
from typing import Any

from core.i18n import _
from core.checks import check_choice, check_int, check_real

MAX_ECHO = 40  # characters of a bad value quoted back in a message


@dataclass(frozen=True)
class Setting:
    name: str
    kind: type                    # int, float, str or bool
    default: Any
    lo: float | None = None       # numbers: the range; text: lo..hi characters
    hi: float | None = None
    lo_open: bool = False         # lo itself not allowed (a learning rate of 0)
    choices: tuple = ()           # from a Literal annotation
    label: str = ""
    help: str = ""
    group: str = ""               # the form section it is drawn in; "" = not on the form
    words: dict = field(default_factory=dict)   # how each choice is shown
    widget: str = ""              # choices: "radio" (default) or "select"
    step: float | None = None
    only_when: tuple = ()         # (other setting, its values): the setting matters only then (the form greys it)
    url: str = ""                 # its name in a page's URL, when shorter than its name ("temp" for temperature)

    @property
    def key(self) -> str:
        """The setting's name in a URL (?key=value) and in a page's widget keys."""
        return self.url or self.name

    def applies(self, values: dict) -> bool:
        """Whether this setting has any effect given the other settings' values."""
        if not self.only_when:
            return True
        other, allowed = self.only_when
        return values.get(other) in allowed

    def check(self, value: Any) -> Any:
        """value in this setting's type and range, or ValueError naming the setting."""
        if self.choices:
            return check_choice(self.name, value, self.choices)
        if self.kind is bool:
            if not isinstance(value, bool):
                raise ValueError(_("{name} must be true or false, got {value}.").format(name=self.name,
                                                                                         value=short(value)))
            return value
        if self.kind is int:
            return check_int(self.name, value, self.lo, self.hi)
        if self.kind is float:
            return check_real(self.name, value, self.lo, self.hi, lo_open=self.lo_open)
        if not isinstance(value, str):
            raise ValueError(_("{name} must be text, got {value}.").format(name=self.name, value=short(value)))
        if self.hi is not None and len(value) > self.hi:
            raise ValueError(_("{name} must be at most {hi:g} characters long, got {length}.").format(
                name=self.name, hi=self.hi, length=len(value)))
        return value

    def parse(self, text: str) -> Any:
        """The value written as text in a URL or on the command line, checked."""
        if not isinstance(text, str):
            raise ValueError(_("{name} takes text, got {value}.").format(name=self.name, value=short(text)))
        if self.choices:
            by_text = {as_text(c): c for c in self.choices}
            if text in by_text:
                return by_text[text]
            if self.kind in (int, float):   # "4.0" or "4" for the choice 4.0: the same number
                try:
                    number = float(text)
                except ValueError:
                    number = math.nan
                for c in self.choices:
                    if number == c:
                        return c
            raise ValueError(_("{name} must be one of {choices}, got {value}.").format(
                name=self.name, choices=", ".join(by_text), value=short(text)))
        if self.kind in (int, float):
            try:
                number = float(text)
            except ValueError:
                raise ValueError((_("{name} takes a whole number, got {value}.") if self.kind is int else
                                  _("{name} takes a number, got {value}.")).format(name=self.name,
                                                                                  value=short(text))) from None
            if self.kind is int:
                if not math.isfinite(number) or not number.is_integer():
                    raise ValueError(_("{name} takes a whole number, got {value}.").format(name=self.name,
                                                                                           value=short(text)))
                return self.check(int(number))
            return self.check(number)
        if self.kind is bool:
            if text.lower() in ("1", "true", "yes", "on"):
                return True
            if text.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(_("{name} takes 0 or 1, got {value}.").format(name=self.name, value=short(text)))
        return self.check(text)

    def word(self, choice: Any) -> str:
        """How a choice is shown to a learner."""
        return self.words.get(choice, str(choice))


def as_text(value: Any) -> str:
    """A value as a URL or the command line carries it: the one encoder. A float keeps 12 significant digits,
    enough for anything typed and short for a slider's 0.1 steps (0.30000000000000004 reads 0.3)."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return format(value, ".12g")
    return str(value)


def short(value: Any, limit: int = MAX_ECHO) -> str:
    """A value quoted back to a learner: repr, cut to `limit` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def setting(default: Any, label: str, help: str = "", *, lo: float | None = None, hi: float | None = None,
            lo_open: bool = False, group: str = "", words: dict | None = None, widget: str = "",
            step: float | None = None, only_when: tuple = (), choices: tuple = (), url: str = ""):
    """A dataclass field that declares a setting (its name and type come from the field; the choices from a
    Literal annotation, or from `choices` for numbers)."""
    spec = dict(lo=lo, hi=hi, lo_open=lo_open, label=label, help=help, group=group, words=words or {},
                widget=widget, step=step, only_when=only_when, choices=tuple(choices), url=url)
    return field(default=default, metadata={"setting": spec})


def declared(cls) -> dict[str, Setting]:
    """The Setting of every field of cls declared with setting(), in field order."""
    hints = typing.get_type_hints(cls)
    out: dict[str, Setting] = {}
    for f in fields(cls):
        spec = f.metadata.get("setting")
        if spec is None:
            continue
        hint = hints[f.name]
        literal = typing.get_args(hint) if typing.get_origin(hint) is typing.Literal else ()
        choices = literal or spec["choices"]
        kind = type(choices[0]) if literal else hint
        out[f.name] = Setting(name=f.name, kind=kind, default=f.default, **{**spec, "choices": tuple(choices)})
    return out


def allowed(s: Setting) -> str:
    """A number setting's range in words, for its help: the field keeps values inside it."""
    if s.kind is int:
        return _("Allowed: {lo:,} to {hi:,}.").format(lo=int(s.lo), hi=int(s.hi))
    if s.kind is float:
        return (_("Allowed: {lo:g} to {hi:g} (not 0).") if s.lo_open else _("Allowed: {lo:g} to {hi:g}.")).format(
            lo=s.lo, hi=s.hi)
    return ""
