"""A sweep a teacher hands out: one setting of a lab and a list of its values, written in a link as
`KEY:v1,v2,...` (the setting's URL key), each learner who opens the link handed the next value in turn
(core.classroom.teacher.hand_out). Parsing checks every value with the setting's own declaration, so a link
can only hand out values the lab accepts."""
from __future__ import annotations

from dataclasses import dataclass

from core.settings import Setting, as_text
from core.i18n import _

MAX_VALUES = 12


@dataclass(frozen=True)
class Sweep:
    setting: Setting
    values: tuple[str, ...]     # each as the URL writes it

    def text(self) -> str:
        """The sweep as a link carries it (KEY:v1,v2,...)."""
        return f"{self.setting.key}:{','.join(self.values)}"

    def word(self, value: str) -> str:
        return f"{self.setting.label or self.setting.name} {value}"


def parse(text: object, settings: dict[str, Setting]) -> Sweep:
    """A sweep from its link text (KEY:v1,v2,...; spaces allowed), against a lab's declared settings by name.
    ValueError in words when the setting is not one of them or a value is not one it accepts."""
    if not isinstance(text, str) or ":" not in text:
        raise ValueError(_("A sweep is written as a setting's name, a colon and its values, e.g. lr:0.1,0.3,1."))
    key, rest = text.partition(":")[::2]
    by_key = {s.key: s for s in settings.values()}
    s = by_key.get(key.strip())
    if s is None:
        raise ValueError(_("This lab has no setting {key} to sweep; it has {keys}.").format(
            key=repr(key.strip()[:30]), keys=", ".join(by_key)))
    raw = [v.strip() for v in rest.split(",") if v.strip()]
    if not raw:
        raise ValueError(_("A sweep needs at least one value after the colon."))
    if len(raw) > MAX_VALUES:
        raise ValueError(_("A sweep hands out at most {most} values; this one has {n}.").format(most=MAX_VALUES,
                                                                                                n=len(raw)))
    values = []
    for v in raw:
        try:
            values.append(as_text(s.check(s.parse(v))))
        except ValueError as exc:
            raise ValueError(_("{value} is not a value of {setting}: {why}").format(
                value=repr(v[:30]), setting=_(s.label) or s.name, why=exc)) from None
    if len(set(values)) < len(values):
        raise ValueError(_("Each value of a sweep appears once."))
    return Sweep(s, tuple(values))
