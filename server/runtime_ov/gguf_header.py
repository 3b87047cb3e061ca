"""Reading a GGUF file's header: its key/values (with their types) and its tensor index.

``gguf.GGUFReader`` builds a numpy view for every string and takes 5-30 s on a 50k-150k token
vocabulary; this reads the same header with ``struct`` in well under a second. Tensor data is
left in the file: :meth:`GGUFHeader.tensor_bytes` maps one tensor's bytes when asked.
Little-endian GGUF v2/v3 only (what llama.cpp writes).
"""

from __future__ import annotations

import mmap
import struct
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from contenox.errors import ModelNotFound, ProfileMismatch

__all__ = ["ARRAY", "STRING", "GGUFField", "GGUFHeader", "GGUFTensor", "check_weights", "gguf_metadata",
           "read_gguf_header"]

# GGUF metadata value types -> struct format; 8 = string, 9 = array.
_SCALARS: dict[int, str] = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q",
                            12: "d"}
STRING, ARRAY = 8, 9
_DEFAULT_ALIGNMENT = 32


class GGUFField(NamedTuple):
    value: Any
    """str, int, float, bool, or a list of those (strings decoded with surrogateescape)."""
    vtype: int
    subtype: int | None = None
    """The element type of an array."""


class GGUFTensor(NamedTuple):
    name: str
    dims: tuple[int, ...]
    """ggml order: dims[0] is the row length (numpy order is reversed)."""
    ggml_type: int
    offset: int
    """From the start of the data section."""


class _Cursor:
    def __init__(self, data: memoryview) -> None:
        self.data = data
        self.pos = 0

    def scalar(self, fmt: str) -> Any:
        (value,) = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return value

    def string(self) -> str:
        length = self.scalar("Q")
        end = self.pos + length
        if end > len(self.data):
            raise ValueError("truncated string")
        raw = bytes(self.data[self.pos:end])
        self.pos = end
        return raw.decode("utf-8", "surrogateescape")

    def field(self) -> GGUFField:
        vtype = self.scalar("I")
        if vtype == STRING:
            return GGUFField(self.string(), vtype)
        if vtype != ARRAY:
            return GGUFField(self.scalar(_SCALARS[vtype]), vtype)
        subtype, count = self.scalar("I"), self.scalar("Q")
        if subtype == STRING:
            return GGUFField([self.string() for _ in range(count)], vtype, subtype)
        fmt = _SCALARS[subtype]
        end = self.pos + count * struct.calcsize(fmt)
        if end > len(self.data):
            raise ValueError("truncated array")
        values = list(struct.unpack_from(f"<{count}{fmt}", self.data, self.pos))
        self.pos = end
        return GGUFField(values, vtype, subtype)


class GGUFHeader(NamedTuple):
    path: Path
    version: int
    fields: dict[str, GGUFField]
    tensors: list[GGUFTensor]
    alignment: int
    data_offset: int

    def tensor_bytes(self, tensor: GGUFTensor, nbytes: int) -> np.ndarray[Any, np.dtype[np.uint8]]:
        """A read-only memory map of ``nbytes`` of ``tensor``'s data."""
        return np.memmap(self.path, dtype=np.uint8, mode="r", offset=self.data_offset + tensor.offset,
                         shape=(nbytes,))


def _parse(path: Path, data: memoryview) -> GGUFHeader:
    if bytes(data[:4]) != b"GGUF":
        raise ValueError("no GGUF magic")
    cur = _Cursor(data)
    cur.pos = 4
    version = cur.scalar("I")
    if version not in (2, 3):
        raise ValueError(f"unsupported GGUF version {version}")
    n_tensors, n_fields = cur.scalar("Q"), cur.scalar("Q")
    fields: dict[str, GGUFField] = {}
    for _ in range(n_fields):
        key = cur.string()
        fields[key] = cur.field()
    tensors = []
    for _ in range(n_tensors):
        name = cur.string()
        n_dims = cur.scalar("I")
        dims = tuple(cur.scalar("Q") for _ in range(n_dims))
        tensors.append(GGUFTensor(name, dims, cur.scalar("I"), cur.scalar("Q")))
    align = fields.get("general.alignment")
    alignment = int(align.value) if align is not None else _DEFAULT_ALIGNMENT
    if alignment <= 0 or alignment & (alignment - 1):
        raise ValueError(f"invalid alignment {alignment}")
    data_offset = -(-cur.pos // alignment) * alignment
    return GGUFHeader(path, version, fields, tensors, alignment, data_offset)


def read_gguf_header(path: Path) -> GGUFHeader:
    """The header of the GGUF file at ``path``; a ProfileMismatch if it is not one."""
    try:
        with path.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            view = memoryview(mm)
            try:
                return _parse(path, view)
            finally:
                view.release()
    except (ValueError, KeyError, struct.error, OSError) as exc:
        raise ProfileMismatch(f"{path}: not a readable GGUF file ({exc or type(exc).__name__})",
                              path=str(path)) from exc


def gguf_metadata(path: Path) -> dict[str, Any]:
    """Every key/value of a GGUF file's header (strings decoded, arrays as lists)."""
    return {key: field.value for key, field in read_gguf_header(path).fields.items()}


def _data_end(header: GGUFHeader) -> int:
    """Where the last tensor's data ends, from the tensor index and ggml's block sizes."""
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    end = header.data_offset
    for tensor in header.tensors:
        try:
            block, type_size = GGML_QUANT_SIZES[GGMLQuantizationType(tensor.ggml_type)]
        except (ValueError, KeyError) as exc:
            raise ProfileMismatch(f"{header.path}: tensor {tensor.name} has unknown ggml type {tensor.ggml_type}",
                                  path=str(header.path)) from exc
        elements = int(np.prod(tensor.dims, dtype=np.int64)) if tensor.dims else 1
        end = max(end, header.data_offset + tensor.offset + elements // block * type_size)
    return end


def check_weights(weights: Path) -> None:
    """Refuse weights OpenVINO would crash on: a GGUF whose header is unreadable or whose tensor data
    is cut short (OpenVINO's reader segfaults on a truncated file), an IR directory without its model.

    Cheap (header only): run before anything native opens the file.
    """
    if not weights.exists():
        raise ModelNotFound(f"model weights not found: {weights}", path=str(weights))
    if weights.is_dir():
        for name in ("openvino_model.xml", "openvino_model.bin"):
            if not (weights / name).is_file():
                raise ProfileMismatch(f"{weights}: IR directory without {name}", path=str(weights))
        return
    header = read_gguf_header(weights)
    size = weights.stat().st_size
    need = _data_end(header)
    if size < need:
        raise ProfileMismatch(
            f"{weights}: GGUF is truncated ({size} bytes, its tensors need {need}); pull the model again",
            path=str(weights), size=size, needed=need)
