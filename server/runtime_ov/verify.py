"""GGUF weights are checked against their recorded digest on every load, not only when pulled.

A flipped byte in a GGUF file loads and answers (measured: 64 KiB flipped, no error); the profile's
``model_digest`` is what the file had when it was installed. Hashing costs about a second per 0.5 GB, so a
load never waits for it: :class:`BackgroundCheck` hashes the whole file on a thread of its own at idle priority
after the engine is ready, and a mismatch refuses the model from then on (the engine fails its requests with
:class:`ChecksumMismatch`, naming the model and how to pull it again).

The result is recorded beside the weights (``.verified.json``) under a key a change to the bytes cannot keep:
size, modification *and* status-change time, inode and device. ``os.utime`` restores an mtime but sets the
ctime to now, and a copy that preserves timestamps is a new inode, so a record written for other bytes never
matches. A load whose record says the bytes do not match is refused at once (:func:`check_recorded`);
bit rot below the file system changes no key, which is why the background check runs on every load.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

import msgspec

from contenox.errors import ChecksumMismatch, ContenoxError
from contenox.runtime_ov.digests import file_sha256
from contenox.runtime_ov.store import InstalledModel

__all__ = ["BackgroundCheck", "check_recorded", "verify_weights"]

log = logging.getLogger(__name__)
_CACHE = ".verified.json"
_IDLE_NICE = 19


class _Record(msgspec.Struct, frozen=True, kw_only=True):
    """What a full hash found for the file with this key (``actual == digest``: verified)."""

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    device: int
    digest: str
    actual: str


class _Stopped(Exception):
    """The owner stopped a background check (the engine closed)."""


def _key(weights: Path) -> tuple[int, int, int, int, int]:
    info = weights.stat()
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev


def _mismatch(model: InstalledModel, actual: str) -> ChecksumMismatch:
    expected = model.profile.model_digest
    return ChecksumMismatch(f"{model.name}: the weights at {model.weights} changed since they were installed "
                            f"(sha256 {actual[:12]}, expected {expected[:12]}); pull the model again "
                            f"(contenox model pull {model.name} --force)", model=model.name, expected=expected,
                            actual=actual)


def _checked(model: InstalledModel) -> bool:
    """A GGUF file with a recorded digest (an IR directory's digest is of its tree: checked at pull)."""
    return bool(model.profile.model_digest) and model.weights.is_file()


def check_recorded(model: InstalledModel) -> bool:
    """The quick check before a load: raise ChecksumMismatch when the record for exactly these bytes says they
    are not the installed ones; True when it says they are, False when there is no record for them."""
    if not _checked(model):
        return True
    with contextlib.suppress(OSError, msgspec.DecodeError, msgspec.ValidationError):
        seen = msgspec.json.decode((Path(model.path) / _CACHE).read_bytes(), type=_Record)
        key = _key(model.weights)
        if (seen.size, seen.mtime_ns, seen.ctime_ns, seen.inode, seen.device) == key \
                and seen.digest == model.profile.model_digest:
            if seen.actual != seen.digest:
                raise _mismatch(model, seen.actual)
            return True
    return False


def verify_weights(model: InstalledModel, stop: threading.Event | None = None) -> bool:
    """Hash the weights in full and record the result; raise ChecksumMismatch when they are not the installed
    ones. False when ``stop`` was set before the hash finished (nothing recorded)."""
    if not _checked(model):
        return True
    expected = model.profile.model_digest
    weights = model.weights
    try:
        key = _key(weights)

        def progress(_: int) -> None:
            if stop is not None and stop.is_set():
                raise _Stopped

        actual = file_sha256(weights, progress)
    except _Stopped:
        return False
    record = _Record(size=key[0], mtime_ns=key[1], ctime_ns=key[2], inode=key[3], device=key[4],
                     digest=expected, actual=actual)
    if _key(weights) == key:  # bytes replaced while hashing (a pull): the next load checks the new ones
        with contextlib.suppress(OSError):  # a read-only store: the next load checks again
            (Path(model.path) / _CACHE).write_bytes(msgspec.json.encode(record))
    if actual != expected:
        raise _mismatch(model, actual)
    log.info("verified %s (%d bytes)", model.name, key[0])
    return True


class BackgroundCheck:
    """:func:`verify_weights` on a thread of its own at idle priority, started once the model is loaded.

    ``on_mismatch`` gets the ChecksumMismatch (on the check's thread). The owner ``stop()``s it when it closes;
    ``wait()`` is for callers that must know the outcome (tests, the bench).
    """

    def __init__(self, model: InstalledModel, on_mismatch: Callable[[ContenoxError], None], *,
                 also: Callable[[threading.Event], bool] | None = None) -> None:
        self.model = model
        self._also = also
        """A check of what the load read besides the weights (the IR converted from them), run after theirs."""
        self.error: ContenoxError | None = None
        """The mismatch found (None: none, or not finished)."""
        self._on_mismatch = on_mismatch
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"contenox-verify-{model.name}", daemon=True)

    def start(self) -> BackgroundCheck:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join()

    def wait(self, timeout: float | None = None) -> bool:
        """True once the check finished (or never started) within ``timeout``."""
        if self._thread.ident is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        with contextlib.suppress(OSError, AttributeError):  # Linux: a thread's own nice value
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), _IDLE_NICE)
        try:
            if verify_weights(self.model, self._stop) and self._also is not None:
                self._also(self._stop)
        except ChecksumMismatch as exc:
            log.error("%s", exc.message)
            self.error = exc
            self._on_mismatch(exc)
        except OSError as exc:  # unreadable now: the load itself succeeded, so say so and let it run
            log.warning("could not verify %s in the background: %s", self.model.name, exc)
