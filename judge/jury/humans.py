"""The panel and each juror against human labels of some of the cases (`--human-labels`).

Reads the panel's records and the human labels, spells every label the rubric's way
(the labels' key, as calibration matches them), and hands the columns to
`calibration.compare.jury.jury_vs_humans`: each juror's and the panel's kappa, AC1 and
accuracy on the same cases, the panel against its best juror (paired bootstrap and
McNemar, as `judge gate`), the correlation of the jurors' errors. With the token counts,
the panel's cost relative to its best juror (tokens per case graded: a cyclic panel
costs about one juror).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from calibration.compare.jury import jury_vs_humans
from calibration.io.labels import normalise_label
from calibration.io.vocabulary import label_key
from judge.engine.measure.human_labels import HumanLabels
from judge.errors import UsageError
from judge.jury.records import PanelRecord
from judge.rubric import Rubric


def against_humans(
    records: Sequence[PanelRecord],
    rubric: Rubric,
    human: HumanLabels,
    *,
    tokens: Mapping[str, float],
    panel_tokens: float,
    n_bootstrap: int,
    jurors: Sequence[str] | None = None,
) -> dict[str, Any]:
    """`jury_vs_humans` on the labelled cases, and `cost_ratio`: the panel's tokens per
    case (`panel_tokens`) over its best juror's (`tokens`: each juror's per case it
    graded); `{"skipped": reason}` where the rubric names no labels. `jurors`: the jurors
    to compare (default: every juror of the records; each must have voted on every one)."""
    names = [c.name for c in rubric.behaviour.choices(rubric)]
    if not names:
        return {"skipped": f"rubric {rubric.ref} names no labels to compare with people"}
    spelled = {label_key(normalise_label(n)): n for n in names}
    truth = _one_label_each(human, spelled)
    labelled = [r for r in records if r.id in truth]
    if not labelled:
        return {"skipped": "no graded case has a human label"}
    if not any(_voted(record) for record in labelled):  # no figure from nothing
        return {"skipped": f"none of the {len(labelled)} labelled cases got a verdict"}
    members = list(jurors or [v["juror"] for v in labelled[0].panel["jurors"]])
    columns: dict[str, list[str | None]] = {name: [] for name in members}
    for record in labelled:
        votes = {v["juror"]: v for v in record.panel["jurors"]}
        for name in members:
            vote = votes[name]
            columns[name].append(_spell(vote["label"], spelled) if vote["status"] == "ok" else None)
    result = jury_vs_humans(
        [r.id for r in labelled],
        [truth[r.id] for r in labelled],
        columns,
        [_spell(r.label, spelled) if r.status == "ok" else None for r in labelled],
        labels=names,
        n_bootstrap=n_bootstrap,
    )
    best = tokens.get(result["best_juror"])
    result["cost_ratio"] = round(panel_tokens / best, 6) if best else None
    return result


def _one_label_each(human: HumanLabels, spelled: Mapping[str, str]) -> dict[str, str]:
    counts = Counter(label.id for label in human.labels)
    several = sorted(i for i, n in counts.items() if n > 1)
    if several:
        raise UsageError(
            f"{human.source}: a jury is compared with one human label a case; "
            f"{len(several)} cases have several (first: {several[0]!r})"
        )
    return {label.id: spelled.get(label_key(label.label), label.label) for label in human.labels}


def _spell(label: str | None, spelled: Mapping[str, str]) -> str | None:
    return None if label is None else spelled.get(label_key(normalise_label(label)), label)


def _voted(record: PanelRecord) -> bool:
    """Whether the panel or any juror gave the case a verdict."""
    return record.status == "ok" or any(v["status"] == "ok" for v in record.panel["jurors"])
