"""Small but real model files the store tests build themselves: a GGUF and an OpenVINO IR."""

from __future__ import annotations

import json
from pathlib import Path

import gguf
import numpy as np

__all__ = ["build_gguf", "build_ir"]

TEMPLATE = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"


def build_gguf(path: Path, *, tokens: tuple[str, ...] = ("<unk>", "a", "b", "<|im_start|>"),
               template: str = TEMPLATE, context: int = 2048, seed: int = 0,
               alignment: int | None = None) -> dict[str, np.ndarray]:
    """Write a llama-architecture GGUF with one Q5_0 tensor, one Q8_0, one F32; returns the float originals."""
    rng = np.random.default_rng(seed)
    q5 = rng.standard_normal((8, 64)).astype(np.float32)
    q8 = rng.standard_normal((2, 32)).astype(np.float32)
    norm = rng.standard_normal(64).astype(np.float32)
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("tiny")
    if alignment is not None:
        writer.add_custom_alignment(alignment)
    writer.add_context_length(context)
    writer.add_uint32("llama.block_count", 1)
    writer.add_bool("tiny.flag", True)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(list(tokens))
    writer.add_token_scores([float(i) for i in range(len(tokens))])
    writer.add_bos_token_id(len(tokens) - 1)
    writer.add_chat_template(template)
    writer.add_tensor("blk.0.attn_q.weight", gguf.quants.quantize(q5, gguf.GGMLQuantizationType.Q5_0),
                      raw_dtype=gguf.GGMLQuantizationType.Q5_0)
    writer.add_tensor("blk.0.ffn_up.weight", gguf.quants.quantize(q8, gguf.GGMLQuantizationType.Q8_0),
                      raw_dtype=gguf.GGMLQuantizationType.Q8_0)
    writer.add_tensor("output_norm.weight", norm)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return {"blk.0.attn_q.weight": q5, "blk.0.ffn_up.weight": q8, "output_norm.weight": norm}


def build_ir(directory: Path, *, weights: int = 65536, seed: int = 0, template: str = TEMPLATE) -> dict[str, bytes]:
    """Write a real (tiny) OpenVINO IR repository; returns its files by name."""
    import openvino as ov
    import openvino.opset13 as ops

    directory.mkdir(parents=True, exist_ok=True)
    scale = np.random.default_rng(seed).standard_normal((1, weights)).astype(np.float32)
    x = ops.parameter([1, weights], np.float32, name="x")
    model = ov.Model([ops.relu(ops.multiply(x, ops.constant(scale)))], [x], "tiny")
    ov.save_model(model, str(directory / "openvino_model.xml"), compress_to_fp16=False)
    (directory / "config.json").write_text(json.dumps({"model_type": "tiny", "hidden_size": 4}))
    (directory / "tokenizer_config.json").write_text(json.dumps({"chat_template": template}))
    (directory / "README.md").write_text("# tiny\nA model repository built by the tests.\n")
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}
