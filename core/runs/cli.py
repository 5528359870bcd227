"""The command line for training: python -m core train --preset book --device auto --out runs/book

Every setting can be changed with --set NAME=VALUE (the names, types and ranges of core.runs.config.SETTINGS).
A folder given with --out is checked before training starts, so a run is never trained and then lost. Ctrl-C
stops the run after the step in progress and saves everything learnt so far (a second Ctrl-C quits at once).
"""
from __future__ import annotations

import argparse
import math
import signal
import sys
import threading

from core.runs.config import PRESETS, SETTINGS, with_overrides
from core.text.corpus import load_corpus
from core.nn.device import DEVICES
from core.runs.saved import check_writable, save_run
from core.runs.loop import train
from core.runs.record import Progress


def progress_bar(p: Progress, width: int = 30) -> str:
    frac = p.step / p.total_steps if p.total_steps else 1.0
    done = int(frac * width)
    eta = f"{p.eta:5.0f}s" if math.isfinite(p.eta) else "    ?"
    return (f"\r[{'#' * done}{'.' * (width - done)}] {100 * frac:5.1f}% epoch {p.epoch}/{p.epochs} "
            f"train ppl {p.train_ppl:7.2f} val ppl {p.val_ppl:7.2f} bpb {p.val_bpb:5.3f} "
            f"{p.tokens_per_s / 1000:7.1f}k tok/s eta {eta}")


def settings_help() -> str:
    rows = []
    for s in SETTINGS.values():
        allowed = ", ".join(map(str, s.choices)) if s.choices else (
            f"{s.lo:,}..{s.hi:,}" if s.kind is int else f"{s.lo:g}..{s.hi:g}" if s.kind is float else "text")
        rows.append(f"  {s.name:<14} {allowed:<32} {s.label}")
    return "settings for --set (name, allowed values, meaning):\n" + "\n".join(rows)


def stop_on_ctrl_c() -> threading.Event:
    """The first Ctrl-C asks the run to stop (it then saves what it learnt); the second one quits at once."""
    stop = threading.Event()

    def first(signum, frame):
        print("\nstopping after this step, then saving what was learnt (Ctrl-C again to quit at once) ...",
              file=sys.stderr)
        stop.set()
        signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGINT, first)
    return stop


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core train", description="Train an RNN language model.",
                                     epilog=settings_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", choices=sorted(PRESETS), default="book")
    parser.add_argument("--device", choices=DEVICES, default="auto")
    parser.add_argument("--out", default=None, help="folder for weights.safetensors, run.json, metrics.csv")
    parser.add_argument("--corpus", default=None, help="a text file to train on (default: The Time Machine)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="override a setting, e.g. --set epochs=5 --set cell=gru")
    args = parser.parse_args(argv)
    if args.out is not None and not args.out.strip():
        parser.error("--out needs a folder name (leave --out out to train without saving)")
    try:
        config = with_overrides(PRESETS[args.preset].config, args.set, device=args.device)
        if args.out is not None:
            check_writable(args.out)
        text = load_corpus(args.corpus)
        stop = stop_on_ctrl_c()
        result = train(config, text, stop_event=stop,
                       on_progress=lambda p: print(progress_bar(p), end="", flush=True, file=sys.stderr))
    except ValueError as exc:
        print(f"\nerror: {exc}", file=sys.stderr)
        return 2
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    print(file=sys.stderr)
    last = result.final
    said = result.message if result.message.startswith(result.status) else f"{result.status}: {result.message}"
    print(f"{said}; after {last.epoch} epochs ({last.step} steps): val ppl {last.val_ppl:.3f}, "
          f"{last.val_bpb:.3f} bits/byte, {result.elapsed:.1f} s on {result.device}, "
          f"{result.tokens_per_s:,.0f} tokens/s")
    if args.out is not None:
        try:
            print(f"saved to {save_run(result, args.out)}" + (" (everything learnt before the stop)"
                                                              if stop.is_set() else ""))
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    else:
        print("not saved: no --out folder was given, so the trained weights were not kept (add --out FOLDER to "
              "keep them)")
    return 130 if stop.is_set() else 0


if __name__ == "__main__":
    sys.exit(main())
