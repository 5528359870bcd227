"""python -m core notebook LAB [--set KEY=VALUE ...] [--out FILE.ipynb]: a lab (or the chapter, with act=N among its
settings) as a Jupyter notebook at those settings, the same file the page's "Download as notebook" button gives."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.labs import PAGES, controls_of
from core.notebooks.build import build, dumps, file_name, pages_with_notebooks, settings_of


def parse_sets(page: str, pairs: list[str]) -> dict:
    """KEY=VALUE pairs (a setting's name or its URL key, e.g. temperature or temp) into values, each parsed and
    checked by its declaration."""
    controls = controls_of(page)
    by_key = {**{s.key: s for s in controls.values()}, **controls}
    values = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or key.strip() not in by_key:
            raise ValueError(f"--set takes KEY=VALUE with one of {page}'s settings ({', '.join(controls)}), "
                             f"got {pair!r}.")
        s = by_key[key.strip()]
        values[s.name] = s.parse(raw.strip())
    return values


def check_computes(page: str, values: dict) -> None:
    """Run the lab's computation once at these settings, as the notebook's first cells will (a lab that trains
    excepted): a value the lab refuses (a letter its word does not feed in) is said now, in the lab's words,
    instead of failing inside the notebook."""
    entry = PAGES[page]
    if entry.lab and entry.module is not None and not getattr(entry.module, "TRAINS", False):
        entry.module.compute(entry.module.Settings(**settings_of(page, values)))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m core notebook", description=__doc__.split("\n\n")[0])
    parser.add_argument("lab", help=f"one of {', '.join(pages_with_notebooks())}")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a setting (repeatable)")
    parser.add_argument("--out", help="the file to write (default: rnnlab-LAB.ipynb here)")
    parser.add_argument("--lang", default="en", help="the notebook's language: en (default) or zh (translated labs)")
    args = parser.parse_args(argv)
    try:
        values = parse_sets(args.lab, args.set) if args.lab in pages_with_notebooks() else {}
        nb = build(args.lab, values, args.lang)
        check_computes(args.lab, values)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out or file_name(args.lab, values, args.lang))
    out.write_text(dumps(nb), encoding="utf-8")
    print(f"wrote {out} ({len(nb.cells)} cells): open it in Jupyter, or run it with "
          f"jupyter nbconvert --to notebook --execute {out}")
    return 0
