"""Arguments -> request: `request_from` fills a request of `judge.app.requests` (where the
request types live; re-exported here for the commands) from the parsed arguments."""

from __future__ import annotations

import argparse
from dataclasses import MISSING, fields, is_dataclass
from typing import Any, TypeVar

from judge.app import requests as _app_requests
from judge.app.requests import (
    FROM_PROJECT_FILE,
    AlignRequest,
    BatchRequest,
    CalibrateRequest,
    CompareRequest,
    GateRequest,
    GradeRequest,
    JudgeOptions,
)

R = TypeVar("R")
__all__ = [
    "JudgeOptions",
    "GradeRequest",
    "CalibrateRequest",
    "GateRequest",
    "CompareRequest",
    "AlignRequest",
    "BatchRequest",
    "FROM_PROJECT_FILE",
    "request_from",
]


def request_from(kind: type[R], args: argparse.Namespace) -> R:
    """The request of type `kind` from the parsed arguments: each field is the option of
    that name (lists as tuples), a nested request type is filled from the same options.
    A field with a default may be missing from `args` (an option some forms lack)."""
    assert is_dataclass(kind)
    values: dict[str, Any] = {}
    for f in fields(kind):
        nested = _NESTED.get(f.name)
        if nested is not None:
            values[f.name] = request_from(nested, args)
            continue
        has_default = f.default is not MISSING or f.default_factory is not MISSING
        if has_default and not hasattr(args, f.name):
            continue
        value = getattr(args, f.name)
        values[f.name] = tuple(value) if isinstance(value, list) else value
    return kind(**values)


_NESTED: dict[str, type] = {"judge": JudgeOptions}


def __getattr__(name: str) -> Any:
    # the request types of probe, rubrics, label, config, serve, traces and watch live in
    # their jobs' modules (judge.app.probe, ...): named here on first use, so that a
    # command imports only its own job
    return getattr(_app_requests, name)
