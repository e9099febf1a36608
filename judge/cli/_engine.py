"""`judge grade --engine ray [--ray-address ADDR] [--ray-actors N]`: the options (what
they combine with, and the run on Ray: `judge.app.engines`)."""

from __future__ import annotations

import argparse


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("engine")
    group.add_argument(
        "--engine",
        choices=["local", "ray"],
        default="local",
        help="where the cases are graded: this process (local, the default) or a Ray "
        "cluster's actor pool (ray; pip install 'llm-judge[ray]')",
    )
    group.add_argument(
        "--ray-address",
        metavar="ADDR",
        help="with --engine ray: the cluster to join (auto, ray://HOST:10001, HOST:6379); "
        "default a local Ray instance started for this run",
    )
    group.add_argument(
        "--ray-actors",
        type=int,
        metavar="N",
        help="with --engine ray: actors grading in parallel, each with --concurrency "
        "requests in flight (default 2)",
    )
