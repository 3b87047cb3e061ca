"""Damaged copies of the real test model's weights (the weights-integrity tests)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import msgspec

from contenox.runtime_ov.converted import convert
from contenox.runtime_ov.store import InstalledModel

__all__ = ["copy_model", "flip_keeping_mtime", "link_model"]


def copy_model(model: InstalledModel, target: Path, *, ir: bool = True) -> InstalledModel:
    """A private copy of the installed model (its record left behind), to damage; ``ir``: with the IR converted
    from its weights (converted first when the installed model has none yet), as a model loaded before has it."""
    if ir:
        convert(model)
    ignore = (".verified.json",) if ir else (".verified.json", "ir-*")
    shutil.copytree(model.path, target, symlinks=False, ignore=shutil.ignore_patterns(*ignore))
    return msgspec.structs.replace(model, path=str(target))


def link_model(model: InstalledModel, target: Path, *, without: tuple[str, ...] = ()) -> Path:
    """``target``, a directory of the test's own holding links to the installed model's files (each but those
    named in ``without``), so what the test writes there (a certification) lands there; the model's IR is converted
    first and linked too, so a node in each home loads it rather than converting the GGUF into each (~12 s)."""
    convert(model)
    target.mkdir(parents=True)
    for item in Path(model.path).iterdir():
        if item.name not in without:
            (target / item.name).symlink_to(item)
    return target


def flip_keeping_mtime(weights: Path) -> None:
    """Flip 64 KiB in the middle in place (same inode, same size) and put the modification time back, as bit rot
    under a timestamp-preserving tool would leave it."""
    before = weights.stat()
    with weights.open("r+b") as fh:
        fh.seek(before.st_size // 2)
        block = fh.read(65536)
        fh.seek(before.st_size // 2)
        fh.write(bytes(b ^ 0xFF for b in block))
    os.utime(weights, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = weights.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
