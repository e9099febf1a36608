"""The manifest of a Batch API run, `OUT.batch.json` next to the records file: what
`judge batch fetch` needs to finish the run after the submitting process ended (batch ids,
input, rubric and its hash, the judge settings that shape the output). Never a key."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, SecretStr, ValidationError

from judge.config import JudgeConfig
from judge.engine.atomic import replace_text
from judge.engine.files import Selection
from judge.errors import UsageError

JUDGE_FIELDS = ("model", "base_url", "temperature", "top_p", "seed", "max_tokens", "output_mode")


class BatchManifest(BaseModel):
    """What `judge batch fetch` needs to finish a run: never a key or a header."""

    version: int = 1
    batch_ids: list[str] = Field(default_factory=list)
    requests: list[int] = Field(default_factory=list)
    input: str
    output: str
    rubric: str
    rubric_sha256: str
    judge: dict[str, Any]
    selection: dict[str, Any]
    use_cache: bool = True
    cached: int = 0
    created_at: float = Field(default_factory=time.time)
    fetched: bool = False

    def save(self) -> None:
        path = manifest_path(Path(self.output))
        replace_text(path, self.model_dump_json(indent=2) + "\n")

    def config(
        self, *, api_key: SecretStr | None, base_url: str | None = None, **edge: Any
    ) -> JudgeConfig:
        """The judge config of the submission; the key (and any edge option) from the caller."""
        settings = dict(self.judge)
        if base_url:
            settings["base_url"] = base_url
        return JudgeConfig(**settings, api_key=api_key, use_cache=self.use_cache, **edge)

    def as_selection(self) -> Selection:
        return Selection(**self.selection)


def manifest_path(output: Path) -> Path:
    return output.with_name(output.name + ".batch.json")


def results_dir(output: Path) -> Path:
    return output.with_name(output.name + ".batch")


def load_manifest(output: Path) -> BatchManifest:
    path = manifest_path(output)
    if not path.is_file():
        raise UsageError(f"no batch manifest {path}: was {output} graded with --batch-api?")
    try:
        return BatchManifest.model_validate_json(path.read_text("utf-8"))
    except ValidationError as exc:
        raise UsageError(f"{path} is not a batch manifest ({exc.error_count()} problems)") from None
