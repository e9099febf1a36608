"""Rubrics are data: `rubrics/<id>/v<N>.yaml`, validated, hashed, rendered into messages.

A released rubric never changes; a change is a new version file. `rubrics/rubrics.lock`
holds the sha256 of every released file and `verify_lock` says which ones drifted.

The top-level `rubrics/` folder is the single source. A wheel carries a copy as the data
package `judge._rubrics` (pyproject.toml maps it onto that folder), found here through
`importlib.resources`; a source checkout or an editable install reads the folder itself.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judge.errors import RubricError
from judge.schemas import VERDICT_MODELS, Case

RubricKind = Literal["faithfulness", "relevance", "pairwise"]
LOCK_NAME = "rubrics.lock"
_SOURCE_RUBRICS = Path(__file__).resolve().parent.parent / "rubrics"


def packaged_rubrics_dir() -> Path:
    """The folder of the released rubrics and their lock: `judge/_rubrics/` inside an
    installed wheel, else the top-level `rubrics/` of the source tree this package runs from
    (a checkout or an editable install, where the build step has not copied anything)."""
    shipped = resources.files("judge").joinpath("_rubrics")
    if isinstance(shipped, Path) and shipped.is_dir():  # on disk, as pip installs it
        return shipped
    return _SOURCE_RUBRICS


DEFAULT_RUBRICS_DIR = packaged_rubrics_dir()
_CASE_FIELDS = {"question", "contexts", "answer", "answer_a", "answer_b", "reference"}
_VERSION_FILE = re.compile(r"^v(\d+)\.yaml$")
_RUBRIC_ID = re.compile(r"^[a-z][a-z0-9_-]*$")


class Rubric(BaseModel):
    """One version of one rubric, with the hash of the exact file it was read from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[a-z][a-z0-9_-]*$")
    version: int = Field(ge=1)
    kind: RubricKind
    title: str
    output_schema: str
    inputs: list[str]
    system: str = Field(min_length=1)
    sha256: str = ""
    path: str = ""

    @property
    def ref(self) -> str:
        return f"{self.id}@{self.version}"

    @property
    def short_hash(self) -> str:
        return self.sha256[:12]

    def verdict_model(self) -> type[BaseModel]:
        return VERDICT_MODELS[self.output_schema]

    def json_schema(self) -> dict[str, Any]:
        return _json_schema(self.output_schema)

    def missing_inputs(self, case: Case) -> list[str]:
        """Names of the inputs this rubric needs that the case lacks."""
        missing = []
        for name in self.inputs:
            value = getattr(case, name)
            if not value:  # None, "" or an empty list of contexts
                missing.append(name)
        return missing

    def render(self, case: Case, *, output_mode: str = "json_schema") -> list[dict[str, str]]:
        """Chat messages for one case. Case text travels as a JSON payload, never formatted
        into the instructions, so quotes and braces inside it cannot end the data early."""
        system = self.system.strip()
        if output_mode == "prompt":
            schema = json.dumps(self.json_schema(), separators=(",", ":"))
            system += f"\nThe JSON must match this schema: {schema}"
        return [
            {"role": "system", "content": system},
            {"role": "user", "content": json.dumps(self.payload(case), ensure_ascii=False)},
        ]

    def payload(self, case: Case) -> dict[str, Any]:
        if self.kind == "pairwise":
            data: dict[str, Any] = {"question": case.question}
            if case.contexts:
                data["contexts"] = case.contexts
            data["answer_A"] = case.answer_a
            data["answer_B"] = case.answer_b
            return data
        return {name: getattr(case, name) for name in self.inputs}


@lru_cache(maxsize=8)
def _json_schema(name: str) -> dict[str, Any]:
    schema = VERDICT_MODELS[name].model_json_schema()
    _strip_titles(schema)
    return schema


def _strip_titles(node: Any) -> None:
    # Titles add prompt tokens (providers bill the schema) and tell the model nothing.
    if isinstance(node, dict):
        node.pop("title", None)
        for value in node.values():
            _strip_titles(value)
    elif isinstance(node, list):
        for value in node:
            _strip_titles(value)


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def parse_ref(ref: str) -> tuple[str, int | None]:
    """'faithfulness@1' -> ('faithfulness', 1); 'faithfulness' -> ('faithfulness', None)."""
    name, _, version = ref.partition("@")
    if not name:
        raise RubricError(f"rubric reference {ref!r} has no id")
    if not _RUBRIC_ID.match(name):
        raise RubricError(f"rubric id {name!r} must be lower-case letters, digits, - or _")
    if not version:
        return name, None
    if not (version.lstrip("v").isascii() and version.lstrip("v").isdigit()):
        raise RubricError(f"rubric reference {ref!r}: version must be a number, like {name}@1")
    return name, int(version.lstrip("v"))


def available_versions(rubric_id: str, rubrics_dir: Path = DEFAULT_RUBRICS_DIR) -> list[int]:
    folder = rubrics_dir / rubric_id
    if not folder.is_dir():
        return []
    found = (_VERSION_FILE.match(p.name) for p in folder.iterdir())
    return sorted(int(m.group(1)) for m in found if m)


def load_rubric(ref: str, rubrics_dir: Path = DEFAULT_RUBRICS_DIR) -> Rubric:
    """Load `ID` (latest version) or `ID@VERSION` from `rubrics_dir`, validated and hashed."""
    rubric_id, version = parse_ref(ref)
    versions = available_versions(rubric_id, rubrics_dir)
    if not versions:
        known = ", ".join(sorted(r.id for r in list_rubrics(rubrics_dir, latest_only=True)))
        raise RubricError(f"no rubric named {rubric_id!r} (known: {known or 'none'})")
    if version is None:
        version = versions[-1]
    elif version not in versions:
        raise RubricError(f"rubric {rubric_id!r} has no version {version} (versions: {versions})")
    return read_rubric_file(rubrics_dir / rubric_id / f"v{version}.yaml")


def read_rubric_file(path: Path) -> Rubric:
    """Parse and validate one rubric file; its id and version must match its path."""
    try:
        raw = path.read_bytes()
        data = yaml.safe_load(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise RubricError(f"cannot read rubric: {exc}", path=str(path)) from exc
    if not isinstance(data, dict):
        raise RubricError("a rubric file must be a YAML mapping", path=str(path))
    try:
        digest = hashlib.sha256(raw).hexdigest()
        rubric = Rubric.model_validate({**data, "sha256": digest, "path": str(path)})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'file'}: {e['msg'].lower()}" for e in exc.errors()
        )
        raise RubricError(f"invalid rubric: {problems}", path=str(path)) from None
    _check_consistency(rubric, path)
    return rubric


def _check_consistency(rubric: Rubric, path: Path) -> None:
    if rubric.output_schema not in VERDICT_MODELS:
        known = ", ".join(VERDICT_MODELS)
        raise RubricError(
            f"unknown output_schema {rubric.output_schema!r} ({known})", path=str(path)
        )
    unknown = set(rubric.inputs) - _CASE_FIELDS
    if unknown:
        raise RubricError(f"unknown inputs {sorted(unknown)}", path=str(path))
    if path.parent.name != rubric.id or path.name != f"v{rubric.version}.yaml":
        raise RubricError(
            f"id/version ({rubric.ref}) do not match the file's place "
            f"(expected rubrics/{rubric.id}/v{rubric.version}.yaml)",
            path=str(path),
        )


def list_rubrics(
    rubrics_dir: Path = DEFAULT_RUBRICS_DIR, *, latest_only: bool = False
) -> list[Rubric]:
    """Every rubric version under `rubrics_dir`, sorted by id then version."""
    out: list[Rubric] = []
    if not rubrics_dir.is_dir():
        return out
    for folder in sorted(p for p in rubrics_dir.iterdir() if p.is_dir()):
        versions = available_versions(folder.name, rubrics_dir)
        if latest_only and versions:
            versions = versions[-1:]
        out.extend(read_rubric_file(folder / f"v{v}.yaml") for v in versions)
    return out


def read_lock(rubrics_dir: Path = DEFAULT_RUBRICS_DIR) -> dict[str, str]:
    """`rubrics.lock`: one `ID@VERSION SHA256` a line; `#` starts a comment."""
    lock: dict[str, str] = {}
    path = rubrics_dir / LOCK_NAME
    if not path.exists():
        return lock
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RubricError(f"cannot read the lock: {exc}", path=str(path)) from None
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2 or "@" not in parts[0]:
            raise RubricError(f"line {number}: expected 'ID@VERSION SHA256'", path=str(path))
        lock[parts[0]] = parts[1]
    return lock


def lock_sha256(rubrics_dir: Path = DEFAULT_RUBRICS_DIR) -> str | None:
    """sha256 of `rubrics.lock`: one hash that names the whole released rubric set."""
    path = rubrics_dir / LOCK_NAME
    return file_sha256(path) if path.is_file() else None


def verify_lock(rubrics_dir: Path = DEFAULT_RUBRICS_DIR) -> list[str]:
    """Problems with released rubrics: a locked file changed or vanished. Empty = all good."""
    problems = []
    for ref, expected in read_lock(rubrics_dir).items():
        rubric_id, version = parse_ref(ref)
        path = rubrics_dir / rubric_id / f"v{version}.yaml"
        if not path.exists():
            problems.append(f"{ref}: released file {path} is missing")
        elif file_sha256(path) != expected:
            problems.append(
                f"{ref}: {path} changed since release; released rubrics are immutable, "
                "add a new version file instead"
            )
    return problems
