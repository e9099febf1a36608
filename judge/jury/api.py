"""The Python API of juries: grade a file with a panel, as `judge grade --jury` does, and
probe a panel, as `judge probe --jury` does.

>>> from judge.jury import load_jury, grade_file_with_jury     # doctest: +SKIP
>>> summary = grade_file_with_jury(load_jury(Path("jury.yaml")), "cases.jsonl", "out/",
...                                "policy", rubrics_dir=Path("examples/rubrics"))
>>> result = probe_with_jury(load_jury(Path("jury.yaml")), "position", "pairs.jsonl",
...                          "pairwise")                       # doctest: +SKIP
>>> result.report["jurors"]["c"]["consistency_rate"]             # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.config import JudgeConfig
from judge.engine.measure.human_labels import HumanLabels, to_human_labels
from judge.jury.config import Jury
from judge.jury.probe import check_probe_jury, probe_panel
from judge.jury.run import grade_panel, juror_configs, open_panel
from judge.probes import ProbeOptions, ProbeResult, load_cases
from judge.rubric import Rubric, RubricLibrary, load_rubric

if TYPE_CHECKING:
    from judge.client import AsyncHttpClient


async def agrade_file_with_jury(
    jury: Jury,
    input_path: str | Path,
    out_dir: str | Path,
    rubric: str | Rubric,
    *,
    config: JudgeConfig | None = None,
    env: Mapping[str, str] | None = None,
    rubrics_dir: Path | RubricLibrary | None = None,
    http_client: AsyncHttpClient | None = None,
    human_labels: HumanLabels | str | Path | Iterable[Mapping[str, Any]] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Grade a file with every juror into `out_dir/jurors/<name>.jsonl` and the panel into
        `out_dir/<rubric>.jsonl`; the panel's summary. `config` gives the settings every juror
        shares (timeouts, retries, cache); `env` the jurors' `api_key_env` (default
        `os.environ`). `human_labels` (a CSV/JSONL path, or rows with `id` and `label`) add
    `jury.vs_humans` (judge.jury.humans). Options: see `judge.jury.run.grade_panel`."""
    if human_labels is not None:
        options["human_labels"] = to_human_labels(human_labels)
    base = config or JudgeConfig()
    loaded = rubric if isinstance(rubric, Rubric) else load_rubric(rubric, rubrics_dir)
    configs = juror_configs(jury, base, os.environ if env is None else env)
    options.setdefault("use_cache", base.use_cache)
    async with open_panel(jury, loaded, configs, http_client=http_client) as panel:
        return await grade_panel(panel, Path(input_path), Path(out_dir), **options)


def grade_file_with_jury(
    jury: Jury,
    input_path: str | Path,
    out_dir: str | Path,
    rubric: str | Rubric,
    **options: Any,
) -> dict[str, Any]:
    """`agrade_file_with_jury`, synchronously."""
    return asyncio.run(agrade_file_with_jury(jury, input_path, out_dir, rubric, **options))


async def aprobe_with_jury(
    jury: Jury,
    probe: str,
    input_path: str | Path,
    rubric: str | Rubric,
    *,
    options: ProbeOptions | None = None,
    config: JudgeConfig | None = None,
    env: Mapping[str, str] | None = None,
    rubrics_dir: Path | RubricLibrary | None = None,
    http_client: AsyncHttpClient | None = None,
) -> ProbeResult:
    """Run the bias probe `probe` on the panel over the cases of `input_path`: its figures
    on the panel's verdicts, each juror's in `report["jurors"]` (judge.jury.probe)."""
    chosen = options or ProbeOptions()
    check_probe_jury(jury, probe, chosen.judge_family)
    base = config or JudgeConfig()
    loaded = rubric if isinstance(rubric, Rubric) else load_rubric(rubric, rubrics_dir)
    cases = load_cases(Path(input_path), loaded)
    configs = juror_configs(jury, base, os.environ if env is None else env)
    async with open_panel(jury, loaded, configs, http_client=http_client) as panel:
        return await probe_panel(probe, panel, cases, chosen)


def probe_with_jury(
    jury: Jury, probe: str, input_path: str | Path, rubric: str | Rubric, **options: Any
) -> ProbeResult:
    """`aprobe_with_jury`, synchronously."""
    return asyncio.run(aprobe_with_jury(jury, probe, input_path, rubric, **options))
