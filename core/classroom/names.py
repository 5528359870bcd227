"""Display names (a learner's, a class's): shown as typed, compared as they look.

A name is refused when it holds a character that draws nothing or reorders text (Unicode's default-ignorable
code points, the Hangul fillers, the braille blank: 'Ada' plus an invisible filler reads as 'Ada'), a control
character, or no visible letter, digit or symbol at all. The joiners, variation selectors and tag characters that
build emoji sequences are allowed inside them (an emoji flag, a family, a scientist), and the joiners between the
letters of scripts that shape with them (Persian, Devanagari).

Two names look the same when they share a skeleton (Unicode TS 39, section 4): every character replaced by the one
its confusable group is written with (a Cherokee or Lisu A by the Latin A, a Cyrillic Es by S, a capital I by l),
from the confusables data of the confusable_homoglyphs package, after NFKC (full-width letters are letters) and
with case folded before and after (a capital I looks like a small l, a Cyrillic capital folds to a small one).
"""
from __future__ import annotations

import functools
import unicodedata
from core.i18n import N_, _

# Characters that draw nothing but are letters or symbols to Unicode (so no category check finds them), with
# Unicode's default-ignorable code points (DerivedCoreProperties.txt): format controls, fillers, selectors.
_BLANK_LETTERS = {0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800, 0x17B4, 0x17B5, 0x034F, 0x180E, 0x061C}
_IGNORABLE = [(0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
              (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
              (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
              (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF)]
_ZWNJ, _ZWJ, _VS16, _BLACK_FLAG = 0x200C, 0x200D, 0xFE0F, 0x1F3F4
_TAGS = range(0xE0020, 0xE0080)


def _ignorable(c: str) -> bool:
    o = ord(c)
    return o in _BLANK_LETTERS or any(lo <= o <= hi for lo, hi in _IGNORABLE)


def _pictographic(c: str | None) -> bool:
    """An emoji-like symbol (So, or a regional indicator) that an emoji sequence may join or select."""
    return c is not None and (unicodedata.category(c) == "So" or 0x1F1E6 <= ord(c) <= 0x1F1FF)


def _joined_script(c: str | None) -> bool:
    """A letter (or mark) of a script past Latin, Greek and Cyrillic, where joiners shape letters."""
    return c is not None and ord(c) >= 0x0590 and unicodedata.category(c)[0] in "LM"


def _in_emoji(name: str, i: int) -> bool:
    """Whether the ignorable character at i belongs to an emoji sequence: a joiner between two pictographs (a
    variation selector may stand between), a presentation selector after one, a flag's tags after the black flag."""
    o = ord(name[i])
    before = name[:i].rstrip(chr(_VS16))
    if o == _VS16:
        return _pictographic(before[-1:] or None)
    if o in (_ZWJ, _ZWNJ):
        after = name[i + 1:i + 2] or None
        if _joined_script(before[-1:] or None) and _joined_script(after):
            return True        # a joiner between letters of a script that shapes them (Persian, Devanagari...)
        return o == _ZWJ and _pictographic(before[-1:] or None) and _pictographic(after)
    if o in _TAGS or o == 0xE007F:
        head = name[:i].rstrip("".join(map(chr, _TAGS)))
        return head.endswith(chr(_BLACK_FLAG))
    return False


def check_display_name(name: object, what: str = N_("name"), most: int = 40) -> str:
    """A display name: plain text of 1 to `most` characters, tidied (NFC, spaces as one), with something visible
    and no character that draws nothing or controls the text (outside an emoji sequence)."""
    if not isinstance(name, str):
        raise ValueError(_("Type a {what}.").format(what=_(what)))
    name = " ".join(unicodedata.normalize("NFC", name).split())
    if not name:
        raise ValueError(_("Type a {what}.").format(what=_(what)))
    if len(name) > most:
        raise ValueError(_("A {what} has at most {most} characters.").format(what=_(what), most=most))
    for i, c in enumerate(name):
        if _ignorable(c) and not _in_emoji(name, i):
            raise ValueError(_("A {what} cannot contain characters that cannot be seen or that control the text "
                               "(here U+{code} {char}): type it with visible letters.").format(
                what=_(what), code=f"{ord(c):04X}", char=unicodedata.name(c, "unnamed")))
        if unicodedata.category(c) in ("Cc", "Cs", "Co", "Cn"):
            raise ValueError(_("A {what} cannot contain control characters (here U+{code}).").format(
                what=_(what), code=f"{ord(c):04X}"))
    if not any(unicodedata.category(c)[0] in "LNS" for c in name if not _ignorable(c)):
        raise ValueError(_("Type a {what} that can be seen: at least one letter, digit or symbol.").format(what=_(what)))
    return name


@functools.cache
def _prototypes() -> dict[str, str]:
    """Character -> the character its confusable group is written with (the group's ASCII one where it has one,
    else its lowest code point): the groups are the connected parts of confusable_homoglyphs' pairs."""
    from confusable_homoglyphs.confusables import confusables_data
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def bare(s: str) -> str:   # the data wraps right-to-left letters in direction marks
        return s.replace("\u200e", "").replace("\u200f", "")

    for key, similar in confusables_data.items():
        if len(bare(key)) != 1:
            continue
        for entry in similar:
            if len(c := bare(entry["c"])) == 1:
                a, b = find(bare(key)), find(c)
                if a != b:
                    parent[a] = b
    groups: dict[str, list[str]] = {}
    for c in list(parent):
        groups.setdefault(find(c), []).append(c)
    out = {}
    for members in groups.values():
        ascii_ = [c for c in members if ord(c) < 128]
        proto = min(ascii_ or members)
        out.update(dict.fromkeys(members, proto))
    return out


def skeleton(text: str) -> str:
    """TS 39's skeleton, with this module's groups: NFD, each character by its group's, NFD again."""
    table = _prototypes()
    return unicodedata.normalize("NFD", "".join(table.get(c, c) for c in unicodedata.normalize("NFD", text)))


def name_keys(name: str) -> set[str]:
    """How a name reads on screen: NFKC, ignorable characters gone, confusables by their group's character, case
    folded before and after (two keys). Two names that share a key look the same to a reader."""
    text = "".join(c for c in unicodedata.normalize("NFKC", name) if not _ignorable(c))
    return {" ".join(skeleton(text.casefold()).casefold().split()), " ".join(skeleton(text).casefold().split())}


def looks_like(a: str, b: str) -> bool:
    """Whether two display names read the same ('WS One', 'ws one', 'WЅ One' with a Cyrillic letter, 'ＷＳ Ｏｎｅ',
    'Ꭺda' with a Cherokee A)."""
    return bool(name_keys(a) & name_keys(b))
