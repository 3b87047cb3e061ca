"""A GGUF model loads from its OpenVINO IR, converted once and kept beside it.

OpenVINO GenAI reads a GGUF file by building the model's graph from it on every load: 11.5 s for the 0.5B's GGUF
on this 2-core machine, and 7.3 s more for its tokenizer, against 2.0 s and 0.2 s for the IR that GenAI saves of
the same graph (``enable_save_ov_model``). So a GGUF model is converted once, into ``ir-<digest>`` in the model's
own directory (removed with it; a pull of other bytes converts again and sweeps the old one), and loads from the
IR from then on. The two load the same graph: tokenizer, chat template and greedy tokens are compared on the test
model (``tests/runtime_ov/test_converted.py``).

Integrity holds as for the GGUF: the GGUF is checked in full before it is converted (the IR comes from the
installed bytes only), the IR's files are hashed into ``contenox-ir.json`` as it is written, and the check that
runs after every load hashes the IR against that record as well as the GGUF against its digest
(:func:`check_converted`); an IR that fails is removed, so the next load converts again. A store that cannot be
written (read-only, full) loads the GGUF as before, and the log says why.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

import msgspec

from contenox.errors import ChecksumMismatch, ContenoxError
from contenox.runtime_ov._ov_errors import translate_ov_error
from contenox.runtime_ov.digests import file_sha256
from contenox.runtime_ov.gguf_header import check_weights
from contenox.runtime_ov.store import InstalledModel
from contenox.runtime_ov.verify import check_recorded, verify_weights

__all__ = ["RECORD", "check_converted", "convert", "converted", "ir_path"]

log = logging.getLogger(__name__)

RECORD = "contenox-ir.json"
"""The IR's record, written last: an IR directory without it is not one (a conversion cut short)."""
_PREFIX = "ir-"
_STALE_S = 3600.0
"""A ``.convert-*`` folder older than this was left by a conversion that was killed (one takes under a minute)."""


class _Record(msgspec.Struct, frozen=True, kw_only=True):
    """What the IR was converted from, and the sha256 of each file it holds."""

    source_digest: str
    files: dict[str, str]


class _Stopped(Exception):
    """The owner stopped the check (the engine closed)."""


def ir_path(model: InstalledModel) -> Path | None:
    """Where this GGUF model's IR lives (None: the model is an IR already, or has no digest to key it by)."""
    digest = model.profile.model_digest
    if model.profile.format == "openvino-ir" or not digest:
        return None
    return Path(model.path) / f"{_PREFIX}{digest[:16]}"


def _ready(target: Path) -> bool:
    return (target / RECORD).is_file() and (target / "openvino_model.xml").is_file()


def convert(model: InstalledModel) -> Path:
    """The model's IR directory: its own weights for an IR model, else the IR converted once from its GGUF
    (checked in full first: ChecksumMismatch when it is not the installed bytes). Raises what the conversion
    raised (an OSError where the store cannot be written)."""
    target = ir_path(model)
    if target is None:
        if model.profile.format == "openvino-ir":
            return model.weights
        raise ContenoxError(f"{model.name} has no recorded digest: its GGUF is not converted", model=model.name)
    if _ready(target):
        return target
    check_weights(model.weights)
    if not check_recorded(model):
        verify_weights(model)
    import openvino_genai as ov_genai

    for left in Path(model.path).glob(".convert-*"):  # a conversion killed half-way (one running is younger)
        with contextlib.suppress(OSError):
            if time.time() - left.stat().st_mtime > _STALE_S:
                shutil.rmtree(left, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix=".convert-", dir=model.path))
    try:
        started = time.monotonic()
        (work / "model.gguf").symlink_to(model.weights.resolve())
        try:
            pipe = ov_genai.LLMPipeline(str(work / "model.gguf"), "CPU", enable_save_ov_model=True)
        except (RuntimeError, IndexError) as exc:
            raise translate_ov_error(exc, doing=f"converting {model.name} to OpenVINO IR") from exc
        del pipe
        (work / "model.gguf").unlink()
        files = {p.name: file_sha256(p) for p in sorted(work.iterdir()) if p.is_file()}
        (work / RECORD).write_bytes(msgspec.json.encode(_Record(source_digest=model.profile.model_digest,
                                                                files=files)))
        os.chmod(work, 0o755)  # mkdtemp's 0700 would hide it from a store shared read-only
        try:
            os.replace(work, target)
        except OSError:  # another process finished first
            if not _ready(target):
                raise
        log.info("converted %s to OpenVINO IR once (%.1f s): later loads read %s", model.name,
                 time.monotonic() - started, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for old in Path(model.path).glob(f"{_PREFIX}*"):  # converted from bytes pulled before
        if old != target and old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
    return target


def converted(model: InstalledModel, *, create: bool = True) -> Path:
    """What to load the model from: its IR when there is one (converted now when ``create``), else its weights
    as they are (a store that cannot be written, a model with no digest; the log says why)."""
    target = ir_path(model)
    if target is None:
        return model.weights
    if _ready(target):
        return target
    if not create:
        return model.weights
    try:
        return convert(model)
    except ChecksumMismatch:
        raise
    except (OSError, ContenoxError) as exc:
        log.warning("%s loads from its GGUF (slower): converting it to OpenVINO IR failed: %s", model.name, exc)
        return model.weights


def check_converted(model: InstalledModel, loaded: Path, stop: threading.Event | None = None) -> bool:
    """Hash the IR the engine loaded against its record; raise ChecksumMismatch (the IR removed, so the next load
    converts again) when a file changed. True when ``loaded`` is no IR of this model's or it matched; False when
    ``stop`` was set before the hash finished."""
    if loaded != ir_path(model):
        return True

    def progress(_: int) -> None:
        if stop is not None and stop.is_set():
            raise _Stopped

    try:
        record = msgspec.json.decode((loaded / RECORD).read_bytes(), type=_Record)
        changed = [name for name, digest in record.files.items() if file_sha256(loaded / name, progress) != digest]
    except _Stopped:
        return False
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        changed = [f"{RECORD} ({exc})"]
    if not changed:
        log.info("verified %s's converted IR (%s)", model.name, loaded.name)
        return True
    with contextlib.suppress(OSError):
        shutil.rmtree(loaded)
    raise ChecksumMismatch(f"{model.name}: the converted weights at {loaded} changed since they were converted "
                           f"({', '.join(changed)}); removed: the next load converts them again from the model's "
                           "GGUF", model=model.name, path=str(loaded), files=changed)
