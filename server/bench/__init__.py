"""contenox.bench: the local-node benchmark report (``contenox bench``).

A top-level tool like the CLI: it drives the planner and the engine, and beside them a bare
OpenVINO pipeline (:mod:`contenox.runtime_ov.reference`; nothing here imports openvino) and, when
installed, llama.cpp through llama-cpp-python. See bench/README.md for the figures.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from contenox.config import Config

__all__ = ["run_bench"]


def run_bench(config: Config, args: argparse.Namespace) -> int:
    """Entry point of ``contenox bench``: ``args.bench_args`` is the rest of the command line."""
    from contenox.bench.runner import main

    return main(config, list(getattr(args, "bench_args", []) or []))
