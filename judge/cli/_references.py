"""`--references REFS --join-on FIELD` (judge grade, judge traces pull, judge watch)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_references_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--references",
        type=Path,
        metavar="REFS",
        help="JSONL or CSV of references keyed by --join-on: each case gets the fields it "
        "lacks (expected_tool_calls, goal, reference, ...) from the reference with its key",
    )
    p.add_argument(
        "--join-on",
        metavar="FIELD",
        help="the case field REFS is keyed by: goal, metadata.task_id, ... (a reference "
        "without FIELD is keyed by its last part: task_id)",
    )
