"""What each job asks for: one typed, frozen request (the application layer's input).

The CLI builds one from its parsed arguments on a command's first line
(`judge.cli._requests.request_from`) and passes it to the job in `judge.app`; nothing past
that line reads the namespace. Field names are the options'
own (`--max-error-rate` is `max_error_rate`), so a request reads like the command line.
Repeatable options become tuples, so a request cannot change once built. Checks that no
argparse type can express (ranges across options, files that must differ) stay where they
were, run on the request before anything is read or sent, and are usage errors (exit 2)
as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from calibration.decisions.gates import Condition
    from judge.config import OutputMode


@dataclass(frozen=True)
class JudgeOptions:
    """The options that pick and tune the judge (`judge.cli._common.add_judge_options`)."""

    model: str | None
    base_url: str | None
    offline: bool
    concurrency: int | Literal["auto"]  # a number in flight, or learnt from the endpoint
    rpm: int | None
    tpm: int | None
    temperature: float
    top_p: float | None
    seed: int
    max_tokens: int
    timeout: float
    max_retries: int
    output_mode: OutputMode
    cache_dir: Path | None
    no_cache: bool
    samples: int = 1  # `--samples K` (judge.engine.votes)
    # Not options: the project file's model and endpoint (`[tool.judge]`, set as parser
    # defaults by judge.cli._project), which rank below $JUDGE_MODEL and $OPENAI_BASE_URL.
    project_model: str | None = None
    project_base_url: str | None = None


FROM_PROJECT_FILE = frozenset({"project_model", "project_base_url"})
"""Request fields no option fills: the project file's defaults that rank below the
environment (see `JudgeOptions`)."""


@dataclass(frozen=True)
class GradeRequest:
    """`judge grade` (one rubric, several, or a batch form)."""

    input: str
    rubric: str
    output: Path | None
    summary: Path | None
    parquet: Path | None
    input_format: str | None
    limit: int | None
    sample: int | None
    sample_seed: int
    overwrite: bool
    price_input: float | None
    price_output: float | None
    batch_api: bool
    export_batch: str | None
    import_batch: tuple[str, ...] | None
    human_labels: Path | None
    html: Path | None
    fail_if: tuple[str, ...]
    max_error_rate: float
    retrieval_threshold: float | None
    generation_threshold: float | None
    rubrics_dir: tuple[Path, ...]
    judge: JudgeOptions
    jury: Path | None = None  # --jury JURY.yaml: a panel of judges (judge.app.jury_run)
    retry_failed: bool = False  # --retry-failed: a jury asks its jurors' parse errors again
    engine: Literal["local", "ray"] = "local"  # --engine ray: judge.app.engines
    ray_address: str | None = None
    ray_actors: int | None = None
    otel_endpoint: str | None = None  # --otel-endpoint URL: judge.app.otel
    certificate: Path | None = None  # --certificate CERT.json: judge.app.cascade
    references: Path | None = None  # --references REFS --join-on FIELD: judge.app.references
    join_on: str | None = None
    positive_label: str | None = None  # --positive-label: the pass class of --human-labels


@dataclass(frozen=True)
class CalibrateRequest:
    """`judge calibrate` (and `--plan`)."""

    judge_labels: Path | None
    human_labels: Path | None
    judge_field: str
    human_field: str
    weights: Literal["linear", "quadratic"] | None
    group_field: str | None
    slice_field: str | None
    threshold: float | None
    fit_threshold: bool
    labels: str | None
    positive_label: str | None
    split: float | None
    seed: int
    bootstrap: int
    output: Path
    cases: Path | None
    explain: bool
    plan: bool
    kappa: float | None
    width: float
    judge_rate: float | None
    human_rate: float | None
    prevalence: float | None
    require_ready: bool
    fail_if: tuple[Condition, ...]
    from_tool: str | None = None
    foreign_metric: str | None = None
    pass_labels: str | None = None
    html: Path | None = None


@dataclass(frozen=True)
class GateRequest:
    """`judge gate`: a candidate judge against the baseline on an anchor set."""

    baseline: Path
    candidate: Path
    labels: Path
    min_kappa: float | None
    max_drop: float | None
    alpha: float
    fail_if: tuple[Condition, ...]
    json: Path | None
    markdown: Path | None
    seed: int
    bootstrap: int


@dataclass(frozen=True)
class CompareRequest:
    """`judge compare RUN_A RUN_B`."""

    runs: tuple[Path, ...]
    json: Path | None
    alpha: float
    resamples: int
    seed: int
    metric: tuple[str, ...]
    fail_if: tuple[str, ...]
    from_tool: str | None
    rubrics_dir: tuple[Path, ...]
    html: Path | None = None  # --html REPORT.html: judge.report.compare_report
    positive_label: str | None = None  # the pass class of two (default: the rubric's)


@dataclass(frozen=True)
class AlignRequest:
    """`judge align`: the next rubric version, with examples from labelled disagreements."""

    rubric: str
    labels: Path
    records: Path
    cases: Path
    split: float | None
    dev_ids: Path | None
    seed: int
    examples: int
    test_labels: Path | None
    overwrite: bool
    rubrics_dir: tuple[Path, ...]


@dataclass(frozen=True)
class BatchRequest:
    """`judge batch status | fetch`."""

    action: str
    batch_id: str
    output: Path | None
    base_url: str | None
    no_wait: bool
    poll_interval: float | None
    summary: Path | None
    cache_dir: Path | None
    no_cache: bool
    rubrics_dir: tuple[Path, ...]
    parquet: Path | None = None  # fetch: the records also as a Parquet table
    max_retries: int | None = None  # None: the run's, else the default


# The request types of the jobs that live in their own modules (probe, rubrics, label,
# config, serve, traces, watch, drift): one definition each, there; named here on first use.
_ELSEWHERE = {
    "ProbeRequest": "probe",
    "RubricsRequest": "rubrics",
    "LabelRequest": "label",
    "ConfigRequest": "config",
    "ServeRequest": "serve",
    "TracesRequest": "traces",
    "WatchRequest": "watch",
    "DriftRequest": "drift",
    "CertifyRequest": "certify",
}


def __getattr__(name: str) -> Any:
    if name in _ELSEWHERE:
        from importlib import import_module

        return getattr(import_module(f"judge.app.{_ELSEWHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
