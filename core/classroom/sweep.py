"""A sweep a teacher hands out: one setting of a lab and a list of its values, written in a link as
`KEY:v1,v2,...` (the setting's URL key), each learner who opens the link handed the next value in turn
(core.classroom.teacher.hand_out). Parsing checks every value with the setting's own declaration, so a link
can only hand out values the lab accepts."""
from __future__ import annotations

from dataclasses import dataclass

from core.settings import Setting, as_text

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
        raise ValueError("A sweep is written as a setting's name, a colon and its values, e.g. lr:0.1,0.3,1.")
    key, _, rest = text.partition(":")
    by_key = {s.key: s for s in settings.values()}
    s = by_key.get(key.strip())
    if s is None:
        raise ValueError(f"This lab has no setting {key.strip()[:30]!r} to sweep; it has {', '.join(by_key)}.")
    raw = [v.strip() for v in rest.split(",") if v.strip()]
    if not raw:
        raise ValueError("A sweep needs at least one value after the colon.")
    if len(raw) > MAX_VALUES:
        raise ValueError(f"A sweep hands out at most {MAX_VALUES} values; this one has {len(raw)}.")
    values = []
    for v in raw:
        try:
            values.append(as_text(s.check(s.parse(v))))
        except ValueError as exc:
            raise ValueError(f"{v[:30]!r} is not a value of {s.label or s.name}: {exc}") from None
    if len(set(values)) < len(values):
        raise ValueError("Each value of a sweep appears once.")
    return Sweep(s, tuple(values))
