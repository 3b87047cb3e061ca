"""Where an inline completion ends: line, block, the code after the cursor, the line cap."""

from __future__ import annotations

from contenox.answer.fim_trim import MAX_LINES, trim_completion


def test_code_after_the_cursor_on_its_line_keeps_the_completion_to_that_line() -> None:
    cut = trim_completion("len(items)\n    return n", line_prefix="    n = ", line_suffix=")", suffix=")\n")
    assert (cut.text, cut.ended) == ("len(items)", "line")
    growing = trim_completion("len(ite", line_prefix="    n = ", line_suffix=")", suffix=")\n")
    assert (growing.text, growing.ended) == ("len(ite", None)


def test_a_body_ends_where_a_line_leaves_the_cursors_block() -> None:
    cut = trim_completion("total = a + b\n    return total\n\ndef sub(a, b):\n", line_prefix="    ",
                          line_suffix="", suffix="")
    assert (cut.text, cut.ended) == ("total = a + b\n    return total", "block")


def test_after_a_line_that_opens_a_block_the_body_is_kept_and_the_next_sibling_is_not() -> None:
    cut = trim_completion("\n    x = a\n    return x\n\ndef sub", line_prefix="def add(a, b):", line_suffix="",
                          suffix="", final=True)
    assert (cut.text, cut.ended) == ("\n    x = a\n    return x", "block")
    braces = trim_completion("\n  return 1;\n}\nint g() {\n", line_prefix="int f() {", line_suffix="", suffix="")
    assert (braces.text, braces.ended) == ("\n  return 1;\n}", "block")


def test_a_completion_that_runs_into_the_code_after_the_cursor_stops_before_it() -> None:
    cut = trim_completion("x = 1\n    y = 2\n    return y\n", line_prefix="    ", line_suffix="",
                          suffix="\n    return y\n")
    assert (cut.text, cut.ended) == ("x = 1\n    y = 2", "suffix")


def test_a_top_level_group_ends_at_a_blank_line_and_long_ones_at_the_cap() -> None:
    cut = trim_completion("import os\nimport sys\n\nprint(1)\n", line_prefix="", line_suffix="", suffix="")
    assert (cut.text, cut.ended) == ("import os\nimport sys", "block")
    many = "".join(f"x{i} = {i}\n    " for i in range(30))
    capped = trim_completion(many, line_prefix="    ", line_suffix="", suffix="")
    assert capped.ended == "lines" and capped.text.count("\n") == MAX_LINES - 1


def test_a_growing_last_line_is_shown_until_it_is_complete() -> None:
    cut = trim_completion("x = compute(\n    a, b", line_prefix="    ", line_suffix="", suffix="")
    assert (cut.text, cut.ended) == ("x = compute(\n    a, b", None)
