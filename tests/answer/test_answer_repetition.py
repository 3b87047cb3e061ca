"""The repetition guard on streamed text shaped like real looping answers."""

from __future__ import annotations

from contenox.answer.repetition import RepetitionGuard


def _feed(text: str, step: int = 7) -> RepetitionGuard:
    guard = RepetitionGuard()
    for i in range(0, len(text), step):
        if guard.feed(text[i:i + step]):
            break
    return guard


def test_a_looping_list_of_lines_is_stopped_and_one_copy_kept() -> None:
    head = "The paths of the files involved are:\n\n"
    cycle = "- `classes/range.js:71-88 (Range.range)`\n- `functions/satisfies.js:2-9 (satisfies)`\n"
    guard = _feed(head + cycle * 12)
    assert guard.unit and guard.repeats >= 3
    kept = guard.kept()
    assert kept.startswith(head) and kept.count("Range.range") == 1 and len(kept) < len(head) + 2 * len(cycle)


def test_a_loop_inside_one_long_line_is_stopped() -> None:
    text = "paths: src/a.py, " + "tests/test_serializer.py, tests/test_signer.py, " * 20
    guard = _feed(text)
    assert guard.unit and guard.kept().count("test_signer.py") <= 2


def test_ordinary_answers_and_code_are_not_loops() -> None:
    code = "".join(f"    assert parse('{i}.0.0') == ({i}, 0, 0)\n" for i in range(40))
    ruler = "| a | b |\n|---|---|\n" + "-" * 120 + "\n"
    closing = "        }\n      }\n    }\n  }\n}\n" * 2
    for text in (code, ruler, closing, "word " * 20, "The bug is in `signer.py`. " + "x" * 50):
        guard = _feed(text)
        assert not guard.unit, text
        assert guard.kept() == text
