"""Inspect `.eval` logs that are zip bombs (issue 33 point 4: a 3.1 MB log took 6.5 GB and
over a minute before it was refused). Each bomb here is real: a few kilobytes on disk that
expand to a gigabyte, in zstd as Inspect writes (built with `zstandard` in 1 MiB pieces)
and in deflate as zipfile writes. Each is refused with one line naming the file and the
member, exit 2, while tracemalloc sees a small fraction of what it expands to; the sizes a
header declares are checked first, and a header that lies is caught on the bytes."""

from __future__ import annotations

import json
import struct
import tracemalloc
import zipfile
import zlib
from pathlib import Path

import pytest
import zstandard

from calibration.foreign import ForeignFormatError, _zip, detect_format, read_foreign
from judge.cli import main
from tests.helpers import REPO

GIB = 1 << 30
MIB = 1 << 20
REAL = REPO / "tests" / "data" / "foreign" / "real" / "inspect" / "faithfulness.eval"
SAMPLE = json.dumps({"id": "returns-001", "epoch": 1, "scores": {"m": {"value": "C"}}})


def zstd_zeros(size: int) -> tuple[bytes, int]:
    """`size` zero bytes in one zstd frame, compressed a MiB at a time (never held whole),
    and their CRC-32."""
    compressor = zstandard.ZstdCompressor().compressobj(size=size)
    out, crc, chunk = [], 0, bytes(MIB)
    for _ in range(size // MIB):
        out.append(compressor.compress(chunk))
        crc = zlib.crc32(chunk, crc)
    out.append(compressor.flush())
    return b"".join(out), crc


def write_zip(path: Path, members: list[tuple[str, int, bytes, int, int]]) -> Path:
    """A zip of (name, method, compressed bytes, CRC-32, declared size) members, written
    field by field (APPNOTE 4.3.7, 4.3.12, 4.3.16), so that any member may be zstd (93)
    and any declared size may lie."""
    local, central = bytearray(), bytearray()
    for name, method, data, crc, size in members:
        raw = name.encode()
        fields = (method, 0, 33, crc, len(data), size, len(raw), 0)  # time 0, 1980-01-01
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 63, 63, 0, *fields[:7], 0,
                               0, 0, 0, 0, len(local)) + raw  # fmt: skip
        local += struct.pack("<IHHHHHIIIHH", 0x04034B50, 63, 0, *fields) + raw + data
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members),
                      len(central), len(local), 0)  # fmt: skip
    path.write_bytes(bytes(local + central + end))
    return path


def header() -> tuple[str, int, bytes, int, int]:
    return ("header.json", zipfile.ZIP_STORED, b"{}", zlib.crc32(b"{}"), 2)


def stored(name: str, text: str) -> tuple[str, int, bytes, int, int]:
    data = text.encode()
    return (name, zipfile.ZIP_STORED, data, zlib.crc32(data), len(data))


@pytest.fixture(scope="module")
def gib_of_zeros() -> tuple[bytes, int]:
    return zstd_zeros(GIB)


def refusal(path: Path) -> tuple[str, int]:
    """read_foreign's error on `path`, and the peak bytes tracemalloc saw while it ran."""
    tracemalloc.start()
    try:
        with pytest.raises(ForeignFormatError) as raised:
            read_foreign(path, "inspect")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return str(raised.value), peak


def test_a_zstd_bomb_is_refused_before_it_is_read(
    gib_of_zeros: tuple[bytes, int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One member of 1 GiB of zeros, declared as such: refused on its header."""
    data, crc = gib_of_zeros
    name = "samples/returns-001_epoch_1.json"
    bomb = write_zip(tmp_path / "bomb.eval", [header(), (name, 93, data, crc, GIB)])
    assert bomb.stat().st_size < 100_000  # a few kilobytes on disk
    assert detect_format(bomb) == "inspect"
    message, peak = refusal(bomb)
    assert peak < 4 * MIB  # nothing decompressed
    assert f"{bomb}: zip member {name} expands past" in message and "zip bomb" in message
    human = tmp_path / "human.csv"
    human.write_text("id,label\nreturns-001,faithful\n")
    args = ["calibrate", str(bomb), str(human), "-o", str(tmp_path / "r")]
    assert main(args, env={}) == 2
    err = capsys.readouterr().err
    (line,) = err.strip().splitlines()
    assert line.startswith("error: ") and str(bomb) in line and name in line


def test_a_zstd_bomb_whose_header_lies_is_refused_on_its_bytes(
    gib_of_zeros: tuple[bytes, int], tmp_path: Path
) -> None:
    """The same member declared as 2,000 bytes (and with a CRC that fits nothing): it is
    streamed, and refused on the first piece past what it declares."""
    data, crc = gib_of_zeros
    name = "samples/returns-001_epoch_1.json"
    bomb = write_zip(tmp_path / "liar.eval", [header(), (name, 93, data, crc, 2_000)])
    message, peak = refusal(bomb)
    assert peak < 16 * MIB  # a piece or two of the 1 GiB it holds
    assert str(bomb) in message and name in message


def test_a_deflate_bomb_is_refused(tmp_path: Path) -> None:
    """What zipfile itself writes: 100 MiB of zeros deflated to about 100 KB."""
    bomb = tmp_path / "deflate.eval"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", "{}")
        with archive.open("samples/a_epoch_1.json", "w") as member:
            for _ in range(100):
                member.write(bytes(MIB))
    assert bomb.stat().st_size < 1 * MIB
    message, peak = refusal(bomb)
    assert peak < 4 * MIB
    assert "zip member samples/a_epoch_1.json expands past" in message


def test_many_small_members_are_bounded_by_the_archives_size(tmp_path: Path) -> None:
    """Members each under the ratio floor: a valid sample padded with 900 KiB of one
    letter, a few hundred bytes in zstd. Read as they were before, all 2,000 (1.7 GiB) were
    parsed and held; together they may expand at most MAX_RATIO times the archive's size."""
    text = SAMPLE[:-1] + ', "pad": "' + "a" * (900 * 1024) + '"}'
    data = zstandard.ZstdCompressor().compress(text.encode())
    member = (93, data, zlib.crc32(text.encode()), len(text))
    members = [header()] + [(f"samples/s{i:04}_epoch_1.json", *member) for i in range(2_000)]
    bomb = write_zip(tmp_path / "many.eval", members)
    assert bomb.stat().st_size < 1 * MIB
    message, peak = refusal(bomb)
    assert peak < 16 * MIB
    assert f"{bomb}: zip members up to samples/s" in message
    assert "100 times its size, at most 2147483648): refused as a zip bomb" in message


def test_a_log_of_too_many_members_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(_zip, "MAX_MEMBERS", 10)
    members = [header()] + [stored(f"samples/s{i}_epoch_1.json", SAMPLE) for i in range(10)]
    path = write_zip(tmp_path / "many.eval", members)
    with pytest.raises(ForeignFormatError, match="11 zip members, over the bound of 10"):
        read_foreign(path, "inspect")


def test_a_log_within_the_bounds_reads_as_before(tmp_path: Path) -> None:
    """The bounds leave a real log alone: Inspect's own .eval (37 zstd members) gives the
    rows of its .json twin; a stored member of this shape reads too."""
    rows = read_foreign(REAL).rows
    assert len(rows) == 37 and rows == read_foreign(REAL.with_suffix(".json")).rows
    path = write_zip(tmp_path / "one.eval", [header(), stored("samples/a_epoch_1.json", SAMPLE)])
    assert read_foreign(path).rows == [{"id": "returns-001", "label": "pass", "score": 1.0}]


@pytest.mark.parametrize(
    ("member", "message"),
    [
        ("[1, 2]", "samples/a_epoch_1.json: the sample is a list, not an object"),
        ('{"id": "a", "scores": [1]}', "samples/a_epoch_1.json: scores is a list, not an object"),
        ("[" * 5000 + "]" * 5000, "samples/a_epoch_1.json: JSON nested more than 256 levels"),
        ("{not json", "samples/a_epoch_1.json: not JSON"),
    ],
    ids=["a list", "scores a list", "nested 5,000 deep", "not JSON"],
)
def test_a_malformed_eval_member_is_one_line(
    member: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_zip(tmp_path / "log.eval", [header(), stored("samples/a_epoch_1.json", member)])
    human = tmp_path / "human.csv"
    human.write_text("id,label\na,faithful\n")
    args = ["calibrate", str(path), str(human), "-o", str(tmp_path / "r"), "--from", "inspect"]
    assert main(args, env={}) == 2
    err = capsys.readouterr().err
    (line,) = err.strip().splitlines()
    assert f"{path}: {message}" in line
