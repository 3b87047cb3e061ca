"""GGUF weights are checked against their recorded digest each time a model is loaded, not only when pulled.

A flipped byte in a GGUF file loads and answers (measured: 64 KiB flipped, no error); the profile's
``model_digest`` is what the file had when it was installed. Hashing a 0.5 GB file costs about a second,
so the result is cached beside the weights by size and modification time: a warm start re-hashes nothing.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path

import msgspec

from contenox.errors import ChecksumMismatch
from contenox.runtime_ov.digests import file_sha256
from contenox.runtime_ov.store import InstalledModel

__all__ = ["verify_weights"]

log = logging.getLogger(__name__)
_CACHE = ".verified.json"


class _Verified(msgspec.Struct, frozen=True, kw_only=True):
    size: int
    mtime_ns: int
    digest: str


def verify_weights(model: InstalledModel) -> None:
    """Raise ChecksumMismatch when the weights on disk are not the ones installed (a cached check when
    neither their size nor their modification time changed since the last verification)."""
    expected = model.profile.model_digest
    weights = model.weights
    if not expected or not weights.is_file():
        return  # no recorded digest, or an IR directory (its digest is of its tree; checked at pull)
    info = weights.stat()
    size, mtime = info.st_size, info.st_mtime_ns
    cache = Path(model.path) / _CACHE
    with contextlib.suppress(OSError, msgspec.DecodeError):
        seen = msgspec.json.decode(cache.read_bytes(), type=_Verified)
        if (seen.size, seen.mtime_ns, seen.digest) == (size, mtime, expected):
            return
    actual = file_sha256(weights)
    if actual != expected:
        raise ChecksumMismatch(f"{model.name}: the weights at {weights} changed since they were installed "
                               f"(sha256 {actual[:12]}, expected {expected[:12]}); pull the model again "
                               f"(contenox model pull {model.name} --force)", model=model.name, expected=expected,
                               actual=actual)
    with contextlib.suppress(OSError):  # a read-only store just verifies again next time
        cache.write_bytes(msgspec.json.encode(_Verified(size=size, mtime_ns=mtime, digest=expected)))
    log.info("verified %s (%d bytes)", model.name, size)
