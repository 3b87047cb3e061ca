"""Model profiles: ``contenox-openvino.json`` beside each installed model.

A profile is what Contenox has *tested* for a model: the context the runtime may use is the
profile's ``max_tested_context``, not the architecture's maximum. Parsing is strict: an unknown or
malformed field is a :class:`ProfileError` naming the field.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import msgspec

from contenox.errors import ProfileError

__all__ = ["PROFILE_FILENAME", "FimFormat", "Profile", "decode_profile", "encode_profile", "read_profile", "write_profile"]

PROFILE_FILENAME = "contenox-openvino.json"

ModelFormat = Literal["openvino-ir", "gguf"]
KvPrecision = Literal["auto", "u8", "f16", "bf16"]
Device = Literal["CPU", "GPU", "NPU"]


class FimFormat(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The model's fill-in-the-middle markers: ``{prefix}before{suffix}after{middle}`` asks for the text between.

    Each marker must be one special token of the model's tokenizer (checked when the model loads).
    ``file_sep``/``repo_name``: the repo-level form, other files of the repository before the current one.
    """

    prefix: str
    suffix: str
    middle: str
    file_sep: str = ""
    repo_name: str = ""
    stops: list[str] = msgspec.field(default_factory=list)
    """Further special tokens that end a completion (besides the tokenizer's EOS)."""

    def markers(self) -> list[str]:
        return [m for m in (self.prefix, self.suffix, self.middle, self.file_sep, self.repo_name, *self.stops) if m]


class Profile(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    id: str
    family: str
    format: ModelFormat
    weights: str
    """File (gguf) or directory (IR) inside the model's directory."""
    default_context: int
    max_tested_context: int
    kv_precision: KvPrecision = "auto"
    sparse_attention: bool = False
    prefix_caching: bool = True
    cache_block_size: int = 32
    device_preference: list[Device] = msgspec.field(default_factory=lambda: ["CPU"])
    model_digest: str = ""
    tokenizer_digest: str = ""
    chat_template_digest: str = ""
    warning: str | None = None
    fim: FimFormat | None = None
    """Fill-in-the-middle format (None: the model has none; inline completions are off for it)."""

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", self.id):
            raise ProfileError(f"profile field 'id': {self.id!r} is not a lowercase model name", field="id")
        for name in ("default_context", "max_tested_context", "cache_block_size"):
            if getattr(self, name) <= 0:
                raise ProfileError(f"profile field {name!r}: must be > 0", field=name)
        if self.default_context > self.max_tested_context:
            raise ProfileError(
                "profile field 'default_context': larger than max_tested_context "
                f"({self.default_context} > {self.max_tested_context})",
                field="default_context",
            )
        for name in ("model_digest", "tokenizer_digest", "chat_template_digest"):
            value = getattr(self, name)
            if value and not re.fullmatch(r"[0-9a-f]{64}", value):
                raise ProfileError(f"profile field {name!r}: not a sha256 hex digest", field=name)
        if not self.device_preference:
            raise ProfileError("profile field 'device_preference': must name at least one device",
                               field="device_preference")


_FIELD_RE = re.compile(r"at `\$\.([A-Za-z0-9_]+)")
_NAMED_RE = re.compile(r"(?:unknown|missing required) field `([^`]+)`")


def _field_of(message: str) -> str | None:
    """The top-level field a msgspec validation message is about, if any."""
    match = _FIELD_RE.search(message) or _NAMED_RE.search(message)
    return match.group(1) if match else None


def decode_profile(data: bytes, *, source: str = "profile") -> Profile:
    """Parse profile JSON strictly; errors name the offending field (and ``source``)."""
    try:
        return msgspec.json.decode(data, type=Profile)
    except ProfileError as exc:  # a cross-field check in Profile.__post_init__
        raise ProfileError(f"{source}: {exc.message}", source=source, **exc.details) from exc
    except msgspec.ValidationError as exc:
        text = str(exc)
        field = _field_of(text)
        if field is None:
            raise ProfileError(f"{source}: not a profile ({text})", source=source, field=None) from exc
        raise ProfileError(f"{source}: profile field {field!r}: {text}", source=source, field=field) from exc
    except msgspec.DecodeError as exc:
        raise ProfileError(f"{source}: not valid JSON: {exc}", source=source, field=None) from exc


def encode_profile(profile: Profile) -> bytes:
    return msgspec.json.format(msgspec.json.encode(profile), indent=2) + b"\n"


def read_profile(model_dir: Path) -> Profile:
    path = model_dir / PROFILE_FILENAME
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise ProfileError(f"{path}: profile missing", path=str(path)) from exc
    return decode_profile(data, source=str(path))


def write_profile(model_dir: Path, profile: Profile) -> None:
    (model_dir / PROFILE_FILENAME).write_bytes(encode_profile(profile))
