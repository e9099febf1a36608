"""Case text and the judge's reasons, for the cases a report singles out.

Files are streamed and only the wanted ids are kept, so a report over a million cases
holds a few dozen in memory. Case text is untrusted: every piece goes through `esc`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from calibration.io.rows import is_csv
from calibration.io.rows import iter_rows as iter_any_rows
from judge.engine.inputs import iter_rows, to_case
from judge.engine.records import scan_records
from judge.report.html import esc, fmt
from judge.schemas import Case

MAX_CASES = 25


def read_cases(path: Path | None, ids: Iterable[str]) -> dict[str, Case]:
    """The cases of `path` whose id is wanted (unreadable rows are skipped)."""
    wanted = set(ids)
    found: dict[str, Case] = {}
    if path is None or not path.is_file() or not wanted:
        return found
    for _, row in iter_rows(path):
        if isinstance(row, dict) and str(row.get("id")) in wanted:
            case, _ = to_case(row)
            if case is not None:
                found[case.id] = case
    return found


def read_records(path: Path | None, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Rows of a records file (JSONL records, or CSV) whose id is wanted."""
    wanted = set(ids)
    if path is None or not path.is_file() or not wanted:
        return {}
    if is_csv(path):  # unreadable rows are skipped, as for the cases
        rows = (row for _, row in iter_any_rows(path) if isinstance(row, dict))
        return {str(r["id"]): r for r in rows if r.get("id") in wanted}
    return {r["id"]: r for _, r in scan_records(path) if r["id"] in wanted}


def reasons(record: dict[str, Any] | None) -> list[str]:
    """The judge's reasons in a record: each claim with its verdict and evidence, or the
    rationale, or the error; empty when the record has none."""
    if not record:
        return []
    verdict = record.get("verdict")
    if isinstance(verdict, dict):
        claims = verdict.get("claims")
        if isinstance(claims, list):
            return [_claim(c) for c in claims if isinstance(c, dict)] or ["(no claims: abstained)"]
        if verdict.get("rationale"):
            return [str(verdict["rationale"])]
        return [json.dumps(verdict, ensure_ascii=False)]
    for key in ("rationale", "error"):
        if record.get(key):
            return [f"{key}: {record[key]}"]
    return []


def _claim(claim: dict[str, Any]) -> str:
    evidence = f' (evidence: "{claim["evidence"]}")' if claim.get("evidence") else ""
    return f"{claim.get('verdict', '?')}: {claim.get('claim', '')}{evidence}"


def case_card(
    case_id: str,
    case: Case | None,
    record: dict[str, Any] | None,
    tags: Iterable[tuple[str, Any, str]] = (),
    *,
    open_: bool = True,
    more: Iterable[tuple[str, dict[str, Any] | None]] = (),
) -> str:
    """One case as a card that folds (no script: `<details>`): tags (name, value, css
    class), question, contexts, answer(s), the judge's reasons; `more` adds other records'
    reasons under their names (each rubric of a pass, each juror of a panel). Without the
    case text, the id and tags alone."""
    badges = "".join(
        f'<span class="tag {esc(cls)}">{esc(name)}: {esc(fmt(value))}</span>'
        for name, value, cls in tags
    )
    state = " open" if open_ else ""
    parts = [
        f'<details class="case"{state}><summary><strong>{esc(case_id)}</strong> {badges}</summary>'
    ]
    if case is not None:
        parts.append(_block("question", case.question))
        if case.contexts:
            items = "".join(f"<li>{esc(c)}</li>" for c in case.contexts)
            parts.append(f'<p class="label">contexts</p><ol>{items}</ol>')
        for name in ("answer", "answer_a", "answer_b", "reference"):
            parts.append(_block(name.replace("_", " "), getattr(case, name)))
    for name, judged in [("", record), *more]:
        why = reasons(judged)
        if why:
            items = "".join(f"<li>{esc(line)}</li>" for line in why)
            named = f" ({esc(name)})" if name else ""
            parts.append(f'<p class="label">judge\'s reasons{named}</p><ol>{items}</ol>')
    parts.append("</details>")
    return "".join(parts)


def case_cards(
    rows: Iterable[tuple[str, Case | None, dict[str, Any] | None, list[tuple[str, Any, str]]]],
    *,
    open_first: int = 5,
) -> list[str]:
    """Cards for (id, case, record, tags) rows; the first `open_first` unfolded."""
    return [case_card(*row, open_=i < open_first) for i, row in enumerate(rows)]


def _block(label: str, text: str | None) -> str:
    if not text:
        return ""
    return f'<p class="label">{esc(label)}</p><p class="text">{esc(text)}</p>'
