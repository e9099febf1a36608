"""A labelling set that grows: `judge watch --label-rate R --label-dir DIR` queues a sample
of what it grades for people, as it grades it.

Which cases: a hash of the seed and the case id under R (`queued`), tagged apart from the
watch's own sampling hash, so the labelled share of the graded cases is R whatever the
sample rate (the same hash for both would queue every graded case whenever R is at least
the sample rate). A restart makes the same decision, and the store keeps one item an id
(`LabelStore.append_items`), so no case is queued twice.

The store holds case text: DIR is made 0700 and the store 0600 (SQLite gives its `-wal`
and `-shm` files the store's mode), and a store or sidecar name that is a symbolic link is
refused rather than written through; with DIR 0700 nobody else can plant one afterwards.
Its plan names the rubric, the rate and the seed; a watch with others on the same DIR is
refused, so one set never mixes two samples.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Any

from judge.errors import UsageError
from judge.label.store import LabelStore
from judge.rubric import Rubric

__all__ = [
    "SOURCE",
    "open_production_store",
    "production_db",
    "queued",
    "reopen_production_store",
]

SOURCE = "judge watch"  # the plan's `source`: a set that grows, with no input file
SIDECARS = ("-wal", "-shm", "-journal")


def queued(seed: int, case_id: str, rate: float) -> bool:
    """Whether a graded case goes to people: sha256 of (seed, id) under `rate`."""
    digest = hashlib.sha256(f"label\x00{seed}\x00{case_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


def production_db(folder: Path, rubric: Rubric) -> Path:
    return folder / f"{rubric.id}.labels.sqlite"


def production_plan(rubric: Rubric, rate: float, seed: int) -> dict[str, Any]:
    return {
        "source": SOURCE,
        "rubric": rubric.ref,
        "rubric_sha256": rubric.sha256,
        "label_rate": rate,
        "seed": seed,
    }


def open_production_store(folder: Path, rubric: Rubric, *, rate: float, seed: int) -> LabelStore:
    """DIR's store for `rubric`, created private or checked against this plan."""
    if not 0 < rate <= 1:
        raise UsageError(f"--label-rate must be in (0, 1], got {rate}")
    _private_folder(folder)
    db = production_db(folder, rubric)
    _create_private(db)
    store = LabelStore(db)
    try:
        wanted = production_plan(rubric, rate, seed)
        stored = store.plan()
        if stored is None:
            store.initialise(wanted, [])
        elif stored != wanted:
            changed = sorted(k for k in wanted if stored.get(k) != wanted[k])
            raise UsageError(
                f"--label-dir {folder}: its store was made with other settings "
                f"({', '.join(changed)} differ): use the same ones, or another --label-dir"
            )
    except BaseException:
        store.close()
        raise
    return store


def _private_folder(folder: Path) -> None:
    if folder.is_symlink():
        raise UsageError(f"--label-dir {folder} is a symbolic link: give the folder itself")
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not folder.is_dir():
        raise UsageError(f"--label-dir {folder} is not a folder")
    os.chmod(folder, 0o700)  # it holds case text: others may not list or plant files in it


def _create_private(db: Path) -> None:
    for path in (db, *(db.with_name(db.name + s) for s in SIDECARS)):
        if path.is_symlink():
            raise UsageError(f"{path} is a symbolic link: refused, not written through")
    try:
        fd = os.open(db, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        if not stat.S_ISREG(db.lstat().st_mode):
            raise UsageError(f"{db} is not a label store file") from None
        os.chmod(db, 0o600)
        return
    os.close(fd)


def reopen_production_store(db: Path, rubric: Rubric) -> LabelStore:
    """`judge label DIR`: the store a watch made in DIR, for `rubric`. Items the watch
    queues while it is open are read at the server's next start (its queues are built once)."""
    if db.is_symlink() or not db.is_file():
        raise UsageError(f"{db.parent}: no store of `judge watch --label-dir` for {rubric.id} here")
    store = LabelStore(db)
    plan = store.plan() or {}
    if plan.get("source") != SOURCE or plan.get("rubric_sha256") != rubric.sha256:
        store.close()
        raise UsageError(
            f"{db} is not a `judge watch --label-dir` store of {rubric.ref} "
            f"(it holds {plan.get('rubric', 'no plan')})"
        )
    return store
