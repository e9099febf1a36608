"""What a caller reads to tell of a jury's panel after a run: the outcomes that decide a
case, why the others did not, and the records a cause is read from (judge.jury.outcomes,
judge.engine.records), for the CLI's panel lines."""

from __future__ import annotations

from judge.engine.records import scan_records
from judge.jury.outcomes import CUT_OFF, DECIDED, decided_count, undecided_causes

__all__ = ["CUT_OFF", "DECIDED", "decided_count", "scan_records", "undecided_causes"]
