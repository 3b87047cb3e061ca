"""Content digests that identify a model, its tokenizer and its chat template.

They go into the profile and every turn manifest: a change in any of them is a full cache miss.
GGUF headers are read by :mod:`contenox.runtime_ov.gguf_header` (no OpenVINO, much faster than
``gguf.GGUFReader``); IR directories are hashed by their files.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import msgspec

from contenox.errors import ProfileMismatch
from contenox.runtime_ov.gguf_header import gguf_metadata

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
