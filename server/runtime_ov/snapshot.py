"""KV snapshots through the stateful low-level API: save a prefix's KV, restore it, continue, branch.

Parked: not part of the engine the node drives (not exported from :mod:`contenox.runtime_ov`); only ``contenox
bench`` measures it (``bench/snapshots.py``: save and restore beside a re-prefill). It stays in ``runtime_ov``
because only this package may import OpenVINO; wiring it in waits for an API that seeds the paged cache.

The engine's paged cache cannot be read or written from Python in OpenVINO GenAI 2026.4.1, so
snapshots use a second, *stateful* compilation of the same model (``core.compile_model`` of its
IR; ``query_state`` / ``set_state``): the IR the engine loads too (:mod:`.converted`). A restored
stream continues on that stateful model; it cannot seed the engine's paged prefix cache (no API
for that in 2026.4.1), so a warm start of the engine itself is a re-prefill of the prefix.

File layout: ``CONTENOX-KV\\0\\1``, an 8-byte little-endian header length, the JSON header
(model/tokenizer digests, profile id, KV precision, token count and hash, the token ids and one
entry per state tensor), then the raw state bytes whose sha256 is in the header. A corrupt file,
or one made for another model, tokenizer, profile or precision, raises IncompatibleSnapshot.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from contenox.errors import IncompatibleSnapshot, InvalidRequest
from contenox.runtime_ov._ov_errors import translate_ov_error
from contenox.runtime_ov.store import InstalledModel

__all__ = ["SnapshotHeader", "SnapshotInfo", "StatefulKV", "token_hash"]

MAGIC = b"CONTENOX-KV\x00\x01"
_LEN_BYTES = 8


class StateEntry(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    dtype: str
    shape: list[int]
    offset: int
    nbytes: int


class SnapshotHeader(msgspec.Struct, frozen=True, kw_only=True):
    model_digest: str
    tokenizer_digest: str
    profile_id: str
    kv_precision: str
    token_count: int
    token_hash: str
    token_ids: list[int]
    states: list[StateEntry]
    payload_sha256: str


class SnapshotInfo(msgspec.Struct, frozen=True, kw_only=True):
    path: str
    bytes: int
    token_count: int
    ms: float
    """Time to save or restore (file I/O included)."""


def token_hash(ids: Sequence[int]) -> str:
    import numpy as np

    return hashlib.sha256(np.asarray(list(ids), dtype=np.int64).tobytes()).hexdigest()


class StatefulKV:
    """A stateful model for one token stream: feed ids, decode greedily, save/restore/fork its KV."""

    def __init__(self, model: InstalledModel, ir_dir: Path, device: str = "CPU", *, _compiled: Any = None) -> None:
        import openvino as ov

        self.model = model
        try:
            self._compiled = _compiled or ov.Core().compile_model(str(ir_dir / "openvino_model.xml"), device)
            self._request = self._compiled.create_infer_request()
        except RuntimeError as exc:
            raise translate_ov_error(exc, doing=f"compiling {model.name} for snapshots") from exc
        self.tokens: list[int] = []
        self._next: int | None = None

    def reset(self) -> None:
        self._request.reset_state()
        self.tokens = []
        self._next = None

    def feed(self, ids: Sequence[int]) -> int:
        """Append ``ids`` to the KV state; returns the greedy next token."""
        import numpy as np

        if not ids:
            raise InvalidRequest("nothing to feed")
        new = np.asarray([list(ids)], dtype=np.int64)
        start = len(self.tokens)
        inputs = {"input_ids": new, "attention_mask": np.ones((1, start + new.shape[1]), dtype=np.int64),
                  "position_ids": np.arange(start, start + new.shape[1], dtype=np.int64)[None],
                  "beam_idx": np.zeros(1, dtype=np.int32)}
        try:
            self._request.infer(inputs)
        except RuntimeError as exc:
            raise translate_ov_error(exc, doing="stateful inference") from exc
        logits = self._request.get_tensor("logits").data
        self.tokens.extend(int(t) for t in ids)
        self._next = int(logits[0, -1].argmax())
        return self._next

    def generate(self, ids: Sequence[int], max_new_tokens: int, stop_ids: Sequence[int] = ()) -> list[int]:
        """Feed ``ids`` then decode greedily; the last generated token is not fed."""
        out = [self.feed(ids)]
        while len(out) < max_new_tokens and out[-1] not in stop_ids:
            out.append(self.feed([out[-1]]))
        return out

    # -- snapshots ---------------------------------------------------------------------------
    def _header_for(self, states: list[StateEntry], payload_sha: str, precision: str) -> SnapshotHeader:
        profile = self.model.profile
        return SnapshotHeader(model_digest=profile.model_digest, tokenizer_digest=profile.tokenizer_digest,
                              profile_id=profile.id, kv_precision=precision, token_count=len(self.tokens),
                              token_hash=token_hash(self.tokens), token_ids=list(self.tokens), states=states,
                              payload_sha256=payload_sha)

    def save(self, path: Path) -> SnapshotInfo:
        """Write the KV of every token fed so far."""
        started = time.perf_counter()
        if not self.tokens:
            raise InvalidRequest("no tokens fed: nothing to snapshot")
        entries: list[StateEntry] = []
        blobs: list[bytes] = []
        offset = 0
        precision = ""
        for state in self._request.query_state():
            data = state.state.data
            blob = data.tobytes()
            precision = str(data.dtype)
            entries.append(StateEntry(name=state.name, dtype=str(data.dtype), shape=list(data.shape),
                                      offset=offset, nbytes=len(blob)))
            blobs.append(blob)
            offset += len(blob)
        payload = hashlib.sha256()
        for blob in blobs:
            payload.update(blob)
        header = msgspec.json.encode(self._header_for(entries, payload.hexdigest(), precision))
        tmp = path.with_name(path.name + ".tmp")
        with tmp.open("wb") as fh:
            fh.write(MAGIC + len(header).to_bytes(_LEN_BYTES, "little") + header)
            for blob in blobs:
                fh.write(blob)
        os.replace(tmp, path)
        return SnapshotInfo(path=str(path), bytes=path.stat().st_size, token_count=len(self.tokens),
                            ms=(time.perf_counter() - started) * 1000.0)

    def _check(self, header: SnapshotHeader, path: Path) -> None:
        profile = self.model.profile
        expected = {"model_digest": profile.model_digest, "tokenizer_digest": profile.tokenizer_digest,
                    "profile_id": profile.id}
        for field, value in expected.items():
            if getattr(header, field) != value:
                raise IncompatibleSnapshot(f"{path}: made for {field} {getattr(header, field)!r}, this model has "
                                           f"{value!r}", field=field)
        if header.token_count != len(header.token_ids) or token_hash(header.token_ids) != header.token_hash:
            raise IncompatibleSnapshot(f"{path}: token hash does not match its token ids", field="token_hash")

    def restore(self, path: Path) -> SnapshotInfo:
        """Replace this stream's KV by the snapshot's; ``tokens`` becomes the snapshot's token ids."""
        import numpy as np
        import openvino as ov

        started = time.perf_counter()
        header, payload = read_snapshot(path)
        self._check(header, path)
        states = {state.name: state for state in self._request.query_state()}
        if set(states) != {entry.name for entry in header.states}:
            raise IncompatibleSnapshot(f"{path}: its KV states do not match this model's", field="states")
        self.reset()
        try:
            for entry in header.states:
                current = states[entry.name].state
                mine = list(current.shape)
                if (len(entry.shape) != len(mine) or entry.shape[1:2] + entry.shape[3:] != mine[1:2] + mine[3:]
                        or entry.shape[2] != header.token_count):
                    raise IncompatibleSnapshot(f"{path}: state {entry.name} has shape {entry.shape}, this model's "
                                               f"is {mine} for {header.token_count} tokens", field="states")
                if np.dtype(entry.dtype) != current.data.dtype:
                    raise IncompatibleSnapshot(f"{path}: KV precision {entry.dtype}, this model's is "
                                               f"{current.data.dtype}", field="kv_precision")
                array = np.frombuffer(payload, dtype=np.dtype(entry.dtype), count=entry.nbytes //
                                      np.dtype(entry.dtype).itemsize, offset=entry.offset).reshape(entry.shape)
                states[entry.name].state = ov.Tensor(np.ascontiguousarray(array))
        except IncompatibleSnapshot:
            self.reset()
            raise
        except (RuntimeError, ValueError, TypeError) as exc:
            self.reset()
            raise IncompatibleSnapshot(f"{path}: cannot load its KV into {self.model.name}: "
                                       f"{translate_ov_error(exc, doing='set_state').message}") from exc
        self.tokens = list(header.token_ids)
        self._next = None
        return SnapshotInfo(path=str(path), bytes=path.stat().st_size, token_count=header.token_count,
                            ms=(time.perf_counter() - started) * 1000.0)

    def fork(self) -> StatefulKV:
        """A branch: a new stream on the same compiled model starting from this stream's KV."""
        import openvino as ov

        other = StatefulKV(self.model, Path(), _compiled=self._compiled)
        theirs = {state.name: state for state in other._request.query_state()}
        for state in self._request.query_state():
            theirs[state.name].state = ov.Tensor(state.state.data.copy())
        other.tokens = list(self.tokens)
        return other


def read_snapshot(path: Path) -> tuple[SnapshotHeader, bytes]:
    """Header and payload of a snapshot file; IncompatibleSnapshot when corrupt."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise IncompatibleSnapshot(f"{path}: cannot read snapshot ({exc.strerror})") from exc
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + _LEN_BYTES:
        raise IncompatibleSnapshot(f"{path}: not a Contenox KV snapshot")
    size = int.from_bytes(data[len(MAGIC):len(MAGIC) + _LEN_BYTES], "little")
    start = len(MAGIC) + _LEN_BYTES
    try:
        header = msgspec.json.decode(data[start:start + size], type=SnapshotHeader)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise IncompatibleSnapshot(f"{path}: corrupt snapshot header ({exc})") from exc
    payload = data[start + size:]
    if hashlib.sha256(payload).hexdigest() != header.payload_sha256:
        raise IncompatibleSnapshot(f"{path}: snapshot payload is corrupt (sha256 mismatch)", field="payload")
    if sum(entry.nbytes for entry in header.states) != len(payload):
        raise IncompatibleSnapshot(f"{path}: snapshot payload size does not match its header", field="payload")
    return header, payload
