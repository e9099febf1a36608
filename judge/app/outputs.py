"""Output paths that can never clobber an input, each other, or a file that is not ours.

Checked before anything is read from an endpoint or written: files are compared by
identity (device and inode, `os.path.samefile`), so a hard link or another spelling of the
input is caught; an output that is a symbolic link is refused, never written through; and
an existing file is replaced only when it is one this tool writes (a records file, a
summary, a probe report, a batch request file, a labels CSV) or `--overwrite` says so.
Every output is locked for the rest of the command (judge.engine.outlock): a second run on
the same file is refused, one line, while the first is writing it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from judge.engine.frames import is_records_parquet
from judge.engine.outlock import hold
from judge.engine.records import is_records_file
from judge.errors import InputError, UsageError
from judge.rubric import LOCK_HEADER

MAX_JSON_BYTES = 64 * 1024 * 1024  # a summary or probe report is far smaller


@dataclass(frozen=True)
class Output:
    """One file a command writes: the flag that named it, the path, what it holds."""

    flag: str
    path: Path
    kind: str  # a key of RECOGNISERS


def _json_object(path: Path) -> dict[str, object] | None:
    if not 0 < path.stat().st_size <= MAX_JSON_BYTES:
        return None
    try:
        from calibration.io.jsontext import loads_bounded  # not for --help or rubrics

        data = loads_bounded(path.read_bytes())
    except ValueError:  # not JSON, not UTF-8, or nested too deeply
        return None
    return data if isinstance(data, dict) else None


def _is_summary(path: Path) -> bool:
    data = _json_object(path)
    one = {"rubric", "kind", "cases"}  # one rubric's; a pass of several has its own keys
    return data is not None and (one <= data.keys() or {"rubrics", "diagnosis"} <= data.keys())


def _is_probe_report(path: Path) -> bool:
    data = _json_object(path)
    return data is not None and "probe" in data


def _is_comparison(path: Path) -> bool:
    data = _json_object(path)
    return data is not None and {"runs", "comparisons"} <= data.keys()


def _is_gate(path: Path) -> bool:
    data = _json_object(path)
    return data is not None and {"gate", "files"} <= data.keys()


def _is_gate_markdown(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.readline(200).startswith(b"# Judge gate: ")


def _is_certificate(path: Path) -> bool:
    """`judge certify -o`: a certificate (JSON, its format named)."""
    data = _json_object(path)
    return data is not None and str(data.get("format", "")).startswith("llm-judge-certificate/")


def _is_drift(path: Path) -> bool:
    """`judge drift -o`: its JSON (`--json`) or its Markdown table."""
    data = _json_object(path)
    if data is not None:
        return {"windows", "alarm", "reference"} <= data.keys()
    with path.open("rb") as handle:
        return handle.readline(200).startswith(b"# Judge drift: ")


def _is_probe_markdown(path: Path) -> bool:
    with path.open("rb") as handle:
        first = handle.readline(200)
    return re.match(rb"# [\w -]*probe\b", first) is not None


def _is_request_file(path: Path) -> bool:
    with path.open("rb") as handle:
        first = handle.readline(1 << 20)
    try:
        from calibration.io.jsontext import loads_bounded  # not for --help or rubrics

        data = loads_bounded(first)
    except ValueError:  # not JSON, not UTF-8, or nested too deeply
        return False
    return isinstance(data, dict) and {"custom_id", "method", "url", "body"} <= data.keys()


def _is_html_report(path: Path) -> bool:
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - 512))
        return b"Written by llm-judge." in handle.read()


def _is_labels_csv(path: Path) -> bool:
    from judge.label.export import COLUMNS  # the label app's modules load only when asked

    with path.open("rb") as handle:
        first = handle.readline(1 << 10)
    return first.rstrip(b"\r\n").decode("utf-8", "replace").split(",")[: len(COLUMNS)] == COLUMNS


def _is_label_store(path: Path) -> bool:
    """An SQLite database (what `judge label` keeps its labels in), or an empty file."""
    with path.open("rb") as handle:
        head = handle.read(16)
    return head in (b"", b"SQLite format 3\x00")


# "records" (a grade's -o) has no entry: grade_file checks it after the input validates,
# against the rubric and the judge too (judge.engine.records.check_resumable).
def _never(path: Path) -> bool:
    """For outputs no run replaces unasked: an existing one is always refused."""
    return False


def _is_rubric_lock(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            head = LOCK_HEADER.encode()
            return handle.read(len(head)) == head
    except OSError:
        return False


RECOGNISERS: dict[str, tuple[str, Callable[[Path], bool]]] = {
    "probe-records": ("records file", is_records_file),
    "summary": ("summary file", _is_summary),
    "probe": ("probe report", _is_probe_report),
    "markdown": ("probe report", _is_probe_markdown),
    "requests": ("batch request file", _is_request_file),
    "html": ("HTML report of this tool", _is_html_report),
    "compare": ("comparison (judge compare --json)", _is_comparison),
    "parquet": ("Parquet table of records of this tool", is_records_parquet),
    "labels": ("labels CSV (judge label export)", _is_labels_csv),
    "label-store": ("label store (an SQLite database)", _is_label_store),
    "gate": ("gate result (judge gate --json)", _is_gate),
    "test-labels": ("test split's labels (judge align)", _never),
    "rubric-version": ("new rubric version", _never),
    "rubric-lock": ("rubric lock (judge rubrics lock)", _is_rubric_lock),
    "gate-markdown": ("gate report (judge gate --markdown)", _is_gate_markdown),
    "drift": ("drift report (judge drift)", _is_drift),
    "certificate": ("certificate (judge certify -o)", _is_certificate),
}


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file: by device and inode when both exist."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def require_inputs(inputs: Sequence[Path]) -> None:
    """InputError (exit 2) naming the first input that does not exist."""
    for source in inputs:
        if str(source) != "-" and not source.exists():
            raise InputError(str(source), [(None, None, "no such file")])


def check_outputs(
    outputs: Sequence[Output],
    inputs: Sequence[Path],
    *,
    overwrite: bool | None,
    side_files: Sequence[Path] = (),
) -> None:
    """Refuse (UsageError, exit 2) before anything is written: an output that is a link,
    a folder, an input, another output, one another run is writing (its lock is held), or
    an existing file that is not ours without `overwrite`. Each output stays locked until
    the command ends (`judge.engine.outlock.holding_locks`, entered by `main`).
    `overwrite` None: the command has no `--overwrite` (the refusal does not offer it).
    A missing input is said first: it is the mistake to fix, not the outputs. `side_files`
    (an input's companions, such as SQLite's -wal) are never overwritten either, but may
    not exist."""
    require_inputs(inputs)
    inputs = [*inputs, *side_files]
    for number, out in enumerate(outputs):
        where = f"{out.flag} {out.path}"
        if out.path.is_symlink():
            raise UsageError(f"{where} is a symbolic link; outputs are never written through links")
        if out.path.is_dir():
            raise UsageError(f"{where} is a folder; give a file name")
        for source in inputs:
            if same_file(out.path, source):
                raise UsageError(f"{where} would overwrite the input {source} (the same file)")
        for other in outputs[:number]:
            if same_file(out.path, other.path):
                raise UsageError(f"{where} and {other.flag} {other.path} are the same file")
        hold(out.path, out.flag)
        if overwrite or out.kind not in RECOGNISERS or not out.path.exists():
            continue
        what, recognise = RECOGNISERS[out.kind]
        if not recognise(out.path):
            ways = (
                "choose another path"
                if overwrite is None
                else ("pass --overwrite to replace it, or choose another path")
            )
            raise UsageError(f"{where} exists and is not a {what}; {ways}")
