"""JSON-schema validation bounded in time and memory, and closed to the outside world.

A tool schema comes from the case (a file, a service request, a pulled trace's
`llm.tools`): it is untrusted. Three things keep one validation from hanging a grade or
the service, or reaching outside the schema:

- **References stay inside the schema.** The validator's `referencing` registry has no
  retrieval: a `$ref` to a URL or a `file://` path (anything not in the schema itself,
  its `$defs` and embedded `$id`s, or the drafts' own metaschemas) is never fetched or
  read; the call is *not checkable*, with the reference named, at once.
- **Regexes without backtracking.** `pattern`, `patternProperties` and the
  `additionalProperties` that depends on them are matched with RE2 (`google-re2`), linear
  in the text and with a compile-memory cap. A pattern RE2 cannot run (a backreference, a
  lookaround) makes the call not checkable rather than falling back to a backtracking
  engine; so does `unevaluatedProperties` beside `patternProperties` (jsonschema matches
  those with Python's `re` inside its own helpers).
- **A step budget.** Every keyword the validator evaluates is a step: at most
  MAX_CALL_STEPS for one call and MAX_CASE_STEPS for one case (an exponential `anyOf`
  through `$defs` runs out of steps, not of memory: the errors it keeps grow with the
  steps taken). A case also stops at MAX_CASE_SECONDS, and when its caller stops waiting.
  `uniqueItems` hashes the items (linear) instead of comparing every pair.

Schemas over MAX_SCHEMA_CHARS of JSON or MAX_SCHEMA_DEPTH levels are not checked at all.
"""

from __future__ import annotations

import contextvars
import functools
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

from judge.kinds._matching import frozen
from judge.lexical import Budget, BudgetExceeded

MAX_SCHEMA_CHARS = 64_000  # JSON text of one tool's parameters schema
MAX_SCHEMA_DEPTH = 32  # levels of nesting in it
MAX_CALL_STEPS = 10_000  # keyword evaluations for one call (a real call takes tens)
MAX_CASE_STEPS = 500_000  # for all the calls of one case (10,000 plain calls: ~70,000)
MAX_CASE_SECONDS = 5.0  # wall clock for all the calls of one case: a backstop to the steps
_RE2_MEMORY = 8 << 20  # bytes RE2 may use to compile one pattern
_KEPT = 256  # compiled validators and regexes kept (the cases of a set share their tools)


class NotCheckable(Exception):
    """The call's arguments cannot be checked against this schema (the message says why)."""


class Steps:
    """The validation budget of one case: steps for the case and for the current call, a
    deadline, and the caller's `Budget` (its cancel flag)."""

    def __init__(
        self,
        budget: Budget | None = None,
        *,
        case_steps: int = MAX_CASE_STEPS,
        call_steps: int = MAX_CALL_STEPS,
        seconds: float = MAX_CASE_SECONDS,
    ) -> None:
        self.case_left = case_steps
        self.call_steps = call_steps
        self.call_left = call_steps
        self.deadline = time.monotonic() + seconds
        self.seconds = seconds
        self.budget = budget

    def new_call(self) -> None:
        self.call_left = self.call_steps

    def tick(self) -> None:
        self.case_left -= 1
        self.call_left -= 1
        if self.call_left < 0:
            raise NotCheckable(f"validation took over {self.call_steps:,} steps for this call")
        if self.case_left < 0:
            raise NotCheckable("the case's validation budget of steps is spent")
        if self.case_left % 256 == 0:  # the clock and the cancel flag cost more than a step
            if time.monotonic() > self.deadline:
                raise NotCheckable(f"the case's validation ran over {self.seconds:g} s")
            if self.budget is not None:
                self.budget.check()


_STEPS: contextvars.ContextVar[Steps | None] = contextvars.ContextVar("schema_steps", default=None)


def schema_errors(schema: Any, arguments: dict[str, Any], steps: Steps, limit: int) -> list[str]:
    """The first `limit` errors of `arguments` against `schema` (none: valid), each as
    `$.path: message`. Raises NotCheckable (module docstring)."""
    validator = compiled(schema_text(schema))
    steps.new_call()
    token = _STEPS.set(steps)
    try:
        found = list(_first(validator.iter_errors(arguments), limit))
    except (NotCheckable, BudgetExceeded):
        raise
    except RecursionError:
        raise NotCheckable("the schema refers to itself without end") from None
    except Exception as exc:  # noqa: BLE001 - a reference outside the schema, mostly
        raise NotCheckable(_reason(exc)) from None
    finally:
        _STEPS.reset(token)
    return [_said(e) for e in sorted(found, key=lambda e: [str(p) for p in e.path])]


def schema_text(schema: Any) -> str:
    """The schema as canonical JSON text (the validators' cache key), within the caps."""
    from calibration.io.jsontext import nested_too_deep  # on use: `judge --help` stays light

    if nested_too_deep(schema, MAX_SCHEMA_DEPTH):
        raise NotCheckable(f"the schema nests more than {MAX_SCHEMA_DEPTH} levels deep")
    text = json.dumps(schema, sort_keys=True)
    if len(text) > MAX_SCHEMA_CHARS:
        raise NotCheckable(f"the schema is {len(text):,} characters, over {MAX_SCHEMA_CHARS:,}")
    return text


def _first(errors: Iterator[Any], limit: int) -> Iterator[Any]:
    for count, error in enumerate(errors):
        if count >= limit:
            return
        yield error


def _said(error: Any) -> str:
    where = "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.path)
    return f"${where}: {error.message[:200]}"


def _reason(exc: Exception) -> str:
    from referencing.exceptions import Unresolvable

    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, Unresolvable):
        cause = cause.__cause__ or cause.__context__
    if isinstance(cause, Unresolvable):
        ref = getattr(cause, "ref", "")
        return f"$ref {str(ref)[:120]!r} is outside the schema: references are never fetched"
    return f"the schema cannot be used: {(str(exc).splitlines() or [''])[0][:200]}"


def compiled(text: str) -> Any:
    """A checked validator of the schema written as `text` (the draft it names by
    `$schema`, else 2020-12), with this module's keywords and a registry that retrieves
    nothing. Raises NotCheckable for a schema that is not one or cannot be bounded."""
    found = _compiled(text)
    if isinstance(found, NotCheckable):
        raise NotCheckable(*found.args)
    return found


@functools.lru_cache(maxsize=_KEPT)
def _compiled(text: str) -> Any:
    """`compiled`, with the refusal returned rather than raised, so that it is kept too (a
    case may make thousands of calls to one broken tool)."""
    try:
        return _checked_validator(text)
    except NotCheckable as exc:
        return exc


def _checked_validator(text: str) -> Any:
    import jsonschema  # only this kind needs it
    from referencing import Registry
    from referencing.jsonschema import UnknownDialect, specification_with

    schema = json.loads(text)
    dialect = schema.get("$schema") if isinstance(schema, dict) else None
    if dialect is not None:
        try:
            specification_with(str(dialect))
        except UnknownDialect:
            raise NotCheckable(f"unknown $schema {str(dialect)[:80]!r}") from None
    _refuse_unbounded(schema)
    base = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        base.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise NotCheckable(f"the schema cannot be used: {exc.message[:200]}") from None
    return _bounded(base)(schema, registry=Registry())


def _refuse_unbounded(schema: Any) -> None:
    keys = _keys(schema)
    if "unevaluatedProperties" in keys and "patternProperties" in keys:
        raise NotCheckable(
            "unevaluatedProperties beside patternProperties cannot be checked in bounded time"
        )


def _keys(schema: Any) -> set[str]:
    """Every object key anywhere in `schema` (iterative)."""
    keys: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            keys.update(str(k) for k in node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return keys


@functools.cache
def _bounded(base: type[Any]) -> type[Any]:
    """`base` with every keyword counted as a step and the regex keywords on RE2."""
    import jsonschema

    own = {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
        "uniqueItems": _unique_items,
    }
    keywords = {name: _counted(own.get(name, check)) for name, check in base.VALIDATORS.items()}
    return jsonschema.validators.extend(base, keywords)


def _counted(check: Callable[..., Any]) -> Callable[..., Any]:
    def keyword(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        steps = _STEPS.get()
        if steps is not None:
            steps.tick()
        return check(validator, value, instance, schema)

    return keyword


@functools.lru_cache(maxsize=_KEPT)
def regex(pattern: str) -> Any:
    """`pattern` compiled by RE2 (linear-time matching), or NotCheckable."""
    import re2

    options = re2.Options()
    options.log_errors = False  # the reason goes in the verdict, not on stderr
    options.max_mem = _RE2_MEMORY
    try:
        return re2.compile(pattern, options)
    except Exception as exc:  # noqa: BLE001 - re2.error: a feature RE2 leaves out
        said = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else exc
        raise NotCheckable(
            f"pattern {pattern[:60]!r} needs a backtracking regex engine ({str(said)[:80]})"
        ) from None


def _matches(pattern: str, text: str) -> bool:
    return regex(pattern).search(text) is not None


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError

    if validator.is_type(instance, "string") and not _matches(pattern, instance):
        yield ValidationError(f"{instance[:80]!r} does not match {pattern[:80]!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Any:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _matches(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, extra: Any, instance: Any, schema: Any) -> Any:
    """jsonschema's `additionalProperties` with the patterns matched by RE2."""
    from jsonschema import ValidationError

    if not validator.is_type(instance, "object"):
        return
    named = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [
        key for key in instance if key not in named and not any(_matches(p, key) for p in patterns)
    ]
    if validator.is_type(extra, "object"):
        for key in extras:
            yield from validator.descend(instance[key], extra, path=key)
    elif not extra and extras:  # jsonschema's own messages
        joined = ", ".join(repr(key)[:80] for key in sorted(extras)[:10])
        if patterns:
            verb = "does" if len(extras) == 1 else "do"
            listed = ", ".join(repr(p)[:80] for p in sorted(patterns)[:10])
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {listed}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(
                f"Additional properties are not allowed ({joined} {verb} unexpected)"
            )


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """jsonschema's `uniqueItems` by hashing each item's canonical form: linear, where
    the pairwise fallback is quadratic."""
    from jsonschema import ValidationError

    if unique and validator.is_type(instance, "array"):
        seen = set()
        for item in instance:
            key = frozen(item)
            if key in seen:
                yield ValidationError("the array has non-unique elements")
                return
            seen.add(key)
