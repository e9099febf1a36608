"""`--otel-endpoint URL` on `judge grade`: the option (the sending is `judge.app.otel`'s)."""

from __future__ import annotations

import argparse


def add_otel_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--otel-endpoint",
        metavar="URL",
        help="also send each record as an OpenTelemetry gen_ai.evaluation.result event to "
        "this OTLP/HTTP collector (http://host:4318; the traces extra)",
    )
