"""Regenerate test/unit/explain.golden.json: an Explain JSON exactly as the node encodes it.

Run from the repository root with the dev environment: ``.venv/bin/python editors/vscode/scripts/golden-explain.py``.
The unit tests check that the extension's Explain guard accepts it and the panel renders every field.
"""

import json
import pathlib

from contenox.planner.explain import Citations, Explain, ExplainSegment, ExplainTotals
from contenox.planner.manifest import ChunkRecord

segments = (
    ExplainSegment(kind="system", tokens=120, cached=120, new=0),
    ExplainSegment(kind="repo_map", tokens=700, cached=700, new=0),
    ExplainSegment(kind="history", tokens=90, cached=90, new=0),
    ExplainSegment(kind="retrieved", tokens=240, cached=180, new=60, invalidated_by="new code for this question"),
    ExplainSegment(kind="user", tokens=40, cached=0, new=40, invalidated_by="new user turn"),
)
explain = Explain(
    workspace="/abs/root", turn=4, model="smollm2-135m", segments=segments,
    totals=ExplainTotals(tokens=1190, cached=1090, new=100, hit_pct=91.6),
    predicted_cached_tokens=1090, measured_recomputed_tokens=None, ttft_ms=388.4, context_size=8192,
    notes=("thread rebased: turns 1-3 summarised (2 kept in full)",
           "retrieved: 1 chunk(s) already in the thread, referenced (not repeated)",
           "tools: not advertised (this model is not certified for tool calls)"),
    retrieved=(
        ChunkRecord(id="itsdangerous/signer.py:120-168", name="Signer.unsign", tokens=60, status="new",
                    reasons=("defines Signer.unsign (mentioned)", "BM25 rank 2")),
        ChunkRecord(id="itsdangerous/signer.py:40-61", name="Signer.sign", tokens=180, status="in thread",
                    reasons=("caller of sign", "stack trace line 42")),
    ),
    citations=Citations(files_real=("itsdangerous/signer.py",), files_unknown=("itsdangerous/verify.py",),
                        symbols_real=("Signer.unsign",), symbols_unknown=("Signer.verify_fast",),
                        lines_unknown=("itsdangerous/signer.py:900",)),
)
out = pathlib.Path(__file__).resolve().parent.parent / "test" / "unit" / "explain.golden.json"
out.write_text(json.dumps(explain.to_json(), indent=2) + "\n")
print(out)
