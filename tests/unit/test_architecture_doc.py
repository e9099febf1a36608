"""docs/architecture.md draws the layers the import-linter contract enforces: the drawing
and pyproject.toml's contract name the same layers in the same order."""

from __future__ import annotations

import re
import tomllib

from tests.helpers import REPO

CONTRACT = "the grading engine in layers"


def test_the_architecture_page_draws_the_layers_the_contract_enforces() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    enforced = next(c["layers"] for c in contracts if c["name"] == CONTRACT)
    page = (REPO / "docs" / "architecture.md").read_text("utf-8")
    block = re.search(rf"<!-- layers: {CONTRACT} -->\n```text\n(.*?)```", page, re.S)
    assert block is not None, "docs/architecture.md lost its layers block"
    assert block.group(1).splitlines() == enforced
