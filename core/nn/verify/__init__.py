"""Numeric proof that the RNN code is right: python -m core verify

Each check compares two independent computations of the same numbers and passes when they agree within its
tolerance, and says what it compares. The run ends with the line 'N passed, M failed' and exits non-zero on any
failure.

  common.py   the problem shapes, a check's Result, the tolerances, helpers
  kernels.py  each torch implementation against the float64 numpy reference
  maths.py    finite differences and the identities the chapter relies on
  blocks.py   a batch in blocks of rows (core.nn.blocks) against the whole batch
  gates.py    the RNN, GRU and LSTM stepped in Python (core.nn.gated) against torch's nn.RNN, nn.GRU, nn.LSTM
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import Callable, Iterator

from core.nn.verify.common import CASES, TOL_ABS, TOL_IDENTITY, TOL_REL, Case, Result, torch_model, max_abs, rel_err
from core.nn.verify.kernels import (autograd_checks, forward_checks, fused_checks, hand_step_checks,
                                    linear_cross_entropy_checks, one_function_step_checks, token_input_checks,
                                    zero_state_checks)
from core.nn.verify.blocks import block_checks
from core.nn.verify.gates import gated_checks
from core.nn.verify.maths import (clipping_checks, concat_checks, finite_difference_checks, long_sequence_checks,
                                  truncation_checks, uniform_perplexity_checks)

__all__ = ["CASES", "TOL_ABS", "TOL_IDENTITY", "TOL_REL", "Case", "Result", "GROUPS", "max_abs", "rel_err",
           "run_checks", "main", "torch_model"]


GROUPS: dict[str, Callable[[], Iterator[Result]]] = {
    "forward": forward_checks,
    "autograd": autograd_checks,
    "finite differences": finite_difference_checks,
    "fused": fused_checks,
    "token inputs": token_input_checks,
    "linear cross-entropy": linear_cross_entropy_checks,
    "one-Function step": one_function_step_checks,
    "hand-differentiated step": hand_step_checks,
    "zero starting state": zero_state_checks,
    "batch blocks": block_checks,
    "concatenation": concat_checks,
    "clipping": clipping_checks,
    "perplexity": uniform_perplexity_checks,
    "truncation": truncation_checks,
    "long sequences": long_sequence_checks,
    "gated cells": gated_checks,
}


def run_checks() -> list[Result]:
    return [r for group in GROUPS.values() for r in group()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core verify", description=__doc__.splitlines()[0])
    parser.add_argument("-q", "--quiet", action="store_true", help="print failures and the summary only")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    results = run_checks()
    for r in results:
        if not args.quiet or not r.passed:
            mark = "PASS" if r.passed else "FAIL"
            print(f"{mark}  {r.name}: error {r.error:.2e} (tolerance {r.tolerance:.0e}){'  ' + r.detail if r.detail else ''}")
    passed = sum(r.passed for r in results)
    failed = len(results) - passed
    print(f"({time.perf_counter() - t0:.1f} s)")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
