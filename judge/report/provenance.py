"""Who graded: the rubrics (id, version, sha256) and judges (model, settings,
`system_fingerprint`) found in graded records, each with how many records it graded."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from judge.engine.records import scan_records

_JUDGE_KEYS = ("model", "output_mode", "temperature", "seed", "max_tokens", "system_fingerprint")


class Provenance:
    """Feed records with `add`; `pairs()` gives (name, value) rows for a report."""

    def __init__(self) -> None:
        self.rubrics: Counter[str] = Counter()
        self.judges: Counter[str] = Counter()

    def add(self, record: dict[str, Any]) -> None:
        if "rubric_sha256" not in record:
            return
        ref = f"{record.get('rubric')}@{record.get('rubric_version')} sha256 {record.get('rubric_sha256')}"
        self.rubrics[ref] += 1
        judge = record.get("judge") or {}
        self.judges[
            ", ".join(f"{k}={judge[k]}" for k in _JUDGE_KEYS if judge.get(k) is not None)
        ] += 1

    def pairs(self) -> list[tuple[str, Any]]:
        rows: list[tuple[str, Any]] = [
            (f"rubric ({n} records)", r) for r, n in self.rubrics.most_common()
        ]
        rows += [(f"judge ({n} records)", j) for j, n in self.judges.most_common()]
        return rows


def records_provenance(path: Path) -> list[tuple[str, Any]]:
    """The provenance rows of a graded-records file (none for other label files)."""
    if not path.is_file() or path.suffix.lower() in (".csv", ".tsv"):
        return []
    found = Provenance()
    for _, record in scan_records(path):
        found.add(record)
    return found.pairs()
