"""The grading service's configuration: the judges it offers, its token, limits and folders.

Read once, at the edge (`judge serve`), from a YAML or TOML file and the environment:

    judges:
      gpt4o:
        model: gpt-4o-2024-08-06
        base_url: https://api.openai.com/v1
        api_key_env: OPENAI_API_KEY      # the key's *name*; its value never leaves the server
        temperature: 0
        concurrency: 16
      rules: {}                          # no model: the offline rules judge
      panel: {jury: jury.yaml}           # a jury (mode: full), its file relative to this one
      certified: {model: gpt-4o-mini, certificate: cert.json}   # verdicts under a certificate
    default_judge: gpt4o
    token_env: JUDGE_SERVICE_TOKEN       # or `token: ...`; the bearer token clients send
    data_dir: ./judge-service            # SQLite job store and each job's files
    database: postgresql://judge@db/judge  # or: jobs in PostgreSQL, shared by replicas
    cache_dir: ~/.cache/llm-judge        # the verdict cache, shared with the CLI
    limits: {grade_body_bytes: 1048576, job_body_bytes: 67108864, grade_cases: 100}
    allowed_hosts: [judge.internal]      # on loopback: Host names besides localhost, 127.0.0.1

With no judge configured the service offers the offline rules judge as `rules`. Clients pick
a judge by name; an endpoint URL or key never comes from a request.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from judge.config import JudgeConfig, JudgeSettings, default_cache_dir
from judge.engine.certificate import Certificate, load_certificate
from judge.errors import UsageError
from judge.schemas import NAME

if TYPE_CHECKING:
    from judge.jury.config import Jury
else:  # loaded only for a configured jury (`_load_juries`)
    Jury = Any

RULES_JUDGE = "rules"
TOKEN_ENV = "JUDGE_SERVICE_TOKEN"


class JudgeSpec(JudgeSettings):
    """One named judge: a model behind an endpoint, or (no model) the rules judge, or
    (`jury: JURY.yaml`, relative to this file) a panel of judges (judge.jury.serve). Its key
    is named by `api_key_env` and read from the server's environment, never from a request
    (a jury's jurors name theirs in the jury file)."""

    api_key_env: str | None = None
    jury: Path | None = None
    # `judge certify`'s file for this judge (relative to this file): each verdict below its
    # certified threshold is `escalated` (judge.engine.cascade.settle_one); the judge then
    # grades only the rubric the certificate was made for
    certificate: Path | None = None

    @model_validator(mode="after")
    def _a_jury_or_a_model(self) -> JudgeSpec:
        if self.jury is not None and (self.model or self.base_url or self.api_key_env):
            raise ValueError("a judge with jury: names no model, base_url or api_key_env")
        if self.jury is not None and self.certificate is not None:
            raise ValueError("a served jury takes no certificate (yet): name one judge")
        return self


class Limits(BaseModel):
    """What one request may ask for. Bodies over a limit and lists over a count get 413."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    grade_body_bytes: int = Field(default=1 << 20, ge=1024)
    job_body_bytes: int = Field(default=64 << 20, ge=1024)
    other_body_bytes: int = Field(default=1 << 20, ge=1024)
    grade_cases: int = Field(default=100, ge=1)
    job_cases: int = Field(default=200_000, ge=1)
    request_timeout_s: float = Field(default=120.0, gt=0)
    running_jobs: int = Field(default=2, ge=1, le=64)


class Replicas(BaseModel):
    """How replicas on one PostgreSQL database share a job: chunks of `chunk_cases` cases,
    each claimed with a lease of `lease_s` seconds that its replica renews while grading."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    chunk_cases: int = Field(default=100, ge=1, le=100_000)
    lease_s: float = Field(default=30.0, ge=0.5, le=3600)
    poll_s: float = Field(default=0.5, gt=0, le=60)
    # the verdict cache in the database, shared by the replicas (else each its cache_dir)
    shared_cache: bool = True


class ServiceConfig(BaseModel):
    """The whole service configuration, secrets resolved (they are `SecretStr`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    judges: dict[str, JudgeSpec] = Field(default_factory=dict)
    default_judge: str | None = None
    token: SecretStr | None = Field(default=None, repr=False)
    token_env: str | None = None
    data_dir: Path = Path("judge-service")
    # a postgresql:// URL: jobs, records and idempotency keys in PostgreSQL, where any number
    # of `judge serve` replicas share the work (judge.service.stores.postgres); else SQLite
    database: str | None = Field(default=None, pattern=r"^postgres(ql)?://", repr=False)
    replicas: Replicas = Field(default_factory=Replicas)
    cache_dir: Path | None = None
    use_cache: bool = True
    # an OTLP/HTTP collector: each record also sent as a gen_ai.evaluation.result event
    # (judge.traces.otel; the traces extra)
    otel_endpoint: str | None = Field(default=None, pattern=r"^https?://")
    # the operator's own rubric folders, after the built-in ones; $JUDGE_RUBRICS_DIR adds more
    rubrics_dirs: list[Path] = Field(default_factory=list)
    limits: Limits = Field(default_factory=Limits)
    # Host names a server on loopback answers besides localhost and loopback IPs (the name a
    # reverse proxy on this machine forwards); any other Host is refused (DNS rebinding).
    allowed_hosts: list[str] = Field(default_factory=list)
    # Resolved from the environment at load time; never serialised.
    api_keys: dict[str, SecretStr] = Field(default_factory=dict, repr=False, exclude=True)
    # The juries of the judges with `jury:`, read at load time, and their jurors' configs
    # (keys resolved); never serialised.
    juries: dict[str, Jury] = Field(default_factory=dict, repr=False, exclude=True)
    juror_configs: dict[str, list[JudgeConfig]] = Field(
        default_factory=dict, repr=False, exclude=True
    )
    # The certificates of the judges with `certificate:`, read at load time.
    certificates: dict[str, Certificate] = Field(default_factory=dict, repr=False, exclude=True)

    @field_validator("data_dir", "cache_dir", "rubrics_dirs")
    @classmethod
    def _expand_home(cls, value: Path | list[Path] | None) -> Path | list[Path] | None:
        """`~` and `~user` in every path mean the home folder, as in a shell."""
        if isinstance(value, list):
            return [p.expanduser() for p in value]
        return None if value is None else value.expanduser()

    def judge_names(self) -> list[str]:
        return list(self.judges) or [RULES_JUDGE]

    def default_name(self) -> str:
        return self.default_judge or self.judge_names()[0]

    def spec(self, name: str) -> JudgeSpec:
        return self.judges.get(name) or JudgeSpec()

    def judge_config(self, name: str) -> JudgeConfig:
        """The engine's frozen config for the judge called `name`."""
        spec = self.spec(name)
        options = spec.model_dump(exclude={"api_key_env", "jury", "certificate"})
        return JudgeConfig(
            **options,
            api_key=self.api_keys.get(name),
            cache_dir=self.cache_dir or default_cache_dir(),
            use_cache=self.use_cache,
        )

    def secrets(self) -> list[str]:
        """Every secret value the server holds, to scrub from anything it says: keys, the
        token, and a password written into a judge's base_url."""
        values = [key.get_secret_value() for key in self.api_keys.values()]
        for configs in self.juror_configs.values():  # a jury's jurors' keys
            values += [c.api_key.get_secret_value() for c in configs if c.api_key is not None]
            values += [_password(c.base_url) for c in configs]
        if self.token is not None:
            values.append(self.token.get_secret_value())
        for spec in self.judges.values():
            password = urlsplit(spec.base_url).password if spec.base_url else None
            if password:
                values += [password, unquote(password)]
        password = urlsplit(self.database).password if self.database else None
        if password:
            values += [password, unquote(password)]
        return [v for v in values if v]


def load_service_config(
    path: Path | None, env: Mapping[str, str], **overrides: Any
) -> ServiceConfig:
    """Read the config file (YAML or TOML by suffix), resolve keys and the token from `env`."""
    data: dict[str, Any] = _read_file(path) if path is not None else {}
    _refuse_juries(data, path)
    _anchor_juries(data, path)
    data.update({k: v for k, v in overrides.items() if v is not None})
    try:
        config = ServiceConfig.model_validate(data)
    except ValidationError as exc:
        where = f"{path}: " if path else ""
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'config'}: {e['msg']}" for e in exc.errors()
        )
        raise UsageError(f"{where}invalid service configuration: {problems}") from None
    _check_names(config)
    listed = [Path(p).expanduser() for p in env.get("JUDGE_RUBRICS_DIR", "").split(os.pathsep) if p]
    update = {**_resolve_secrets(config, env), "rubrics_dirs": [*config.rubrics_dirs, *listed]}
    update |= _load_juries(config, env, path)
    where = f"{path}: " if path else ""
    update["certificates"] = {
        name: load_certificate(spec.certificate, named=f"{where}judge {name!r}: certificate")
        for name, spec in config.judges.items()
        if spec.certificate is not None
    }
    return config.model_copy(update=update)


def _anchor_juries(data: dict[str, Any], path: Path | None) -> None:
    """A judge's `jury:` and `certificate:` paths are relative to the configuration file,
    as a user reads it."""
    judges = data.get("judges")
    if path is None or not isinstance(judges, dict):
        return
    for spec in judges.values():
        for key in ("jury", "certificate"):
            if isinstance(spec, dict) and isinstance(spec.get(key), str):
                spec[key] = str(path.parent / Path(spec[key]).expanduser())


def _load_juries(
    config: ServiceConfig, env: Mapping[str, str], path: Path | None
) -> dict[str, Any]:
    """Every `jury:` judge's jury file, read and checked now (one line, exit 2, at start),
    and its jurors' configs over the service's cache settings and the judge's timeouts."""
    from judge.jury.config import juror_config, load_jury  # only a configured jury loads it
    from judge.jury.serve import check_served_jury

    juries: dict[str, Jury] = {}
    configs: dict[str, list[JudgeConfig]] = {}
    for name, spec in config.judges.items():
        if spec.jury is None:
            continue
        where = f"{path}: judge {name!r}" if path else f"judge {name!r}"
        jury = load_jury(spec.jury)
        check_served_jury(jury, where)
        base = config.judge_config(name)
        juries[name] = jury
        configs[name] = [juror_config(j, base, env) for j in jury.jurors]
    return {"juries": juries, "juror_configs": configs}


def _password(url: str | None) -> str:
    password = urlsplit(url).password if url else None
    return unquote(password) if password else ""


def _refuse_juries(data: Mapping[str, Any], path: Path | None) -> None:
    """`juries:` is not a key: a jury is served as a named judge; say so in one line."""
    if "juries" in data:
        where = f"{path}: " if path else ""
        raise UsageError(
            f"{where}the service has no `juries:`: name a jury as a judge, "
            "judges: {panel: {jury: jury.yaml}}"
        )


def _read_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text("utf-8")
        data = tomllib.loads(text) if path.suffix.lower() == ".toml" else yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, yaml.YAMLError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path}: cannot read the service configuration: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"{path}: the service configuration must be a mapping")
    return data


def _check_names(config: ServiceConfig) -> None:
    for name in config.judges:
        if not re.match(NAME, name):
            raise UsageError(f"judge name {name!r}: use letters, digits, '_', '.', '-'")
    if config.default_judge and config.default_judge not in config.judge_names():
        raise UsageError(f"default_judge {config.default_judge!r} is not among the judges")


def _resolve_secrets(config: ServiceConfig, env: Mapping[str, str]) -> dict[str, Any]:
    keys: dict[str, SecretStr] = {}
    for name, spec in config.judges.items():
        if spec.api_key_env:
            value = env.get(spec.api_key_env)
            if not value:
                raise UsageError(
                    f"judge {name!r}: the environment variable {spec.api_key_env} is not set"
                )
            keys[name] = SecretStr(value)
    token = config.token
    if token is None:
        value = env.get(config.token_env or TOKEN_ENV)
        token = SecretStr(value) if value else None
    return {"api_keys": keys, "token": token}
