"""What the loopback test server answers for a kind that simulates nothing of its own: a
deterministic instance of the verdict's JSON schema (`Kind.simulated_verdict`)."""

from __future__ import annotations

from typing import Any


def schema_instance(schema: dict[str, Any], seed: bytes, root: dict[str, Any] | None = None) -> Any:
    """A deterministic instance of a JSON schema (enums, integers, booleans, strings,
    objects, arrays, local `$ref`s), picking enum members from `seed`."""
    root = schema if root is None else root
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        return schema_instance(target, seed, root)
    if "enum" in schema:
        options = schema["enum"]
        return options[seed[0] % len(options)]
    if "anyOf" in schema:
        return schema_instance(schema["anyOf"][0], seed, root)
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {
            key: schema_instance(sub, seed[i % len(seed) :] + seed, root)
            for i, (key, sub) in enumerate(props.items())
        }
    if kind == "array":
        return [schema_instance(schema.get("items", {}), seed, root)]
    if kind == "boolean":
        return bool(seed[0] % 2)
    if kind == "integer":
        low, high = schema.get("minimum", 0), schema.get("maximum", 10)
        return low + seed[0] % (high - low + 1)
    if kind == "number":
        return 0.5
    return "simulated"
