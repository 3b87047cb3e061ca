"""What the per-layer micro-benchmarks share (``contenox bench planner|workspace|retrieval``): the default model's
tokenizer from the configured models, figures in milliseconds with median / p90 / spread, and a copy of this
interpreter's standard library as the corpus."""

from __future__ import annotations

import shutil
import statistics
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

from contenox.config import Config

__all__ = ["MODEL", "copy_stdlib", "ms", "stats", "token_counter"]

MODEL = "smollm2-135m"
"""The tokenizer the micro-benchmarks count with (fast to load; the figures are about the layer, not the model)."""


def token_counter(config: Config) -> tuple[Callable[[str], int], str]:
    """Count tokens with :data:`MODEL`'s tokenizer when it is installed, else about four characters a token
    (named in the second value, which the reports record)."""
    from contenox.runtime_ov.store import ModelStore
    from contenox.runtime_ov.tokenizer import load_tokenizer

    try:
        model = ModelStore(config.models_dir).get(MODEL)
        encode = load_tokenizer(model.weights).encode
    except Exception as exc:  # no model: the figures stand, counted by characters
        print(f"tokenizer unavailable ({exc}); using chars/4", file=sys.stderr)
        return (lambda text: (len(text) + 3) // 4), "chars/4"

    def count(text: str, encode: Callable[[str], list[int]] = encode) -> int:
        return len(encode(text))

    return count, f"{MODEL} ({model.weights})"


def stats(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"median": statistics.median(ordered), "p90": ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))],
            "min": ordered[0], "max": ordered[-1], "n": len(ordered)}


def ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


def copy_stdlib(dest: Path) -> Path:
    """This interpreter's standard library (site-packages and bytecode left out), copied to ``dest``."""
    src = Path(sysconfig.get_paths()["stdlib"])
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("site-packages", "__pycache__", "*.pyc"),
                    symlinks=True)
    return dest
