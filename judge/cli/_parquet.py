"""`judge grade --parquet OUT.parquet`: the option (the table is written by
`judge.app.parquet`)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parquet_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--parquet",
        type=Path,
        metavar="OUT.parquet",
        help="also write the records as a Parquet table here (pip install 'llm-judge[frames]')",
    )
