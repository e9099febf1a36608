"""Rubrics are data: `<folder>/<id>/v<N>.yaml`, validated, hashed, rendered into messages.

A released rubric never changes; a change is a new version file. Each folder's
`rubrics.lock` holds the sha256 of every released file: `verify_lock` says which drifted,
and loading a locked file whose bytes changed is refused. What a rubric *means* (its
verdict, score, label, summary) belongs to its kind (`judge.kinds`); the keys a kind reads
beyond the common ones are validated by the kind and kept in `Rubric.spec`.

The top-level `rubrics/` folder is the single source of the built-in rubrics. A wheel
carries a copy as the data package `judge._rubrics` (pyproject.toml maps it onto that
folder), found here through `importlib.resources`; a source checkout or an editable install
reads the folder itself. Users' own folders come after it (`RubricLibrary`).
"""

from __future__ import annotations

import hashlib
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judge.errors import RubricError
from judge.kinds import Kind, get_kind
from judge.schemas import RUBRIC_ID, Case

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
CASE_FIELDS = (
    *("question", "contexts", "answer", "answer_a", "answer_b", "reference"),
    *("retrieved_ids", "relevant_ids", "relevance"),
    *("messages", "messages_a", "messages_b", "expected_tool_calls", "tools", "goal"),
)
COMMON_KEYS = ("id", "version", "kind", "title", "output_schema", "inputs", "system", "examples")
_VERSION_FILE = re.compile(r"^v(\d+)\.yaml$")
_RUBRIC_ID = re.compile(RUBRIC_ID)


class RubricExample(BaseModel):
    """A labelled example the judge is shown after its instructions (`examples:` in a
    rubric file; `judge align` picks them from labelled disagreements): the case id, the
    case's inputs as the judge would see them, the label people gave it and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    inputs: dict[str, Any] = Field(min_length=1)
    label: str = Field(min_length=1)
    note: str = ""


class Rubric(BaseModel):
    """One version of one rubric, with the hash of the exact file it was read from."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    id: str = Field(pattern=RUBRIC_ID)
    version: int = Field(ge=1)
    kind: str
    title: str
    output_schema: str = ""
    inputs: list[str]
    system: str = Field(min_length=1)
    examples: tuple[RubricExample, ...] = ()
    spec: Any = None
    sha256: str = ""
    path: str = ""

    @property
    def ref(self) -> str:
        return f"{self.id}@{self.version}"

    @property
    def short_hash(self) -> str:
        return self.sha256[:12]

    @property
    def behaviour(self) -> Kind:
        """The kind that gives this rubric its meaning."""
        return get_kind(self.kind)

    @property
    def schema_name(self) -> str:
        return self.behaviour.schema_name(self)

    def verdict_model(self) -> type[BaseModel]:
        return self.behaviour.verdict_model(self)

    def json_schema(self) -> dict[str, Any]:
        """The verdict's JSON schema without titles (providers bill the schema's tokens)."""
        schema = self.verdict_model().model_json_schema()
        _strip_titles(schema)
        return schema

    def missing_inputs(self, case: Case) -> list[str]:
        """Names of the inputs this rubric needs that the case lacks (its kind decides)."""
        return self.behaviour.missing_inputs(self, case)

    def render(self, case: Case, *, output_mode: str = "json_schema") -> list[dict[str, str]]:
        """Chat messages for one case. Case text travels as a JSON payload, never formatted
        into the instructions, so quotes and braces inside it cannot end the data early."""
        return [
            {"role": "system", "content": self.system_text(output_mode)},
            {"role": "user", "content": self.user_text(case)},
        ]

    def system_text(self, output_mode: str = "json_schema") -> str:
        """The system message: the same for every case (in `prompt` mode, with the schema)."""
        system = self.behaviour.system_prompt(self)
        if output_mode == "prompt":
            schema = json.dumps(self.json_schema(), separators=(",", ":"))
            system += f"\nThe JSON must match this schema: {schema}"
        return system

    def user_text(self, case: Case) -> str:
        """The user message: the case's payload as JSON."""
        return json.dumps(self.payload(case), ensure_ascii=False)

    def payload(self, case: Case) -> dict[str, Any]:
        return self.behaviour.payload(self, case)


def _strip_titles(node: Any) -> None:
    if isinstance(node, dict):
        node.pop("title", None)
        for value in node.values():
            _strip_titles(value)
    elif isinstance(node, list):
        for value in node:
            _strip_titles(value)


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes, read in blocks (rubric files, job inputs, label sets)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


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


class DuplicateKeyError(yaml.YAMLError):
    """A mapping of a rubric file that names one key twice."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key given twice in one mapping: YAML says keys are
    unique, and PyYAML would silently keep the last, so an edit that adds a key beside a
    forgotten one (a `sed` uncommenting two lines) would change the rubric unseen."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            line = key_node.start_mark.line + 1
            if isinstance(key, str | int | float | bool) and key in seen:
                raise DuplicateKeyError(
                    f"line {line}: duplicate key {key!r} (first on line {seen[key]}): "
                    "a key may appear once in a mapping"
                )
            if isinstance(key, str | int | float | bool):
                seen[key] = line
        return super().construct_mapping(node, deep=deep)


def read_rubric_file(path: Path, *, locked: str | None = None) -> Rubric:
    """Parse and validate one rubric file; its id and version must match its path, and
    when `locked` (the lock's sha256) is given the bytes must still have that hash."""
    try:
        raw = path.read_bytes()
        data = yaml.load(raw.decode("utf-8"), Loader=_UniqueKeyLoader)  # noqa: S506 (safe)
    except DuplicateKeyError as exc:
        raise RubricError(str(exc), path=str(path)) from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise RubricError(f"cannot read rubric: {exc}", path=str(path)) from exc
    if not isinstance(data, dict):
        raise RubricError("a rubric file must be a YAML mapping", path=str(path))
    digest = hashlib.sha256(raw).hexdigest()
    if locked is not None and digest != locked:
        raise RubricError(
            "changed since it was locked; released rubrics are immutable: restore it and "
            "write the change as the next version file (then `judge rubrics lock`)",
            path=str(path),
        )
    rubric = _validate(data, digest, path)
    problems = _consistency(rubric, path)
    if problems:
        raise RubricError("; ".join(problems), path=str(path))
    return rubric


def _validate(data: dict[str, Any], digest: str, path: Path) -> Rubric:
    common = {k: v for k, v in data.items() if k in COMMON_KEYS}
    extra = {k: v for k, v in data.items() if k not in COMMON_KEYS}
    try:
        kind = get_kind(str(data.get("kind")))
        spec = kind.spec_model.model_validate(extra)
        return Rubric.model_validate({**common, "spec": spec, "sha256": digest, "path": str(path)})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'file'}: {e['msg'].lower()}" for e in exc.errors()
        )
        raise RubricError(f"invalid rubric: {problems}", path=str(path)) from None
    except RubricError as exc:
        raise RubricError(f"invalid rubric: {exc}", path=str(path)) from None


def _consistency(rubric: Rubric, path: Path) -> list[str]:
    kind = rubric.behaviour
    problems = list(kind.check(rubric))
    if rubric.output_schema and rubric.output_schema != kind.verdict_name:
        problems.append(
            f"output_schema {rubric.output_schema!r} does not fit kind {kind.name!r} "
            f"(use {kind.verdict_name!r} or leave it out)"
        )
    for example in rubric.examples:
        extra = sorted(set(example.inputs) - set(rubric.inputs))
        if extra:
            problems.append(
                f"example {example.id!r} has inputs {extra} the rubric does not read "
                f"(inputs: {', '.join(rubric.inputs)})"
            )
    unknown = set(rubric.inputs) - set(CASE_FIELDS)
    if unknown:
        problems.append(f"unknown inputs {sorted(unknown)} (known: {', '.join(CASE_FIELDS)})")
    if path.parent.name != rubric.id or path.name != f"v{rubric.version}.yaml":
        problems.append(
            f"id/version ({rubric.ref}) do not match the file's place "
            f"(expected {rubric.id}/v{rubric.version}.yaml)"
        )
    return problems


# ---- folders and their locks -----------------------------------------------------------


def available_versions(rubric_id: str, rubrics_dir: Path = DEFAULT_RUBRICS_DIR) -> list[int]:
    folder = rubrics_dir / rubric_id
    if not folder.is_dir():
        return []
    found = (_VERSION_FILE.match(p.name) for p in folder.iterdir())
    return sorted(int(m.group(1)) for m in found if m)


def rubric_ids(rubrics_dir: Path) -> list[str]:
    if not rubrics_dir.is_dir():
        return []
    return sorted(
        p.name
        for p in rubrics_dir.iterdir()
        if p.is_dir() and available_versions(p.name, rubrics_dir)
    )


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


def lock_sha256(rubrics_dir: Path = DEFAULT_RUBRICS_DIR) -> str | None:
    """sha256 of `rubrics.lock`: one hash that names the whole released rubric set."""
    path = rubrics_dir / LOCK_NAME
    return file_sha256(path) if path.is_file() else None


#: how every rubrics.lock this tool writes begins (the output check recognises it by this)
LOCK_HEADER = "# Released rubric files and their sha256."


def write_lock(rubrics_dir: Path) -> list[str]:
    """Lock every rubric file of a folder: entries already locked are kept as they are
    (a changed locked file is refused, not re-locked); new files are added. Returns the
    refs newly locked."""
    problems = verify_lock(rubrics_dir)
    if problems:
        raise RubricError("; ".join(problems), path=str(rubrics_dir / LOCK_NAME))
    lock = read_lock(rubrics_dir)
    added = []
    for rubric_id in rubric_ids(rubrics_dir):
        for version in available_versions(rubric_id, rubrics_dir):
            path = rubrics_dir / rubric_id / f"v{version}.yaml"
            read_rubric_file(path)  # only valid rubrics are released
            ref = f"{rubric_id}@{version}"
            if ref not in lock:
                lock[ref] = file_sha256(path)
                added.append(ref)
    header = f"{LOCK_HEADER} A released file never changes: add v<N+1>.yaml.\n"
    body = "".join(f"{ref} {digest}\n" for ref, digest in sorted(lock.items()))
    (rubrics_dir / LOCK_NAME).write_text(header + body, "utf-8")
    return added


class RubricLibrary:
    """Where rubrics come from: the built-in folder, then the user's folders (in order).

    A user folder may not define an id the built-in folder has (no shadowing), nor one
    an earlier user folder has. Each folder's own `rubrics.lock` is enforced on load."""

    def __init__(
        self,
        user_dirs: tuple[Path, ...] | list[Path] = (),
        *,
        builtin: Path | None = DEFAULT_RUBRICS_DIR,
    ):
        self.builtin = builtin  # the released rubrics' folder (None: none)
        self.folders: list[Path] = ([builtin] if builtin is not None else []) + [
            Path(d) for d in user_dirs
        ]
        self._owner: dict[str, Path] = {}
        for folder in self.folders:
            if folder is not builtin and not folder.is_dir():
                raise RubricError("rubrics folder does not exist", path=str(folder))
            for rubric_id in rubric_ids(folder):
                if rubric_id in self._owner:
                    first = self._owner[rubric_id]
                    raise RubricError(
                        f"rubric id {rubric_id!r} is defined in {first} already; "
                        "pick another id (ids are unique across folders)",
                        path=str(folder / rubric_id),
                    )
                self._owner[rubric_id] = folder

    def folder_of(self, rubric_id: str) -> Path | None:
        return self._owner.get(rubric_id)

    def load(self, ref: str) -> Rubric:
        """`ID` (latest version) or `ID@VERSION`, validated, hashed and checked against
        its folder's lock."""
        rubric_id, version = parse_ref(ref)
        folder = self._owner.get(rubric_id)
        if folder is None:
            known = ", ".join(sorted(self._owner))
            raise RubricError(f"no rubric named {rubric_id!r} (known: {known or 'none'})")
        versions = available_versions(rubric_id, folder)
        if version is None:
            version = versions[-1]
        elif version not in versions:
            raise RubricError(
                f"rubric {rubric_id!r} has no version {version} (versions: {versions})"
            )
        path = folder / rubric_id / f"v{version}.yaml"
        return read_rubric_file(path, locked=read_lock(folder).get(f"{rubric_id}@{version}"))

    def rubrics(self, *, latest_only: bool = False) -> list[Rubric]:
        """Every rubric version, sorted by id then version."""
        out: list[Rubric] = []
        for rubric_id in sorted(self._owner):
            versions = available_versions(rubric_id, self._owner[rubric_id])
            if latest_only:
                versions = versions[-1:]
            out.extend(self.load(f"{rubric_id}@{v}") for v in versions)
        return out

    def verify(self) -> list[str]:
        return [p for folder in self.folders for p in verify_lock(folder)]


def library_for(rubrics_dir: Path | RubricLibrary | None) -> RubricLibrary:
    """A library from what callers pass: None = the built-in rubrics; a folder = that
    folder alone (as older callers and tests use it)."""
    if isinstance(rubrics_dir, RubricLibrary):
        return rubrics_dir
    if rubrics_dir is None or Path(rubrics_dir) == DEFAULT_RUBRICS_DIR:
        return RubricLibrary()
    return RubricLibrary(builtin=Path(rubrics_dir))


def load_rubric(ref: str, rubrics_dir: Path | RubricLibrary | None = None) -> Rubric:
    """Load `ID` (latest version) or `ID@VERSION`, validated and hashed."""
    return library_for(rubrics_dir).load(ref)


def list_rubrics(
    rubrics_dir: Path | RubricLibrary | None = None, *, latest_only: bool = False
) -> list[Rubric]:
    """Every rubric version the library holds, sorted by id then version."""
    return library_for(rubrics_dir).rubrics(latest_only=latest_only)
