"""`judge grade --parquet OUT.parquet`: the records also as a Parquet table (one row per
record, `judge.engine.frame_out`'s columns). The records file (`-o`) stays JSONL: it is
what a rerun resumes. With several rubrics the table holds every rubric's records; with
`--batch-api` or `--import-batch`, the records imported; `--export-batch` refuses it (no
records). pyarrow is optional (`llm-judge[frames]`), imported when asked for."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from judge.app.edge import note
from judge.app.outputs import Output
from judge.engine.frames import is_parquet
from judge.errors import UsageError
from judge.rubric import RubricLibrary


def parquet_outputs(parquet: Path | None, records: Path) -> list[Output]:
    """The Parquet output (`--parquet`, a request's `parquet`) to check with the others; a
    records path in Parquet is refused (records are JSONL, resumable line by line)."""
    if is_parquet(records):
        raise UsageError(
            f"-o {records}: the records file is JSONL (a rerun resumes it); "
            f"write Parquet with --parquet {records}"
        )
    if parquet is None:
        return []
    from judge.engine.frames import _require

    _require("pyarrow", "write --parquet")  # before any request is sent
    return [Output("--parquet", parquet, "parquet")]


def refuse_parquet_with_export(parquet: Path | None) -> None:
    """`--export-batch` writes requests, no records: there is nothing to put in a table."""
    if parquet is not None:
        raise UsageError(
            f"--parquet {parquet}: --export-batch writes no records; give --parquet to the "
            "run that imports the results (--import-batch RESULTS.jsonl --parquet ...)"
        )


def write_parquet_option(
    parquet: Path | None,
    records: Path | Sequence[Path],
    rubrics: Path | RubricLibrary | None,
) -> None:
    """Write the records files' records to `parquet` (`--parquet`), when one is asked for:
    one table, in the order of `records` (several rubrics: the `rubric` column tells them
    apart)."""
    if parquet is None:
        return
    from judge.engine.frame_out import write_parquet
    from judge.engine.records import scan_records
    from judge.schemas import GradedRecord

    files = [records] if isinstance(records, Path) else list(records)
    rows = (GradedRecord.model_validate(data) for path in files for _, data in scan_records(path))
    count = write_parquet(rows, parquet, rubrics_dir=rubrics)
    note(f"parquet: {parquet} ({count} records)")
