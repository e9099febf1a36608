"""Static files the local web apps share (the transcript of a conversation case, drawn the
same way in `judge view` and `judge label`), shipped in the wheel under judge/web/static."""

from __future__ import annotations

from importlib import resources

SHARED_STATIC = {
    "transcript.js": "text/javascript; charset=utf-8",
    "transcript.css": "text/css; charset=utf-8",
}


def shared_asset(name: str) -> bytes:
    """The bytes of a shared static file (`name` must be a key of SHARED_STATIC)."""
    if name not in SHARED_STATIC:
        raise KeyError(name)
    return resources.files("judge.web").joinpath("static", name).read_bytes()
