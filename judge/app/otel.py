"""`--otel-endpoint URL` on `judge grade`: each record of the run sent as a
`gen_ai.evaluation.result` event (judge.traces.otel), read back from the records file, the
source of truth; the events' trace links come from the cases' metadata. judge.traces loads
only when the option is given."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judge.app.edge import note
from judge.errors import UsageError


def check_otel_option(request: Any) -> None:
    """Before anything is graded: one rubric graded online, the extra installed, a URL."""
    endpoint = getattr(request, "otel_endpoint", None)
    if not endpoint:
        return
    from judge.traces.otel import logs_endpoint, require_otel

    many = "," in request.rubric or request.jury is not None
    if many or request.batch_api or request.export_batch or request.import_batch:
        raise UsageError("--otel-endpoint goes with one rubric and one judge, graded online")
    require_otel()
    logs_endpoint(endpoint)


def send_records(endpoint: str | None, records: Path, cases: Path | None) -> None:
    """Send the run's records; one line says what was delivered (a failure is counted,
    never an exit code: the records file has them all)."""
    if not endpoint:
        return
    from judge.traces.otel import logs_endpoint
    from judge.traces.pull import export_records, read_records, trace_links

    counts = export_records(read_records(records), endpoint, trace_links(cases))
    note(counts.line(logs_endpoint(endpoint)))
