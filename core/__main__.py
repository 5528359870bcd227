"""One entry point for the command-line tools: python -m core {verify,train,pretrain,passage,exercises,notebook,classroom,gates,catalog} [options]."""
import os
import sys

USAGE = """usage: python -m core COMMAND [options]

commands:
  verify     run the numeric checks of the RNN code (ends with 'N passed, M failed')
  train      train a language model from a preset (see --help)
  pretrain   rebuild the pretrained character RNN in assets/
  passage    rebuild the chapter's stored passage run in assets/ (seconds)
  exercises  check every exercise's grader on a right and a wrong answer
  notebook   a lab, or an act of the chapter, as a Jupyter notebook at chosen settings (see --help)
  classroom  check the class records file, or set a damaged one aside (check | set-aside)
  gates      rebuild the memory task's stored comparison of the RNN, GRU and LSTM in assets/ (seconds)
  catalog    extract the strings to translate into core/i18n/locale and list what a language's catalog lacks
"""


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "verify":
        from core.nn.verify import main as run
    elif command == "train":
        from core.runs.cli import main as run
    elif command == "pretrain":
        from core.runs.pretrain import main as run
    elif command == "passage":
        from core.lesson.store import main as run
    elif command == "exercises":
        from core.exercises.cli import main as run
    elif command == "notebook":
        from core.notebooks.cli import main as run
    elif command == "gates":
        from core.nn.memory_store import main as run
    elif command == "catalog":
        from core.labs.catalog import main as run
    elif command == "classroom":
        from core.classroom.cli import main as run
    else:
        print(f"unknown command {command!r}\n\n{USAGE}", file=sys.stderr)
        return 2
    return run(rest)


def finish(code: int | None) -> None:
    """Ends the process once its output is out, skipping Python's teardown: with torch loaded, freeing its
    modules object by object takes a quarter of a second here (after every command, and in every timed run of
    bench/train_speed.py --d2l). Nothing is left to tidy by then: every command has closed its files."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)


if __name__ == "__main__":
    finish(main(sys.argv[1:]))
