"""A zip's members read with bounds, for archives that came from outside (Inspect's `.eval`
logs): a zip bomb is refused before it costs memory or minutes.

Before anything is decompressed, the central directory is checked: at most MAX_MEMBERS
entries; no member said to be over MAX_MEMBER_BYTES; all of them together at most
MAX_TOTAL_BYTES, and at most MAX_RATIO times the archive's size on disk (past RATIO_FLOOR);
no member over RATIO_FLOOR said to expand more than MAX_RATIO times. Then each member is
streamed in CHUNK pieces and the same bounds are kept on the bytes that really come out (a
header can lie), so no more than one member's bounded bytes are ever held. Each refusal is
a ForeignFormatError naming the file, the member and the bound.

Members in zstd (method 93, what inspect-ai 0.3.285 writes) are read by Python 3.14's
zipfile, or else through `zstandard` (`pip install 'llm-judge[inspect]'`).
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from calibration.foreign._common import ForeignFormatError

ZSTD = 93  # the zip compression method Inspect writes
MAX_MEMBERS = 100_000  # Inspect writes one per sample and epoch, and a few more
MAX_MEMBER_BYTES = 64 * 1024 * 1024  # one sample's JSON, uncompressed
MAX_TOTAL_BYTES = 2 * 1024 * 1024 * 1024  # every member read, uncompressed
MAX_RATIO = 100  # JSON transcripts compress 5-10 times; a bomb, hundreds to millions
RATIO_FLOOR = 1024 * 1024  # below this, a high ratio costs nothing worth refusing
CHUNK = 1024 * 1024


class _Budget:
    """What is left to read of the archive (the bounds on the total)."""

    def __init__(self, path: Path) -> None:
        self.path, self.size = path, path.stat().st_size
        self.bound = min(MAX_TOTAL_BYTES, MAX_RATIO * self.size + RATIO_FLOOR)
        self.left = self.bound

    def take(self, name: str, size: int) -> None:
        self.left -= size
        if self.left < 0:
            raise ForeignFormatError(
                f"{self.path}: zip members up to {name} expand past {self.bound} bytes in all "
                f"(the bound for a file of {self.size} bytes: {MAX_RATIO} times its size, at "
                f"most {MAX_TOTAL_BYTES}): refused as a zip bomb"
            )


def bounded_members(path: Path, wanted: Callable[[str], bool]) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of each member whose name is `wanted`, in name order, within the
    bounds; ForeignFormatError on a bomb, a broken member or an unreadable archive."""
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            if len(infos) > MAX_MEMBERS:
                raise ForeignFormatError(
                    f"{path}: {len(infos)} zip members, over the bound of {MAX_MEMBERS} "
                    "(a zip bomb?)"
                )
            chosen = sorted((i for i in infos if wanted(i.filename)), key=lambda i: i.filename)
            _check_declared(path, chosen)
            budget = _Budget(path)
            for info in chosen:
                yield info.filename, _member(path, archive, info, budget)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ForeignFormatError(f"{path}: not a readable zip ({exc})") from None


def _check_declared(path: Path, infos: list[zipfile.ZipInfo]) -> None:
    """The sizes the central directory gives, before anything is decompressed."""
    budget = _Budget(path)
    for info in infos:
        _check_size(path, info, info.file_size, info.compress_size)
        budget.take(info.filename, info.file_size)


def _check_size(path: Path, info: zipfile.ZipInfo, size: int, compressed: int) -> None:
    if size > MAX_MEMBER_BYTES:
        raise _refusal(path, info.filename, f"expands past {MAX_MEMBER_BYTES} bytes")
    if size > RATIO_FLOOR and size > MAX_RATIO * max(compressed, 1):
        raise _refusal(
            path, info.filename, f"expands more than {MAX_RATIO} times ({compressed} bytes)"
        )


def _refusal(path: Path, name: str, what: str) -> ForeignFormatError:
    return ForeignFormatError(f"{path}: zip member {name} {what}: refused as a zip bomb")


def _member(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: _Budget) -> bytes:
    """One member's bytes, streamed within the bounds."""
    try:
        return _stream_member(path, archive, info, budget)
    except (zipfile.BadZipFile, zlib.error, EOFError, RuntimeError) as exc:
        raise ForeignFormatError(f"{path}: zip member {info.filename} is broken ({exc})") from None


def _stream_member(
    path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: _Budget
) -> bytes:
    try:
        stream: IO[bytes] = archive.open(info)
    except NotImplementedError:
        if info.compress_type != ZSTD:
            raise ForeignFormatError(
                f"{path}: {info.filename} uses zip compression method {info.compress_type}, "
                "which cannot be read here"
            ) from None
        data = _read(path, info, _zstd_stream(path, info), budget)
        if zlib.crc32(data) != info.CRC:  # what zipfile checks on the members it reads itself
            raise ForeignFormatError(f"{path}: {info.filename} fails its CRC-32 check") from None
        return data
    with stream:
        return _read(path, info, stream, budget)


def _read(path: Path, info: zipfile.ZipInfo, stream: Any, budget: _Budget) -> bytes:
    """Every byte of `stream`, refused as soon as it passes a bound (never one blind read)."""
    pieces, size = [], 0
    while piece := stream.read(CHUNK):
        size += len(piece)
        if size > info.file_size:
            raise _refusal(
                path, info.filename, f"expands past the {info.file_size} bytes it declares"
            )
        _check_size(path, info, size, info.compress_size)
        budget.take(info.filename, len(piece))
        pieces.append(piece)
    return b"".join(pieces)


def _zstd_stream(path: Path, info: zipfile.ZipInfo) -> Any:
    """A zstd member that this Python's zipfile cannot read, as a stream: from its raw bytes
    (after the local file header: 30 bytes, then the name and the extra field, APPNOTE
    4.3.7), through `zstandard` with its window bounded as a member is."""
    try:
        import zstandard
    except ImportError:
        raise ForeignFormatError(
            f"{path}: this Inspect log is zstd-compressed; reading it needs Python 3.14 or "
            "zstandard (pip install 'llm-judge[inspect]')"
        ) from None
    with path.open("rb") as handle:
        handle.seek(info.header_offset)
        header = handle.read(30)
        if len(header) < 30 or header[:4] != b"PK\x03\x04":
            raise ForeignFormatError(f"{path}: {info.filename} has no local file header")
        name_length, extra_length = struct.unpack("<HH", header[26:30])
        handle.seek(info.header_offset + 30 + name_length + extra_length)
        raw = handle.read(info.compress_size)  # at most the archive's size
    decompressor = zstandard.ZstdDecompressor(max_window_size=MAX_MEMBER_BYTES)
    return _ZstdErrors(path, info.filename, decompressor.stream_reader(raw), zstandard.ZstdError)


class _ZstdErrors:
    """A zstd stream whose errors are ForeignFormatError naming the member."""

    def __init__(self, path: Path, name: str, stream: Any, error: type[Exception]) -> None:
        self.path, self.name, self.stream, self.error = path, name, stream, error

    def read(self, size: int) -> bytes:
        try:
            return bytes(self.stream.read(size))
        except self.error as exc:
            raise ForeignFormatError(
                f"{self.path}: {self.name} is not valid zstd ({exc})"
            ) from None
