"""How `judge` builds its parser without importing every subcommand.

Every subcommand is registered with its one-line help and a "module:function" that adds its
options. `judge --help` lists the subcommands from those lines alone; choosing one imports
its module (and whatever it needs: the HTTP client, scipy, FastAPI) and lets its function
fill in the parser argparse then hands the rest of the command line to. `--version` is
worked out only when asked.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Sequence
from typing import Any, cast

from judge.cli._project import apply_project_defaults

Register = Callable[[argparse._SubParsersAction], None]


class LazyCommands(argparse._SubParsersAction):
    """The subparsers action, with each subcommand's options added when it is chosen.
    Use as `parser.add_subparsers(action=LazyCommands)`, then `add_lazy` per subcommand."""

    targets: dict[str, str]

    def add_lazy(self, name: str, summary: str, target: str) -> None:
        """`target` is "module:function", a function taking the subparsers action."""
        if not hasattr(self, "targets"):
            self.targets = {}
        self.targets[name] = target
        self.add_parser(name, help=summary)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        assert isinstance(values, list) and values  # argparse passes [name, *rest]
        self.load(values[0])
        super().__call__(parser, namespace, values, option_string)

    def load(self, name: str) -> argparse.ArgumentParser:
        """The parser of subcommand `name`, with its options (its module imported once)."""
        parser = cast(argparse.ArgumentParser, self.choices[name])
        if not getattr(parser, "_loaded", False):
            module, _, function = self.targets[name].partition(":")
            register: Register = getattr(importlib.import_module(module), function)
            register(cast(argparse._SubParsersAction, _Into(parser)))
            apply_project_defaults(parser, name)  # [tool.judge]: flags still override
            parser._loaded = True  # type: ignore[attr-defined]
        return parser


class _Into:
    """Given to a subcommand's function in place of the subparsers action: `add_parser`
    returns the parser already registered under that name, with the options applied."""

    SETTABLE = frozenset({"description", "epilog", "formatter_class"})

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser

    def add_parser(self, name: str, **options: Any) -> argparse.ArgumentParser:
        options.pop("help", None)  # the line `judge --help` shows was given to add_lazy
        unknown = set(options) - self.SETTABLE
        if unknown:
            raise TypeError(f"judge {name}: add_parser options not supported: {sorted(unknown)}")
        for key, value in options.items():
            setattr(self.parser, key, value)
        return self.parser


def command_parsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Every subcommand's full parser (imports every subcommand's module): for tests and docs."""
    sub = next(a for a in parser._actions if isinstance(a, LazyCommands))
    return {name: sub.load(name) for name in sub.targets}


class VersionAction(argparse.Action):
    """`--version`: prints what `default` (a function returning the text) says, and exits;
    nothing is worked out unless asked. `add_argument("--version", action=VersionAction,
    default=version_text)`."""

    def __init__(self, option_strings: list[str], dest: str, **options: Any) -> None:
        self.text: Callable[[], str] = options.pop("default")
        super().__init__(
            option_strings, argparse.SUPPRESS, nargs=0, default=argparse.SUPPRESS, **options
        )

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(self.text())
        parser.exit()
