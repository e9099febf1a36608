"""`--limit`, `--sample` and `--sample-seed`: the options; what they select is
`judge.app.selection`'s (re-exported here for the commands)."""

from __future__ import annotations

import argparse

from judge.app.selection import (
    Selects,
    check_selection,
    described,
    selected,
    selection_from_args,
)

DEFAULT_SAMPLE_SEED = 0
__all__ = ["Selects", "check_selection", "described", "selected", "selection_from_args"]


def add_selection_options(parser: argparse.ArgumentParser, *, verb: str = "grade") -> None:
    """`--limit`, `--sample` and `--sample-seed`; `verb` says what is done to the cases."""
    parser.add_argument("--limit", type=int, help=f"{verb} only the first N cases")
    parser.add_argument(
        "--sample",
        type=int,
        help=f"{verb} a reproducible random sample of N cases (seeded by --sample-seed)",
    )
    parser.add_argument(
        "--sample-seed",
        type=int,
        default=DEFAULT_SAMPLE_SEED,
        help=f"seed of --sample; --seed is the judge's ({DEFAULT_SAMPLE_SEED})",
    )
