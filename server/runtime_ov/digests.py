"""Content digests that identify a model, its tokenizer and its chat template.

They go into the profile and every turn manifest: a change in any of them is a full cache miss.
GGUF files are read with the ``gguf`` package (no OpenVINO needed); IR directories are hashed by
their files.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import msgspec

from contenox.errors import ProfileMismatch

__all__ = ["ModelDigests", "file_sha256", "model_digests"]

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


def _field_value(field: Any) -> Any:
    """The python value of a GGUFReader field (scalars, strings, arrays)."""
    import gguf

    parts = field.parts
    types = field.types
    if not types:
        return None
    if types[0] == gguf.GGUFValueType.ARRAY:
        if len(types) > 1 and types[1] == gguf.GGUFValueType.STRING:
            return [bytes(parts[i]).decode("utf-8", "surrogateescape") for i in field.data]
        return [_scalar(parts[i].tolist()) for i in field.data]
    if types[0] == gguf.GGUFValueType.STRING:
        return bytes(parts[field.data[0]]).decode("utf-8", "surrogateescape")
    return _scalar(parts[field.data[0]].tolist())


def _scalar(value: Any) -> Any:
    return value[0] if isinstance(value, list) and len(value) == 1 else value


def _gguf_digests(path: Path, model_digest: str) -> ModelDigests:
    import gguf

    try:
        reader = gguf.GGUFReader(str(path))
    except Exception as exc:  # gguf raises ValueError/struct.error/OSError on bad files
        raise ProfileMismatch(f"{path}: not a readable GGUF file ({exc})", path=str(path)) from exc
    tok = hashlib.sha256()
    template = ""
    context: int | None = None
    for name in sorted(reader.fields):
        field = reader.fields[name]
        if name == "tokenizer.chat_template":
            template = str(_field_value(field))
        elif name.startswith("tokenizer."):
            tok.update(name.encode())
            tok.update(msgspec.json.encode(_field_value(field)))
        elif name.endswith(".context_length"):
            context = int(_field_value(field))
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
