"""python -m core exercises: every exercise's grader checked on a right and a wrong answer (--bake rebuilds the
shipped answers of the exercises that train)."""
from __future__ import annotations

import sys

from core.exercises.types import self_check


def main(argv: list[str] | None = None) -> int:
    import argparse

    from core.text.corpus import corpus_available
    from core.exercises.bank import BANK

    parser = argparse.ArgumentParser(prog="python -m core exercises",
                                     description="Check every exercise's grader on a right and a wrong answer.")
    parser.add_argument("--bake", action="store_true", help="rebuild the shipped answers of the exercises that train "
                        "(assets/exercise_answers.json) instead")
    args = parser.parse_args(argv)
    if args.bake:
        from core.exercises import cache as exercise_cache

        written = exercise_cache.bake(BANK)
        print(f"wrote {len(written)} answers to {exercise_cache.SHIPPED}")
        return 0
    results = self_check(BANK, corpus_available())
    for key, status in results:
        print(f"{status.split(':')[0].upper():8s} {key}: {BANK[key].question[:70]}"
              + (f"  ({status.split(': ', 1)[1]})" if ": " in status else ""))
    passed = sum(s == "passed" for _, s in results)
    skipped = sum(s.startswith("skipped") for _, s in results)
    failed = len(results) - passed - skipped
    print(f"{passed} passed, {failed} failed" + (f" ({skipped} skipped: they need the corpus)" if skipped else ""))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
