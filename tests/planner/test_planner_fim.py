"""FIM prompts on the real SmolLM2 tokenizer: the format check, the cursor window, the working set, the layout."""

from __future__ import annotations

import msgspec

from contenox.planner.fim import (
    ContextEntry,
    FimTokens,
    WorkingSet,
    build_fim_prompt,
    cursor_window,
    fim_support,
    identifiers_near,
)
from contenox.runtime_ov.profile import FimFormat, Profile
from contenox.runtime_ov.tokenizer import Tokenizer

STARCODER_FIM = FimFormat(prefix="<fim_prefix>", suffix="<fim_suffix>", middle="<fim_middle>",
                          file_sep="<file_sep>", repo_name="<repo_name>", stops=["<|endoftext|>"])


def test_a_model_without_a_fim_format_has_completions_off_with_a_reason(profile: Profile,
                                                                         tokenizer: Tokenizer) -> None:
    support = fim_support(profile, tokenizer)
    assert not support.available and support.tokens is None
    assert support.reason is not None and "no fill-in-the-middle format" in support.reason


def test_markers_that_are_not_special_tokens_are_refused_by_name(profile: Profile, tokenizer: Tokenizer) -> None:
    # SmolLM2's GGUF has <file_sep> and <repo_name> as single tokens but no <fim_prefix>
    support = fim_support(msgspec.structs.replace(profile, fim=STARCODER_FIM), tokenizer)
    assert not support.available
    assert support.reason is not None and "'<fim_prefix>' is not one special token" in support.reason


def test_markers_that_are_special_tokens_give_their_ids(profile: Profile, tokenizer: Tokenizer) -> None:
    fim = FimFormat(prefix="<file_sep>", suffix="<repo_name>", middle="<|endoftext|>")
    support = fim_support(msgspec.structs.replace(profile, fim=fim), tokenizer)
    assert support.available and support.tokens is not None and not support.repo_level
    assert (support.tokens.prefix, support.tokens.suffix, support.tokens.middle) == (5, 3, 0)


def _count(tokenizer: Tokenizer):  # type: ignore[no-untyped-def]
    return lambda text: len(tokenizer.encode(text))


def test_the_window_starts_at_a_snapped_line_that_does_not_move_with_each_keystroke(tokenizer: Tokenizer) -> None:
    text = "\n".join(f"value_{i} = {i}" for i in range(200))
    windows = [cursor_window(text, line, 3, _count(tokenizer), prefix_tokens=4000, suffix_tokens=40)
               for line in range(100, 112)]
    assert {w.first_line for w in windows} == {32}  # (100 - 64) // 16 * 16
    assert windows[0].prefix.startswith("value_32 = 32\n") and windows[0].prefix.endswith("\nval")
    assert windows[0].line_prefix == "val" and windows[0].line_suffix == "ue_100 = 100"
    assert windows[0].suffix.startswith("ue_100 = 100\nvalue_101")
    assert sum(len(tokenizer.encode(line + "\n")) for line in windows[0].suffix.split("\n")[1:]) <= 40
    assert windows[0].cut_prefix_lines == 32 and windows[0].cut_suffix_lines > 0


def test_the_prefix_budget_moves_the_start_forward_in_steps(tokenizer: Tokenizer) -> None:
    text = "\n".join(f"value_{i} = {i}" for i in range(200))
    window = cursor_window(text, 150, 0, _count(tokenizer), prefix_tokens=100, suffix_tokens=10)
    assert len(tokenizer.encode(window.prefix)) <= 100
    assert window.first_line % 16 == 0 and window.first_line > 150 - 64


def test_identifiers_nearest_the_cursor_come_first() -> None:
    text = "import alpha\nfrom beta import gamma\n\ndef run():\n    x = gamma.go()\n    \n    return delta\n"
    window = cursor_window(text, 5, 4, len, prefix_tokens=1000, suffix_tokens=100)
    names = identifiers_near(window)
    assert names.index("gamma") < names.index("beta") < names.index("alpha")
    assert "delta" in names


def _entry(path: str, line: int, text: str, why: str = "uses x") -> ContextEntry:
    return ContextEntry(path=path, start_line=line, text=text, why=why)


def test_the_working_set_appends_while_it_fits_and_rebuilds_when_it_does_not(tokenizer: Tokenizer) -> None:
    ws = WorkingSet(60, _count(tokenizer))
    a, b = _entry("a.py", 1, "def a():\n    return 1"), _entry("b.py", 1, "def b():\n    return 2")
    assert ws.want([a]) == [] and ws.want([b]) == []
    assert [e.path for e in ws.entries] == ["a.py", "b.py"] and ws.rebuilds == 0
    ws.want([b, a])  # already there: the order (and so the cached prefix) stays
    assert [e.path for e in ws.entries] == ["a.py", "b.py"] and ws.rebuilds == 0
    huge = _entry("h.py", 1, "def h():\n" + "    x = 1\n" * 12)  # more than the whole budget
    assert ws.want([huge]) == ["h.py:1 (uses x)"]
    assert [e.path for e in ws.entries] == ["a.py", "b.py"] and ws.rebuilds == 1
    big = _entry("c.py", 1, "def c():\n" + "    x = 1\n" * 6)  # fits only without one of the others
    assert ws.want([big]) == []
    assert [e.path for e in ws.entries] == ["c.py", "a.py"] and ws.rebuilds == 2 and ws.tokens <= 60
    changed = _entry("a.py", 1, "def a():\n    return 100")
    ws.want([changed])
    assert ws.rebuilds == 3 and any(e.text.endswith("100") for e in ws.entries)


def test_the_prompt_puts_the_context_block_before_the_current_file(tokenizer: Tokenizer) -> None:
    tokens = FimTokens(prefix=101, suffix=102, middle=103, file_sep=5, repo_name=3, stops=(0,))
    window = cursor_window("def f():\n    \n", 1, 4, _count(tokenizer), prefix_tokens=100, suffix_tokens=100)
    ws = WorkingSet(500, _count(tokenizer))
    ws.want([_entry("lib.py", 3, "def helper():\n    return 1")])
    prompt = build_fim_prompt(tokens, tokenizer, window, "main.py", ws.entries, "demo", ws.render)
    ids = prompt.token_ids
    assert ids[0] == 3 and ids.count(5) == 2 and ids[-1] == 103
    assert ids.index(101) < ids.index(102) < ids.index(103)
    text = tokenizer.decode_raw(ids[:ids.index(101)])
    assert text == "<repo_name>demo\n<file_sep>lib.py\ndef helper():\n    return 1\n<file_sep>main.py\n"
    assert prompt.context_tokens == ids.index(101) and prompt.context_files == ("lib.py",)
    plain = build_fim_prompt(tokens, tokenizer, window, "main.py", [], "demo", ws.render)
    assert plain.context_tokens == 0 and plain.token_ids == ids[ids.index(101):]
