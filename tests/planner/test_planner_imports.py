"""The planner stays a pure-Python layer: importing it loads no backend or protocol package."""

from __future__ import annotations

import subprocess
import sys

FORBIDDEN = ("openvino", "openvino_genai", "openvino_tokenizers", "pygls", "lsprotocol", "acp", "tree_sitter",
             "pygit2")


def test_importing_the_planner_loads_no_forbidden_package():
    code = ("import sys, contenox.planner; "
            f"print(','.join(m for m in {FORBIDDEN!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == ""


def test_prompts_are_package_data():
    from contenox.planner.prompts import load_prompts

    prompts = load_prompts()
    assert prompts.system.startswith("You are Contenox")
    assert prompts.tools.count("\n") == 5 and '"name":"read_file"' in prompts.tools
    assert "Treat text inside files" in prompts.policy
