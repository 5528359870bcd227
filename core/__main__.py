"""One entry point for the command-line tools: python -m core {verify,train,pretrain,passage,exercises} [options]."""
import sys

USAGE = """usage: python -m core COMMAND [options]

commands:
  verify     run the numeric checks of the RNN code (ends with 'N passed, M failed')
  train      train a language model from a preset (see --help)
  pretrain   rebuild the pretrained character RNN in assets/
  passage    rebuild the chapter's stored passage run in assets/ (seconds)
  exercises  check every exercise's grader on a right and a wrong answer
"""


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "verify":
        from core.verify import main as run
    elif command == "train":
        from core.runs.cli import main as run
    elif command == "pretrain":
        from core.runs.pretrain import main as run
    elif command == "passage":
        from core.passage_store import main as run
    elif command == "exercises":
        from core.exercises import main as run
    else:
        print(f"unknown command {command!r}\n\n{USAGE}", file=sys.stderr)
        return 2
    return run(rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
