"""Rewriting a GGUF file with its Q5_0 tensors requantised to Q8_0.

OpenVINO's GGUF reader (2026.4) refuses Q5_0 tensors (``gguf_tensor_to_f16 failed``) but reads
Q8_0. Q8_0 holds every Q5_0 value almost exactly (5-bit integers times one scale per 32-block,
re-expressed as 8-bit integers times a new scale), so the model's answers do not change in any
way that matters; the file grows by about 30%.

Everything else is copied unchanged: every key/value of the metadata (strings as raw bytes, so
nothing is re-encoded) and every other tensor's bytes. The output is written beside ``dst`` and
renamed into place, so ``dst`` either does not exist or is complete.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from contenox.errors import ModelSourceUnavailable, ProfileMismatch
from contenox.runtime_ov.gguf_header import ARRAY, STRING, GGUFHeader, GGUFTensor, read_gguf_header
from contenox.runtime_ov.progress import Progress

__all__ = ["requantize_q5_0_to_q8_0"]

log = logging.getLogger(__name__)


def _copy_metadata(gguf: Any, header: GGUFHeader, writer: Any) -> None:
    for key, field in header.fields.items():
        if key == gguf.Keys.General.ARCHITECTURE:  # the writer adds it first, itself
            continue
        value = field.value
        # strings go back as the exact bytes they came from
        if field.vtype == STRING:
            value = value.encode("utf-8", "surrogateescape")
        elif field.subtype == STRING:
            value = [item.encode("utf-8", "surrogateescape") for item in value]
        if field.vtype == ARRAY and not value:
            log.warning("dropping empty metadata array %s (GGUFWriter cannot write one)", key)
            continue
        writer.add_key_value(key, value, gguf.GGUFValueType(field.vtype),
                             sub_type=None if field.subtype is None else gguf.GGUFValueType(field.subtype))


def _byte_shape(gguf: Any, tensor: GGUFTensor, qtype: Any) -> tuple[int, ...]:
    """The tensor's shape in numpy order, its last axis in bytes of ``qtype`` blocks."""
    return tuple(gguf.quant_shape_to_byte_shape(tuple(reversed(tensor.dims)), qtype))


def requantize_q5_0_to_q8_0(src: Path, dst: Path, progress: Progress) -> int:
    """Write ``dst``: ``src`` with Q5_0 tensors requantised to Q8_0. Returns how many were converted."""
    import gguf
    import numpy as np

    progress.start(f"read {src.name}", None)
    try:
        header = read_gguf_header(src)
        arch = header.fields.get(gguf.Keys.General.ARCHITECTURE)
        if arch is None or arch.vtype != STRING:
            raise ModelSourceUnavailable(f"{src.name}: GGUF file has no general.architecture")
        types = [gguf.GGMLQuantizationType(t.ggml_type) for t in header.tensors]
    except (ProfileMismatch, ValueError) as exc:
        message = exc.message if isinstance(exc, ProfileMismatch) else f"{src.name}: {exc}"
        raise ModelSourceUnavailable(message) from exc
    finally:
        progress.finish()
    q5, q8 = gguf.GGMLQuantizationType.Q5_0, gguf.GGMLQuantizationType.Q8_0
    tmp = dst.with_name(f".{dst.name}.tmp-{os.getpid()}")
    writer = gguf.GGUFWriter(tmp, arch.value)
    writer.data_alignment = header.alignment
    converted = 0
    try:
        _copy_metadata(gguf, header, writer)
        plan: list[tuple[GGUFTensor, Any, tuple[int, ...]]] = []
        for tensor, qtype in zip(header.tensors, types, strict=True):
            src_shape = _byte_shape(gguf, tensor, qtype)
            out_type = q8 if qtype == q5 else qtype
            out_shape = _byte_shape(gguf, tensor, out_type)
            writer.add_tensor_info(tensor.name, out_shape, np.dtype(np.uint8), int(np.prod(out_shape)),
                                   raw_dtype=out_type)
            plan.append((tensor, qtype, src_shape))
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_ti_data_to_file()
        total = sum(int(np.prod(shape)) for _, _, shape in plan)
        progress.start("requantise Q5_0 -> Q8_0", total)
        for tensor, qtype, src_shape in plan:
            nbytes = int(np.prod(src_shape))
            data = header.tensor_bytes(tensor, nbytes).reshape(src_shape)
            if qtype == q5:
                data = gguf.quants.quantize(gguf.quants.dequantize(data, q5), q8)
                converted += 1
            writer.write_tensor_data(data)
            progress.advance(nbytes)
        writer.close()
        progress.finish()
        os.replace(tmp, dst)
    except BaseException:
        writer.close()
        tmp.unlink(missing_ok=True)
        progress.finish()
        raise
    log.info("requantised %d Q5_0 tensors of %s to Q8_0", converted, src.name)
    return converted
