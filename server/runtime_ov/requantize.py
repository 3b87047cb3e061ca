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

from contenox.errors import ModelSourceUnavailable
from contenox.runtime_ov.sources import Progress

__all__ = ["requantize_q5_0_to_q8_0"]

log = logging.getLogger(__name__)


def _field_value(gguf: Any, field: Any) -> tuple[Any, Any, Any]:
    """(value, type, sub_type) of a reader field, strings kept as raw bytes."""
    main = field.types[0]
    if main == gguf.GGUFValueType.ARRAY:
        sub = field.types[-1]
        if sub == gguf.GGUFValueType.STRING:
            return [bytes(field.parts[i]) for i in field.data], main, sub
        return field.contents(), main, sub
    if main == gguf.GGUFValueType.STRING:
        return bytes(field.parts[field.data[0]]), main, None
    return field.contents(), main, None


def _copy_metadata(gguf: Any, reader: Any, writer: Any) -> None:
    for field in reader.fields.values():
        # GGUF.* are the reader's virtual fields; the writer adds general.architecture itself.
        if field.name.startswith("GGUF.") or field.name == gguf.Keys.General.ARCHITECTURE:
            continue
        value, vtype, sub = _field_value(gguf, field)
        if vtype == gguf.GGUFValueType.ARRAY and len(value) == 0:
            log.warning("dropping empty metadata array %s (GGUFWriter cannot write one)", field.name)
            continue
        writer.add_key_value(field.name, value, vtype, sub_type=sub)


def _architecture(gguf: Any, reader: Any) -> str:
    field = reader.fields.get(gguf.Keys.General.ARCHITECTURE)
    if field is None:
        raise ModelSourceUnavailable("GGUF file has no general.architecture")
    return bytes(field.parts[field.data[0]]).decode("utf-8")


def requantize_q5_0_to_q8_0(src: Path, dst: Path, progress: Progress) -> int:
    """Write ``dst``: ``src`` with Q5_0 tensors requantised to Q8_0. Returns how many were converted."""
    import gguf
    import numpy as np

    progress.start(f"read {src.name}", None)  # GGUFReader takes ~20 s on a 150k-token vocabulary
    try:
        reader = gguf.GGUFReader(str(src))
    except (ValueError, OSError) as exc:
        raise ModelSourceUnavailable(f"{src.name}: not a readable GGUF file ({exc})") from exc
    finally:
        progress.finish()
    q5, q8 = gguf.GGMLQuantizationType.Q5_0, gguf.GGMLQuantizationType.Q8_0
    tmp = dst.with_name(f".{dst.name}.tmp-{os.getpid()}")
    writer = gguf.GGUFWriter(tmp, _architecture(gguf, reader), endianess=reader.endianess)
    writer.data_alignment = reader.alignment
    converted = 0
    try:
        _copy_metadata(gguf, reader, writer)
        planned: list[tuple[Any, bool]] = []
        for tensor in reader.tensors:
            convert = tensor.tensor_type == q5
            if convert:
                # the logical shape in numpy order; Q8_0 bytes per row follow from it
                rows = gguf.quant_shape_from_byte_shape(tensor.data.shape, q5)
                byte_shape = gguf.quant_shape_to_byte_shape(rows, q8)
                nbytes = int(np.prod(byte_shape))
                writer.add_tensor_info(tensor.name, byte_shape, np.dtype(np.uint8), nbytes, raw_dtype=q8)
            else:
                writer.add_tensor_info(tensor.name, tensor.data.shape, tensor.data.dtype, tensor.data.nbytes,
                                       raw_dtype=tensor.tensor_type)
            planned.append((tensor, convert))
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_ti_data_to_file()
        progress.start("requantise Q5_0 -> Q8_0", sum(int(t.n_bytes) for t, _ in planned))
        for tensor, convert in planned:
            data = tensor.data
            if convert:
                data = gguf.quants.quantize(gguf.quants.dequantize(data, q5), q8)
                converted += 1
            writer.write_tensor_data(data, tensor_endianess=reader.endianess)
            progress.advance(int(tensor.n_bytes))
        writer.close()
        progress.finish()
        os.replace(tmp, dst)
    except BaseException:
        writer.close()
        tmp.unlink(missing_ok=True)
        raise
    log.info("requantised %d Q5_0 tensors of %s to Q8_0", converted, src.name)
    return converted
