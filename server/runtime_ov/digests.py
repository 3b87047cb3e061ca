"""Content digests that identify a model, its tokenizer and its chat template.

They go into the profile and every turn manifest: a change in any of them is a full cache miss.
GGUF headers are read here directly (no OpenVINO, and much faster than ``gguf.GGUFReader`` on
large vocabularies); IR directories are hashed by their files.
"""

from __future__ import annotations

import hashlib
import mmap
import struct
from pathlib import Path
from typing import Any

import msgspec

from contenox.errors import ProfileMismatch

__all__ = ["ModelDigests", "file_sha256", "gguf_metadata", "model_digests"]

_CHUNK = 1 << 20


class ModelDigests(msgspec.Struct, frozen=True, kw_only=True):
    model_digest: str
    tokenizer_digest: str
    chat_template_digest: str
    context_length: int | None = None


def file_sha256(path: Path, progress: Any = None) -> str:
    """Streaming sha256 of a file; ``progress(n)`` is called with each chunk's size."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
            if progress is not None:
                progress(len(chunk))
    return digest.hexdigest()


# GGUF metadata value types -> (struct format, size); 8 = string, 9 = array.
_SCALARS: dict[int, tuple[str, int]] = {0: ("<B", 1), 1: ("<b", 1), 2: ("<H", 2), 3: ("<h", 2), 4: ("<I", 4),
                                        5: ("<i", 4), 6: ("<f", 4), 7: ("<?", 1), 10: ("<Q", 8), 11: ("<q", 8),
                                        12: ("<d", 8)}
_STRING, _ARRAY = 8, 9


class _MetadataReader:
    """Reads only the key/value header of a little-endian GGUF v2/v3 file.

    ``gguf.GGUFReader`` builds a numpy view per string and takes seconds on a 150k-token
    vocabulary; this reads the same values in a fraction of that.
    """

    def __init__(self, data: memoryview) -> None:
        self.data = data
        self.pos = 0

    def scalar(self, fmt: str, size: int) -> Any:
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return value

    def string(self) -> str:
        length = self.scalar("<Q", 8)
        raw = bytes(self.data[self.pos:self.pos + length])
        if len(raw) != length:
            raise ValueError("truncated string")
        self.pos += length
        return raw.decode("utf-8", "surrogateescape")

    def value(self, vtype: int) -> Any:
        if vtype == _STRING:
            return self.string()
        if vtype == _ARRAY:
            itype, count = self.scalar("<I", 4), self.scalar("<Q", 8)
            if itype == _STRING:
                return [self.string() for _ in range(count)]
            fmt, size = _SCALARS[itype]
            end = self.pos + count * size
            if end > len(self.data):
                raise ValueError("truncated array")
            values = list(struct.unpack_from(f"<{count}{fmt[1]}", self.data, self.pos))
            self.pos = end
            return values
        return self.scalar(*_SCALARS[vtype])

    def fields(self) -> dict[str, Any]:
        if bytes(self.data[:4]) != b"GGUF":
            raise ValueError("no GGUF magic")
        self.pos = 4
        version = self.scalar("<I", 4)
        if version not in (2, 3):
            raise ValueError(f"unsupported GGUF version {version}")
        self.scalar("<Q", 8)  # tensor count
        count = self.scalar("<Q", 8)
        out: dict[str, Any] = {}
        for _ in range(count):
            key = self.string()
            out[key] = self.value(self.scalar("<I", 4))
        return out


def gguf_metadata(path: Path) -> dict[str, Any]:
    """Every key/value of a GGUF file's header (strings decoded, arrays as lists)."""
    try:
        with path.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            view = memoryview(mm)
            try:
                return _MetadataReader(view).fields()
            finally:
                view.release()
    except (ValueError, KeyError, struct.error, OSError) as exc:
        raise ProfileMismatch(f"{path}: not a readable GGUF file ({exc or type(exc).__name__})",
                              path=str(path)) from exc


def _gguf_digests(path: Path, model_digest: str) -> ModelDigests:
    fields = gguf_metadata(path)
    tok = hashlib.sha256()
    template = ""
    context: int | None = None
    for name in sorted(fields):
        value = fields[name]
        if name == "tokenizer.chat_template":
            template = str(value)
        elif name.startswith("tokenizer."):
            tok.update(name.encode())
            tok.update(msgspec.json.encode(value))
        elif name.endswith(".context_length"):
            context = int(value)
    return ModelDigests(
        model_digest=model_digest,
        tokenizer_digest=tok.hexdigest(),
        chat_template_digest=hashlib.sha256(template.encode()).hexdigest(),
        context_length=context,
    )


def _tree_digest(directory: Path, names: list[str]) -> str:
    digest = hashlib.sha256()
    for name in sorted(names):
        path = directory / name
        if path.is_file():
            digest.update(name.encode() + b"\0" + file_sha256(path).encode())
    return digest.hexdigest()


def _ir_digests(directory: Path) -> ModelDigests:
    files = sorted(p.name for p in directory.iterdir() if p.is_file())
    model = [n for n in files if n.startswith("openvino_model.")]
    if not model:
        raise ProfileMismatch(f"{directory}: no openvino_model.xml in the IR directory", path=str(directory))
    tokenizer = [n for n in files if n.startswith(("openvino_tokenizer.", "openvino_detokenizer."))]
    template = ""
    config = directory / "tokenizer_config.json"
    if config.is_file():
        try:
            data = msgspec.json.decode(config.read_bytes())
        except msgspec.DecodeError as exc:
            raise ProfileMismatch(f"{config}: not valid JSON ({exc})", path=str(config)) from exc
        if isinstance(data, dict):
            template = str(data.get("chat_template") or "")
    if not template and (directory / "chat_template.jinja").is_file():
        template = (directory / "chat_template.jinja").read_text(encoding="utf-8")
    return ModelDigests(
        model_digest=_tree_digest(directory, model),
        tokenizer_digest=_tree_digest(directory, tokenizer),
        chat_template_digest=hashlib.sha256(template.encode()).hexdigest(),
        context_length=_ir_context(directory),
    )


def _ir_context(directory: Path) -> int | None:
    """``max_position_embeddings`` from the repository's config.json, when there is one."""
    path = directory / "config.json"
    if not path.is_file():
        return None
    try:
        data = msgspec.json.decode(path.read_bytes())
    except msgspec.DecodeError:
        return None
    value = data.get("max_position_embeddings") if isinstance(data, dict) else None
    return value if isinstance(value, int) and value > 0 else None


def model_digests(weights: Path, *, model_digest: str | None = None) -> ModelDigests:
    """Digests of a GGUF file or an OpenVINO IR directory.

    ``model_digest`` may be passed when the file's sha256 is already known (just verified).
    """
    if weights.is_dir():
        return _ir_digests(weights)
    return _gguf_digests(weights, model_digest or file_sha256(weights))
