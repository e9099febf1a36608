"""`judge watch --label-rate R --label-dir DIR`: labels from production as they happen, and
the live agreement with people on `/metrics`.

The watch loop (judge.traces.watch) calls `graded` with each case it grades, before the
record is written, and `polled` after each poll. `graded` queues a seeded share of the
cases (judge.label.production) in DIR's label store, blind as `judge label` always is: the
item is the case's view, never the verdict. Queued before the record is written, a case a
killed watch graded is either queued already or graded again on restart and queued then
(the store keeps one item an id): never lost, never twice.

`polled` reads the labels people gave (few: they label by hand), joins them to the judge's
labels of those cases (kept in memory, read from the records file once at start) and sets,
per rubric, the latest window's agreement and its interval's lower bound, computed by
calibration.drift as `judge drift` computes a window, and the labels waiting. Once a poll,
never per scrape: a scrape only reads the gauges.
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from calibration.agreement.annotators import consolidate_annotators
from calibration.drift.stream import DriftOptions, drift_report
from calibration.drift.windows import count_windows
from calibration.io.labels import labels_from_rows, normalise_label
from judge.engine.records import scan_records
from judge.label.choices import case_view
from judge.label.production import open_production_store, queued
from judge.label.sampling import Item

if TYPE_CHECKING:
    from collections.abc import Callable

    from judge.engine.metrics import GradingMetrics
    from judge.label.store import LabelStore
    from judge.rubric import Rubric
    from judge.schemas import Case, GradedRecord

__all__ = ["LIVE_WINDOW", "ProductionLabels", "open_production_labels"]

LIVE_WINDOW = 100  # the latest window: the last 100 labelled cases, in grading order
MIN_LABELS = 30  # as `judge drift --min-labels`: fewer, and the gauges read NaN


@dataclass
class LiveGauges:
    """The gauges `polled` sets (judge watch's registry)."""

    kappa: Any
    lower: Any
    window: Any
    waiting: Any

    @classmethod
    def on(cls, metrics: GradingMetrics) -> LiveGauges:
        from prometheus_client import Gauge

        r = metrics.registry
        return cls(
            Gauge("judge_human_agreement", "Agreement of the judge with people over the latest "
                  "window of labelled cases: Cohen's kappa (linear weighted kappa on an ordinal "
                  "scale); NaN below 30 labels or when undefined", ["rubric"], registry=r),
            Gauge("judge_human_agreement_lower95", "Lower bound of the 95% interval of "
                  "judge_human_agreement (judge calibrate's interval); NaN as it is",
                  ["rubric"], registry=r),
            Gauge("judge_human_agreement_labels", "Labelled cases in the latest agreement "
                  "window (the last 100 labelled)", ["rubric"], registry=r),
            Gauge("judge_labels_waiting", "Cases queued for people (judge watch --label-dir) "
                  "with fewer labels than they need", ["rubric"], registry=r),
        )  # fmt: skip


@dataclass
class ProductionLabels:
    """The watch's label queue and its live figures."""

    store: LabelStore
    rubric: Rubric
    rate: float
    seed: int
    say: Callable[[str], None]
    gauges: LiveGauges | None = None
    judged: dict[str, str] = field(default_factory=dict)  # queued id -> the judge's label
    last: tuple[Any, tuple[float, float, int]] | None = None  # (its pairs, the figures)

    def graded(self, case: Case, record: GradedRecord) -> None:
        """Queue `case` when it is drawn and the judge gave it a label (only a label can
        be compared with a person's), and every case a certificate escalated (no judge
        decided it: people must; first in line, and left out of the live agreement)."""
        escalated = record.status == "escalated"
        if not escalated and (record.label is None or not queued(self.seed, case.id, self.rate)):
            return
        item = Item(case.id, 1.0 if escalated else self.rate, escalated=escalated)
        try:
            self.store.append_items([(item, case_view(self.rubric, case))])
        except sqlite3.Error as exc:  # the store busy past SQLite's wait: say, keep grading
            self.say(f"watch: {case.id} not queued for labelling: {exc}")
            return
        if not escalated:
            self.judged[case.id] = str(record.label)

    def polled(self) -> None:
        if self.gauges is None:
            return
        ref = self.rubric.id  # as judge_pass_rate's `rubric` label
        self.gauges.waiting.labels(ref).set(self.store.count_waiting())
        kappa, lower, n = self.latest_window()
        self.gauges.kappa.labels(ref).set(kappa)
        self.gauges.lower.labels(ref).set(lower)
        self.gauges.window.labels(ref).set(n)

    def latest_window(self) -> tuple[float, float, int]:
        """(agreement, its 95% lower bound, labelled cases) of the last LIVE_WINDOW
        labelled cases; NaN for a figure the window cannot give."""
        ids, human, judge = self._pairs()
        ids, human, judge = ids[-LIVE_WINDOW:], human[-LIVE_WINDOW:], judge[-LIVE_WINDOW:]
        if len(ids) < MIN_LABELS:
            return math.nan, math.nan, len(ids)
        key = (ids, human, judge)
        if self.last is not None and self.last[0] == key:  # no new label: the same figures
            return self.last[1]
        figures = self._figures(ids, human, judge)
        self.last = (key, figures)
        return figures

    def _figures(
        self, ids: list[str], human: list[str], judge: list[str]
    ) -> tuple[float, float, int]:
        options = DriftOptions(min_labels=MIN_LABELS, seed=self.seed)
        report = drift_report(ids, human, judge, count_windows(len(ids), len(ids)), options)
        row = report["windows"][0]
        interval = row.get("agreement_ci95")
        lower = interval[0] if interval else None
        return _number(row["agreement"]), _number(lower), len(ids)

    def _pairs(self) -> tuple[list[str], list[str], list[str]]:
        """(ids, people's labels, judge's labels) in the store's order, the order graded;
        several annotators of a case settled as `judge drift` settles them."""
        rows = [
            {"id": e.case_id, "label": e.label, "annotator": e.annotator}
            for e in self.store.events()
            if e.action == "label"
        ]
        human = {
            r.id: normalise_label(r.value)
            for r in consolidate_annotators(
                labels_from_rows(rows, source=str(self.store.path))
            ).records
        }
        ids = [c for c, _ in self.store.outline() if c in human and c in self.judged]
        return ids, [human[c] for c in ids], [normalise_label(self.judged[c]) for c in ids]


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else math.nan


def open_production_labels(
    folder: Path,
    rubric: Rubric,
    records: Path,
    *,
    rate: float,
    seed: int,
    metrics: GradingMetrics | None,
    say: Callable[[str], None],
) -> ProductionLabels:
    """DIR's store opened (created private), the judge's labels of its items read back
    from the records file, and the gauges registered when /metrics is served."""
    store = open_production_store(folder, rubric, rate=rate, seed=seed)
    labels = ProductionLabels(store, rubric, rate, seed, say)
    held = {case_id for case_id, _ in store.outline()}
    if held and records.exists():
        for _, data in scan_records(records):
            if data.get("id") in held and data.get("label") is not None:
                labels.judged[data["id"]] = str(data["label"])
    if metrics is not None:
        labels.gauges = LiveGauges.on(metrics)
    return labels
