"""The jury part of the calibrate job: a jury's panel records against people.

When JUDGE_LABELS is a jury's panel records (`judge grade --jury`: `OUT/<rubric>.jsonl`,
each record with `panel`), the calibration result gains `jury`: every juror's and the
panel's kappa (percentile bootstrap 95% interval), Gwet's AC1 and accuracy on the same
labelled cases, the panel against its best juror (paired bootstrap of the kappa
difference and McNemar's exact test, as `judge gate`), the correlation of the jurors'
errors and its n_eff (`calibration.compare.jury.jury_vs_humans`), and `cost_ratio`: the
panel's tokens per case over its best juror's, read from the jurors' records beside it
(`OUT/jurors/<name>.jsonl`; null without them). As in `judge grade --jury
--human-labels`: in `mode: cyclic` the cases every juror voted on, in `mode: escalate`
the panel against its first juror. `--fail-if` takes the names `judge grade --jury` gives
these figures (judge.jury.gates: `panel.kappa`, `juror.NAME.kappa`, `panel.beats_best`,
...). Human labels are one a case here; a file with several annotators a case leaves
`jury` skipped, saying why (the single-judge figures are unchanged).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from calibration.compare.jury import jury_vs_humans
from calibration.io.jsontext import loads_bounded
from calibration.io.labels import normalise_label, read_labels
from calibration.io.rows import iter_rows
from calibration.io.vocabulary import label_key
from judge.jury.gates import HUMANS, JUROR_HUMANS, vs_humans_metrics

JUROR_METRIC = re.compile(rf"^juror\.(.+)\.({'|'.join(JUROR_HUMANS)})$")
NOT_A_JURY = "JUDGE_LABELS is not a jury's panel records (no `panel` field)"


def is_jury_metric(name: str) -> bool:
    """Whether `--fail-if` names a jury figure (checked against the jury once read)."""
    return name in HUMANS or JUROR_METRIC.match(name) is not None


def panel_rows(path: Path) -> list[dict[str, Any]] | None:
    """The records of a panel records file, or None when `path` is not one."""
    if path.suffix.lower() != ".jsonl":
        return None
    rows = []
    for _, row in iter_rows(path):  # a file that is not a panel's is left at its first row
        if not isinstance(row, dict) or not isinstance(row.get("panel"), dict):
            return None
        rows.append(row)
    return rows or None


def jury_section(
    judge_labels: Path, human_labels: Path, *, human_field: str, n_bootstrap: int, seed: int
) -> dict[str, Any] | None:
    """The `jury` block of the module doc, or None when JUDGE_LABELS is not a panel's."""
    rows = panel_rows(judge_labels)
    if rows is None:
        return None
    humans = read_labels(human_labels, field=human_field)
    counts = Counter(r.id for r in humans.records)
    if any(n > 1 for n in counts.values()):
        return {
            "skipped": "the human labels give several labels a case; a jury is compared "
            "with one label a case"
        }
    spell: dict[str, str] = {}

    def key(value: Any) -> str | None:
        if value is None:
            return None
        text = normalise_label(str(value))
        return spell.setdefault(label_key(text), text)

    truth = {r.id: key(r.value) for r in humans.records}
    names = [
        v["juror"] for v in max(rows, key=lambda r: len(r["panel"]["jurors"]))["panel"]["jurors"]
    ]
    mode = rows[0]["panel"].get("mode", "full")
    labelled = [r for r in rows if r["id"] in truth]
    if mode == "cyclic":  # the overlap: every juror voted
        labelled = [r for r in labelled if len(r["panel"]["jurors"]) == len(names)]
    members = names[:1] if mode == "escalate" else names
    if not labelled:
        return {"skipped": "no panel record has a human label"}
    columns: dict[str, list[str | None]] = {name: [] for name in members}
    for record in labelled:
        votes = {v["juror"]: v for v in record["panel"]["jurors"]}
        for name in members:
            vote = votes[name]
            columns[name].append(key(vote["label"]) if vote["status"] == "ok" else None)
    panel = [key(r["label"]) if r["status"] == "ok" else None for r in labelled]
    seen = {*truth.values(), *panel, *(v for c in columns.values() for v in c)}
    result = jury_vs_humans(
        [r["id"] for r in labelled],
        [str(truth[r["id"]]) for r in labelled],
        columns,
        panel,
        labels=sorted(v for v in seen if v is not None),
        n_bootstrap=n_bootstrap,
        seed=seed,
    )
    result["mode"] = mode
    result["cost_ratio"] = _cost_ratio(judge_labels, rows, result["best_juror"])
    return result


def _cost_ratio(path: Path, rows: Sequence[Mapping[str, Any]], best: str) -> float | None:
    """The panel's tokens per case over its best juror's (from OUT/jurors/<best>.jsonl)."""
    juror = path.parent / "jurors" / f"{best}.jsonl"
    if not juror.is_file():
        return None
    lines = juror.read_text("utf-8").splitlines()
    own = [loads_bounded(line) for line in lines if line.strip()]
    per_case = _tokens(own) / len(own) if own else 0.0
    panel = _tokens(rows) / len(rows)
    return round(panel / per_case, 6) if per_case else None


def _tokens(records: Sequence[Mapping[str, Any]]) -> float:
    return float(
        sum(
            (r.get("usage") or {}).get("prompt_tokens", 0)
            + (r.get("usage") or {}).get("completion_tokens", 0)
            for r in records
        )
    )


def jury_gate_values(result: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The jury figures' values for `--fail-if`, and why those that are null are."""
    jury = result.get("jury")
    if jury is None:
        return {}, {name: NOT_A_JURY for name in HUMANS}
    if "skipped" in jury:
        return {}, {name: jury["skipped"] for name in HUMANS}
    return vs_humans_metrics(jury), {}


def unknown_juror_reason(name: str, result: Mapping[str, Any]) -> str:
    """Why `juror.NAME.*` has no value: not a jury, or no such juror."""
    jury = result.get("jury")
    if jury is None:
        return NOT_A_JURY
    if "skipped" in jury:
        return str(jury["skipped"])
    jurors = ", ".join(n for n in jury["members"] if n != "panel")
    match = JUROR_METRIC.match(name)
    who = match.group(1) if match else name
    return f"the jury has no juror {who!r} (its jurors compared: {jurors})"
