"""The in-view eval's parts that need no node: where the user looks for a task, and the summary of its runs."""

from __future__ import annotations

from pathlib import Path

from contenox.eval.in_view import InView, Place, elsewhere, place_of, typing
from contenox.eval.report import TaskResult, summarize
from contenox.eval.tasks import Selection, Task


def _task(**kw: object) -> Task:
    base: dict[str, object] = {"id": "t", "repo": "r", "commit": "v1", "ask": "Why?", "kind": "bug_localization",
                               "must_cite_files": ("pkg/a.py",), "must_cite_symbols": ("Signer.verify",)}
    return Task(**{**base, **kw})  # type: ignore[arg-type]


def test_the_place_is_the_definition_of_the_first_must_cite_symbol(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("import os\n\n\nclass Signer:\n    def sign(self):\n        pass\n\n"
                                           "    def verify(self, value):\n        return value\n")
    assert place_of(_task(), tmp_path).line == 8
    assert place_of(_task(must_cite_symbols=("nowhere",)), tmp_path).line == 1
    selected = _task(selection=Selection(path="pkg/a.py", start_line=5, end_line=6))
    assert (place_of(selected, tmp_path).path, place_of(selected, tmp_path).line) == ("pkg/a.py", 5)


def test_moved_starts_at_another_source_file_of_the_workspace(tmp_path: Path) -> None:
    for path in ("pkg/a.py", "pkg/b.py", "pkg/__init__.py", "tests/test_a.py", ".venv/x.py", "docs/conf.txt"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x = 1\n")
    place = Place(path="pkg/a.py", line=3)
    assert elsewhere(_task(), tmp_path, place) == Place(path="pkg/__init__.py", line=1)
    only = _task(must_cite_files=("pkg/a.py", "pkg/__init__.py", "pkg/b.py"))
    assert elsewhere(only, tmp_path, place) is None  # tests, hidden folders and other languages are not a place


def _result(view: InView, wall: float = 60.0) -> TaskResult:
    return TaskResult(id="t", repo="r", kind="bug_localization", mode="anticipated", must_files=("a.py",),
                      files_in_prompt=("a.py",), recall=1.0, chunks=3, prompt_tokens=4000, cached_tokens=3000,
                      segment_tokens={}, wall_s=wall, in_view=view)


def test_the_summary_counts_what_was_anticipated_used_and_wasted() -> None:
    used = {"used": 3, "retrieved_tokens": 3000, "anticipated_tokens": 2000, "cached_tokens": 1984, "uncomputed": 2}
    unused = {"used": 0, "retrieved_tokens": 1000, "anticipated_tokens": 0, "cached_tokens": 0}
    summary = summarize("anticipated", [
        _result(InView(place="a.py:3", ttft_client_ms=900.0, warm_before_question=True, anticipated=used,
                       prefilled_tokens=2500, completion_ms=300.0)),
        _result(InView(place="a.py:9", ttft_client_ms=5000.0, anticipated=unused, prefilled_tokens=1500)),
        _result(InView(place="b.py:1", ttft_client_ms=700.0)),
    ]).in_view
    assert summary is not None
    assert summary["ttft_client_ms_median"] == 900.0 and summary["completions"] == 1
    assert summary["warm_before_question"] == 1 and summary["anticipation_not_used"] == 1
    assert summary["anticipation_missing"] == 1
    assert summary["anticipated_share"] == round(2000 / 4000, 4) and summary["anticipated_uncomputed_chunks"] == 2
    assert summary["prefilled_tokens"] == 4000 and summary["prefilled_tokens_per_minute"] == round(4000 / 3, 1)
    assert summary["prefilled_unused_share"] == round(1 - 1984 / 4000, 4)


def test_typing_reports_a_draft_at_each_clause_pause_and_sends_the_question_as_its_last_character_is_typed() -> None:
    drafts, sent_at = typing("Why does it fail? Fix it, please.", cps=5.0, pause_s=1.0)
    # 'Why does it fail?' (17 characters) typed by 3.4 s, the draft sent 0.6 s into the pause; 'Fix it,' (25) after
    # the first pause by 6.0 s; the last clause's end is the question's end: sent, never reported as a draft
    assert drafts == [(4.0, "Why does it fail?"), (6.6, "Why does it fail? Fix it,")]
    assert sent_at == round(33 / 5.0 + 2 * 1.0, 3)
    assert typing("a.b, c", cps=5.0, pause_s=0.5) == ([], 1.7)  # no space after '.': no pause; 0.5 s < the debounce
