"""The HTML report of a jury's run (`judge grade --jury JURY.yaml --html`).

The panel's summary (the grade report's table), the panel's own figures (rule, outcomes,
votes, Krippendorff's alpha with its interval, pairwise kappa, effective independent votes,
cost, and against people when labels were given), each juror's figures, every case's
votes juror by juror, and the split decisions with their text and each juror's reasons.
The panel's records are streamed once, each juror's once for the split cases shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.engine.records import scan_records
from judge.report.cases import MAX_CASES, case_card, read_cases, read_records
from judge.report.grade import summary_table, totals
from judge.report.html import definitions, document, fmt, paragraph, section, table
from judge.report.provenance import Provenance
from judge.report.write import write_html

MAX_VOTE_ROWS = 2000  # cases in the votes table; the records file has every one
FAILED = ("parse_error", "api_error")


@dataclass
class _Votes:
    """What one pass over the panel's records keeps."""

    jurors: list[str]
    rows: list[list[Any]] = field(default_factory=list)
    split: list[dict[str, Any]] = field(default_factory=list)
    cases: int = 0
    provenance: Provenance = field(default_factory=Provenance)

    def add(self, record: dict[str, Any]) -> None:
        self.cases += 1
        self.provenance.add(record)
        panel = record.get("panel") or {}
        votes = {v.get("juror"): v for v in panel.get("jurors", [])}
        if len(self.rows) < MAX_VOTE_ROWS:
            self.rows.append(
                [
                    record["id"],
                    record.get("status"),
                    record.get("label"),
                    record.get("score"),
                    panel.get("outcome"),
                    panel.get("votes"),
                    *(_vote(votes.get(name)) for name in self.jurors),
                ]  # fmt: skip
            )
        if panel.get("outcome") != "unanimous" and len(self.split) < MAX_CASES:
            self.split.append(record)


def _vote(vote: dict[str, Any] | None) -> str:
    """A juror's vote in one cell: its label (and score when it differs), or its status."""
    if vote is None:
        return "-"  # not asked: cyclic and escalating panels ask some jurors only
    if vote.get("status") != "ok":
        return str(vote.get("status"))
    label, score = vote.get("label"), vote.get("score")
    if label is None:
        return fmt(score)
    return str(label) if score is None or str(label) == fmt(score) else f"{label} ({fmt(score)})"


def render_jury_report(
    summary: dict[str, Any],
    records: Path,
    jurors: Mapping[str, Path],
    cases: Path | None = None,
) -> str:
    """The report as an HTML string: `summary` is the panel's (`--summary`), `records` the
    panel's records file, `jurors` each juror's records file by name."""
    panel = summary["jury"]
    scan = _Votes(list(jurors))
    for _, record in scan_records(records):
        scan.add(record)
    sections = [
        section("Summary", summary_table(summary), totals(summary)),
        section("Panel", _panel(panel), _kappa(panel["agreement"]), *_humans(panel)),
        section("Jurors", _jurors(panel)),
        section("Votes by case", _votes(scan), lede=_votes_lede(scan)),
        section(
            "Split decisions",
            *_split(scan, jurors, cases),
            lede="Cases where the jurors did not all agree, with each juror's reasons.",
        ),  # fmt: skip
        section("Provenance", definitions([*scan.provenance.pairs(), ("records", str(records))])),
    ]
    title = f"Jury: {summary.get('rubric', '?')} on {summary.get('cases', 0)} cases"
    return document(title, f"records: {records}; jurors: {', '.join(jurors)}", sections)


def write_jury_report(
    path: Path,
    summary: dict[str, Any],
    records: Path,
    jurors: Mapping[str, Path],
    cases: Path | None = None,
) -> Path:
    return write_html(path, render_jury_report(summary, records, jurors, cases))


def _panel(panel: dict[str, Any]) -> str:
    agreement = panel["agreement"]
    cost = panel.get("cost") or {}
    pairs: list[tuple[str, Any]] = [
        ("mode", panel["mode"]),
        ("labels by", panel["rule"]),
        ("scores by", panel["scores"]),
        ("min votes", panel["min_votes"]),
        *((f"outcome: {k}", v) for k, v in panel["outcomes"].items()),
        *((f"votes: {k}", v) for k, v in panel["votes"].items()),
        ("agreement on", f"{agreement['cases']} cases"),
        ("Krippendorff's alpha", agreement["krippendorff_alpha"]),
        ("alpha 95% interval", agreement["krippendorff_alpha_ci95"]),
        ("unanimous share", agreement["unanimous_share"]),
        ("mean pairwise correlation", agreement["mean_pairwise_correlation"]),
        ("effective independent votes", f"{fmt(agreement['n_eff'])} of {len(agreement['jurors'])}"),
        ("cost (USD)", cost.get("total_usd")),
        ("cost a case (USD)", cost.get("per_case_usd")),
        ("requests a case", cost.get("requests_per_case")),
    ]
    return definitions(pairs)


def _kappa(agreement: dict[str, Any]) -> str:
    names = agreement["jurors"]
    kappa = agreement.get("pairwise_kappa") or {}
    rows = [[a, *((kappa.get(a) or {}).get(b) for b in names)] for a in names]
    return "<h3>Cohen's kappa, juror by juror</h3>" + table(["", *names], rows)


def _humans(panel: dict[str, Any]) -> list[str]:
    humans = panel.get("vs_humans")
    if not humans or "members" not in humans:
        return []
    rows = [[name, m.get("kappa"), m.get("kappa_ci95")] for name, m in humans["members"].items()]
    versus = humans.get("panel_vs_best") or {}
    return [
        "<h3>Against people</h3>",
        table(["", "kappa", "95% interval"], rows),
        paragraph(
            f"Panel against its best juror ({humans.get('best_juror')}): {versus.get('verdict')}."
        ),  # fmt: skip
    ]


def _jurors(panel: dict[str, Any]) -> str:
    costs = (panel.get("cost") or {}).get("jurors", {})
    rows = []
    for name, j in panel["jurors"].items():
        tokens = j.get("tokens") or {}
        status = " ".join(f"{k}: {v}" for k, v in (j.get("status") or {}).items())
        models = ", ".join(j.get("judge_models") or {})
        cost = costs.get(name, {})
        rows.append([name, models, j.get("cases"), status, j.get("scored"), j.get("mean_score"),
                     tokens.get("prompt"), tokens.get("completion"), cost.get("cost_usd"),
                     cost.get("requests")])  # fmt: skip
    head = ["juror", "model", "cases", "status", "scored", "mean score", "prompt tokens",
            "completion tokens", "cost (USD)", "requests"]  # fmt: skip
    return table(head, rows)


def _votes(scan: _Votes) -> str:
    head = ["id", "status", "label", "score", "outcome", "votes", *scan.jurors]
    return table(head, scan.rows)


def _votes_lede(scan: _Votes) -> str:
    shown = len(scan.rows)
    cut = f" The first {shown} of {scan.cases} are shown." if shown < scan.cases else ""
    return "Each juror's vote: its label (score), or its status when it failed." + cut


def _split(scan: _Votes, jurors: Mapping[str, Path], cases: Path | None) -> list[str]:
    if not scan.split:
        return [paragraph("None: every case was unanimous.")]
    ids = [r["id"] for r in scan.split]
    texts = read_cases(cases, ids)
    own = {name: read_records(path, ids) for name, path in jurors.items()}
    cards = []
    for index, record in enumerate(scan.split):
        panel = record.get("panel") or {}
        tags = [("outcome", panel.get("outcome"), "bad"), ("label", record.get("label"), ""),
                ("votes", panel.get("votes"), "")]  # fmt: skip
        judged = [(f"juror {name}", found.get(record["id"])) for name, found in own.items()]
        case = texts.get(record["id"])
        cards.append(case_card(record["id"], case, None, tags, open_=index < 5, more=judged))
    return cards
