"""The layout's rules (issue 21): calibration/ returns results and never parses arguments
or prints; only judge/cli/ sees an argparse.Namespace, and each command turns it into one
frozen request; no import cycle anywhere, function-level imports included."""

from __future__ import annotations

import argparse
import ast
import dataclasses
from pathlib import Path

import grimp
import pytest

from judge.cli import _requests
from judge.cli._main import build_parser
from judge.cli._parser import command_parsers

REPO = Path(__file__).resolve().parents[2]
from judge.cli.view import ViewRequest  # noqa: E402  (its own module: issue 32)

REQUESTS = {
    "grade": _requests.GradeRequest,
    "probe": _requests.ProbeRequest,
    "calibrate": _requests.CalibrateRequest,
    "gate": _requests.GateRequest,
    "compare": _requests.CompareRequest,
    "align": _requests.AlignRequest,
    "batch": _requests.BatchRequest,
    "rubrics": _requests.RubricsRequest,
    "label": _requests.LabelRequest,
    "serve": _requests.ServeRequest,
    "config": _requests.ConfigRequest,
    "traces": _requests.TracesRequest,
    "watch": _requests.WatchRequest,
    "view": ViewRequest,
    "drift": _requests.DriftRequest,
    "certify": _requests.CertifyRequest,
}


def _sources(package: str) -> list[Path]:
    return sorted((REPO / package).rglob("*.py"))


def _terminal_uses(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            found += [f"imports {n}" for n in names if n and n.split(".")[0] == "argparse"]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in ("print", "input"):
                found.append(f"calls {node.func.id}() on line {node.lineno}")
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in ("stdout", "stderr")
            and isinstance(node.value, ast.Name)
            and node.value.id == "sys"
        ):
            found.append(f"uses sys.{node.attr} on line {node.lineno}")
    return found


def test_calibration_neither_parses_arguments_nor_prints():
    found = {
        path.relative_to(REPO).as_posix(): uses
        for path in _sources("calibration")
        if (uses := _terminal_uses(ast.parse(path.read_text("utf-8"))))
    }
    assert found == {}


def test_only_the_command_line_sees_a_namespace():
    outside = [
        path.relative_to(REPO).as_posix()
        for path in _sources("judge") + _sources("calibration")
        if "Namespace" in path.read_text("utf-8") and "judge/cli" not in path.as_posix()
    ]
    assert outside == []


def test_no_import_cycle_function_level_imports_included():
    graph = grimp.build_graph(
        "judge", "calibration", exclude_type_checking_imports=True, cache_dir=None
    )
    cycles = [
        (module, other)
        for module in sorted(graph.modules)
        for other in graph.find_modules_directly_imported_by(module)
        if graph.chain_exists(importer=other, imported=module)
    ]
    assert cycles == []


def _dests(parser: argparse.ArgumentParser) -> set[str]:
    return {
        a.dest
        for a in parser._actions
        if a.dest not in ("help", argparse.SUPPRESS) and not isinstance(a, argparse._VersionAction)
    }


def _fields(kind: type) -> set[str]:
    names = set()
    for f in dataclasses.fields(kind):
        nested = _requests._NESTED.get(f.name)
        names |= _fields(nested) if nested is not None else {f.name}
    return names - _requests.FROM_PROJECT_FILE  # the project file's defaults, not options


@pytest.mark.parametrize("command", sorted(REQUESTS))
def test_each_command_has_one_request_with_every_option(command):
    # an option added to a command's parser must be a field of its request, or the
    # command could not read it; a field no option fills would be a typo
    parsers = command_parsers(build_parser())
    assert set(parsers) == set(REQUESTS)
    assert _dests(parsers[command]) == _fields(REQUESTS[command])


def test_a_request_is_built_once_and_cannot_change():
    args = build_parser().parse_args(
        ["grade", "cases.jsonl", "--rubric", "faithfulness", "--fail-if", "mean_score < 0.5"]
    )
    request = _requests.request_from(_requests.GradeRequest, args)
    assert request.fail_if == ("mean_score < 0.5",)  # a tuple: no list to append to
    assert request.judge.model is None and request.rubrics_dir == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.rubric = "relevance"  # type: ignore[misc]
