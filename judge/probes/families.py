"""Model families, for the self-preference probe: which models count as the judge's own.

A family comes from a model name by its first word (after any `org/` prefix): the table
below, else the first word itself (`acme-7b` -> acme). `--judge-family` takes a family
name from `FAMILY_NAMES` or a model name, which is mapped to its family (`gpt-4o` ->
openai), so either spelling matches the cases' `metadata.generator` the same way. Light:
`judge probe --help` lists the names without loading the statistics.
"""

from __future__ import annotations

import re

_FAMILIES = (
    (r"^(gpt|chatgpt|o\d|text-davinci|davinci)", "openai"),
    (r"^claude", "anthropic"),
    (r"^(meta-)?llama", "meta"),
    (r"^(gemini|gemma|palm|bard)", "google"),
    (r"^(mistral|mixtral|codestral|ministral|pixtral)", "mistral"),
    (r"^qwen", "qwen"),
    (r"^deepseek", "deepseek"),
    (r"^phi", "microsoft"),
    (r"^command", "cohere"),
    (r"^rules$", "rules"),
)
FAMILY_NAMES: tuple[str, ...] = tuple(dict.fromkeys(family for _, family in _FAMILIES))


def family_of(model: str | None) -> str | None:
    """Model family from a model name: `gpt-4o-2024-08-06` -> openai, `claude-3-5-...` ->
    anthropic, `meta-llama/Llama-3.1-70B` -> meta; unknown names give their first word."""
    if not model:
        return None
    name = model.strip().lower().rsplit("/", 1)[-1]
    for pattern, family in _FAMILIES:
        if re.match(pattern, name):
            return family
    return re.split(r"[-_:.\s]", name, maxsplit=1)[0] or None


def judge_family(given: str | None, model: str | None) -> str:
    """The judge's family: `given` (a family name, or a model name mapped to its family),
    else the family of the judge's `model`, else `rules`."""
    if given and given.strip():
        name = given.strip().lower()
        return name if name in FAMILY_NAMES else (family_of(name) or name)
    return family_of(model) or "rules"
