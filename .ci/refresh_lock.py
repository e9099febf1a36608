"""Refresh requirements-dev.lock: the newest releases the dev extra allows, kept only if green.

    python .ci/refresh_lock.py [--python PY] [--venv DIR] [--skip-checks] [--keep] [--lock FILE]

Makes a fresh virtual environment, installs `-e '.[dev]'` unpinned (so pip picks the newest
releases pyproject.toml allows), runs .ci/checks in it (ruff, mypy, the rubric lock, the
test suite) and only when they pass rewrites the lock from `pip freeze`: every installed
package at its exact version, the project itself, pip and setuptools left out. A failing
check leaves the lock as it was and exits 1. Non-interactive; needs the package registry.
Run it after adding or changing a dependency, and commit the lock with that change.
With --keep, the current lock is a constraint: every pinned package stays where it is and only
what is new is resolved (adding a dependency without moving the others).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOCK = REPO / "requirements-dev.lock"
PROJECT = "llm-judge"
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)$")


def say(line: str) -> None:
    print(f"refresh-lock: {line}", file=sys.stderr, flush=True)


def run(command: list[str], cwd: Path | None = None) -> None:
    say("$ " + " ".join(command))
    subprocess.run(command, check=True, cwd=cwd)


def make_venv(python: str, folder: Path, keep: Path | None = None) -> Path:
    """A new environment at `folder` (emptied first) with a current pip; its python.

    `keep`: a lock whose pins constrain the install (only new packages are resolved).
    """
    run([python, "-m", "venv", "--clear", str(folder)])
    venv_python = folder / "bin" / "python"
    pip = [str(venv_python), "-m", "pip", "--disable-pip-version-check"]
    run([*pip, "install", "--quiet", "--upgrade", "pip"])
    pinned = ["-c", str(keep)] if keep is not None and keep.exists() else []
    run([*pip, "install", "--quiet", *pinned, "-e", f"{REPO}[dev]"], cwd=REPO)
    return venv_python


def checks_pass(venv_python: Path) -> bool:
    bin_dir = str(venv_python.parent)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    env["VIRTUAL_ENV"] = str(venv_python.parent.parent)
    env.pop("PYTHONPATH", None)
    say("running .ci/checks in the new environment")
    return subprocess.run(["bash", str(REPO / ".ci" / "checks")], cwd=REPO, env=env).returncode == 0


def frozen(venv_python: Path) -> dict[str, str]:
    """name -> version of everything installed, as pip freeze names it (no editable project)."""
    out = subprocess.run(
        [
            str(venv_python),
            "-m",
            "pip",
            "freeze",
            "--exclude-editable",
            "--disable-pip-version-check",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    pins = {}
    for line in out.splitlines():
        match = _PIN.match(line.strip())
        if match and normalise(match[1]) != PROJECT:
            pins[match[1]] = match[2]
        elif line.strip() and not line.startswith("#"):
            say(f"left out of the lock (not a registry release): {line.strip()}")
    return pins


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_pins(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    found = (_PIN.match(line.strip()) for line in path.read_text("utf-8").splitlines())
    return {m[1]: m[2] for m in found if m}


def render(pins: dict[str, str], python_version: str, *, checked: bool) -> str:
    when = "after .ci/checks passed" if checked else "with --skip-checks (NOT checked)"
    head = [
        "# Exact versions of everything `pip install -e '.[dev]'` installs (a pip constraints file).",
        "# Install with: pip install -c requirements-dev.lock -e '.[dev]'",
        f"# Written by .ci/refresh_lock.py on Python {python_version} ({platform.system()}"
        f" {platform.machine()}) {when}. Do not edit by hand: run the script.",
    ]
    lines = [f"{name}=={pins[name]}" for name in sorted(pins, key=normalise)]
    return "\n".join(head + lines) + "\n"


def report_changes(old: dict[str, str], new: dict[str, str]) -> None:
    before = {normalise(k): v for k, v in old.items()}
    after = {normalise(k): v for k, v in new.items()}
    for name in sorted(before.keys() | after.keys()):
        was, now = before.get(name), after.get(name)
        if was != now:
            say(f"{name}: {was or '-'} -> {now or '-'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="interpreter for the new venv")
    parser.add_argument(
        "--venv",
        type=Path,
        help="build the venv here, emptied first and kept after (default: a temporary folder)",
    )
    parser.add_argument(
        "--skip-checks", action="store_true", help="write the lock without running .ci/checks"
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep every version the lock pins; resolve only new ones",
    )
    parser.add_argument("--lock", type=Path, default=LOCK, help="lock file to write")
    args = parser.parse_args(argv)

    if args.venv is None:
        scratch: Path | None = Path(tempfile.mkdtemp(prefix="refresh-lock-"))
        folder = scratch / "venv"
    else:
        scratch, folder = None, args.venv
    try:
        venv_python = make_venv(args.python, folder, args.lock if args.keep else None)
        if not args.skip_checks and not checks_pass(venv_python):
            say(f"checks failed: {args.lock} left as it was")
            return 1
        version = subprocess.run(
            [str(venv_python), "-c", "import platform; print(platform.python_version())"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        pins = frozen(venv_python)
        report_changes(read_pins(args.lock), pins)
        tmp = args.lock.with_suffix(".tmp")
        tmp.write_text(render(pins, version, checked=not args.skip_checks), "utf-8")
        tmp.replace(args.lock)
        checked = "unchecked (--skip-checks)" if args.skip_checks else "checks passed"
        say(f"wrote {args.lock}: {len(pins)} packages, {checked}")
        return 0
    except subprocess.CalledProcessError as exc:
        say(f"failed: {' '.join(map(str, exc.cmd))} exited {exc.returncode}")
        return 1
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
