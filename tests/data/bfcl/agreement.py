"""The agreement of each offline conversation rubric with BFCL's ground truth.

    python tests/data/bfcl/agreement.py [WORK_DIR]

Converts the vendored BFCL questions (convert.py), grades them with the built-in
`trajectory@1` and `tool_arguments@1` and with a user `trajectory` rubric for each match and
argument mode, and runs `judge calibrate` of each records file against the labels; prints a
Markdown table of kappa with its 95% interval, AC1 and the observed agreement (the table in
docs/guides/conversations.md). `tool_arguments` labels `valid`/`invalid`: the ground truth
is read as `valid` for `match` and `invalid` for `mismatch`.
"""

from __future__ import annotations

import json
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[2]))
from convert import convert  # noqa: E402

from judge.cli import main  # noqa: E402

MATCHES = ("strict", "unordered", "subset", "superset")
ARGUMENTS = ("exact", "subset", "ignore")


def quiet(args: list[str]) -> None:
    with redirect_stdout(StringIO()), redirect_stderr(StringIO()):
        code = main(args, env={})
    if code != 0:
        raise SystemExit(f"judge {' '.join(args)} exited {code}")


def user_rubrics(folder: Path) -> list[str]:
    ids = []
    for match in MATCHES:
        for arguments in ARGUMENTS:
            rubric_id = f"bfcl-{match}-{arguments}"
            (folder / rubric_id).mkdir(parents=True, exist_ok=True)
            (folder / rubric_id / "v1.yaml").write_text(
                f"id: {rubric_id}\nversion: 1\nkind: trajectory\ntitle: {rubric_id}\n"
                f"inputs: [messages, expected_tool_calls]\nmatch: {match}\n"
                f"arguments: {arguments}\nsystem: |\n  Computed.\n",
                "utf-8",
            )
            ids.append(rubric_id)
    return ids


def agreement(work: Path) -> list[dict[str, object]]:
    cases, labels = work / "cases.jsonl", work / "labels.jsonl"
    convert(work)
    valid = work / "labels-valid.jsonl"
    with valid.open("w", encoding="utf-8") as out:
        for line in labels.read_text("utf-8").splitlines():
            row = json.loads(line)
            row["label"] = "valid" if row["label"] == "match" else "invalid"
            out.write(json.dumps(row) + "\n")
    mine = work / "rubrics"
    rows = []
    for rubric in ["trajectory", "tool_arguments", *user_rubrics(mine)]:
        records = work / f"{rubric}.jsonl"
        quiet(
            [
                "grade",
                str(cases),
                "--rubric",
                rubric,
                "--rubrics-dir",
                str(mine),
                "--offline",
                "--overwrite",
                "-o",
                str(records),
            ]
        )
        report = work / f"report-{rubric}"
        truth = valid if rubric == "tool_arguments" else labels
        quiet(["calibrate", str(records), str(truth), "-o", str(report)])
        result = json.loads((report / "calibration.json").read_text("utf-8"))
        rows.append(
            {
                "rubric": rubric,
                **{k: result[k] for k in ("n", "kappa", "kappa_ci95", "ac1", "observed_agreement")},
            }
        )
    return rows


def table(rows: list[dict[str, object]]) -> str:
    lines = ["| rubric | n | kappa (95% CI) | AC1 | agreement |", "|---|---|---|---|---|"]
    for row in rows:
        low, high = row["kappa_ci95"] or (None, None)  # type: ignore[misc]
        lines.append(
            f"| `{row['rubric']}` | {row['n']} | {row['kappa']:.3f} ({low:.3f} to {high:.3f}) "
            f"| {row['ac1']:.3f} | {row['observed_agreement']:.3f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        print(table(agreement(Path(sys.argv[1]))))
    else:
        with tempfile.TemporaryDirectory() as folder:
            print(table(agreement(Path(folder))))
