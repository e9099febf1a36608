"""Traces in and verdicts out (docs/guides/traces.md): OTLP JSON files and Phoenix projects
read as cases (`spans`, `mapping`, `phoenix`, `pull`), records sent back as
`gen_ai.evaluation.result` events over OTLP/HTTP (`otel`, the traces extra) or as Phoenix
span annotations, and `judge watch`'s loop over live traffic (`sources`, `sampling`, `watch`).

The names below are imported on first use (PEP 562 `__getattr__`): the service loads the
event exporter without Phoenix's HTTP client or the watch loop. (`watch`, the loop, is
`judge.traces.watch.watch`: its module has the name.)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judge.traces.mapping import Extraction, Missing, TraceMapping, cases_from_spans
    from judge.traces.otel import EVENT_NAME, EvaluationExporter, ExportCounts
    from judge.traces.phoenix import PhoenixClient, PhoenixError
    from judge.traces.pull import export_records, pull_otlp, pull_phoenix, push_phoenix
    from judge.traces.sampling import Budget, Sampling
    from judge.traces.sources import OtlpFileSource, PhoenixSource
    from judge.traces.spans import Span, read_otlp_file
    from judge.traces.watch import WatchOptions

_HOME_OF = {
    **dict.fromkeys(["Extraction", "Missing", "TraceMapping", "cases_from_spans"], "mapping"),
    **dict.fromkeys(["EVENT_NAME", "EvaluationExporter", "ExportCounts"], "otel"),
    **dict.fromkeys(["PhoenixClient", "PhoenixError"], "phoenix"),
    **dict.fromkeys(["export_records", "pull_otlp", "pull_phoenix", "push_phoenix"], "pull"),
    **dict.fromkeys(["Budget", "Sampling"], "sampling"),
    **dict.fromkeys(["OtlpFileSource", "PhoenixSource"], "sources"),
    **dict.fromkeys(["Span", "read_otlp_file"], "spans"),
    **dict.fromkeys(["WatchOptions"], "watch"),
}
__all__ = [
    "Budget",
    "EVENT_NAME",
    "EvaluationExporter",
    "ExportCounts",
    "Extraction",
    "Missing",
    "OtlpFileSource",
    "PhoenixClient",
    "PhoenixError",
    "PhoenixSource",
    "Sampling",
    "Span",
    "TraceMapping",
    "WatchOptions",
    "cases_from_spans",
    "export_records",
    "pull_otlp",
    "pull_phoenix",
    "push_phoenix",
    "read_otlp_file",
]


def __getattr__(name: str) -> Any:
    home = _HOME_OF.get(name)
    if home is None:
        raise AttributeError(f"module 'judge.traces' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"judge.traces.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
