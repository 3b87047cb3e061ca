"""The thread as an append-only log: retrieved code and diffs are entered once, and the next turn of the
thread starts with the previous turn's ids (real SmolLM2 tokenizer and chat template)."""

from __future__ import annotations

from contenox.planner import Chunk, render_explain, render_markdown
from contenox.planner.prompts import load_prompts
from contenox.planner.thread import diff_delta, split_diff
from support.cache_mirror import MirroredPlanner
from support.planner_samples import sample_inputs

A = Chunk(id="bank/accounts.py:8-11", path="bank/accounts.py", start_line=8, end_line=11, name="Account.deposit",
          text="class Account:\n    ...\n    def deposit(self, amount: int) -> None:\n        if amount <= 0:\n"
               "            raise ValueError(\"amount must be positive\")\n        self.balance += amount",
          reasons=("defines deposit (mentioned)",))
B = Chunk(id="bank/transfer.py:4-6", path="bank/transfer.py", start_line=4, end_line=6, name="transfer",
          text="def transfer(src: Account, dst: Account, amount: int) -> None:\n    src.balance -= amount\n"
               "    dst.deposit(amount)", reasons=("BM25 rank 1", "caller of Account.deposit"))
C = Chunk(id="tests/test_transfer.py:10-14", path="tests/test_transfer.py", start_line=10, end_line=14,
          name="test_overdraft", text="def test_overdraft():\n    a, b = Account('a', 50), Account('b')\n"
                                      "    transfer(a, b, 100)\n    assert a.balance == 0",
          reasons=("stack trace line 13",))

GIT_DIFF = ("diff --git a/bank/transfer.py b/bank/transfer.py\n--- a/bank/transfer.py\n+++ b/bank/transfer.py\n"
            "@@ -4,2 +4,3 @@\n def transfer(src, dst, amount):\n+    # TODO: check the balance\n"
            "     src.balance -= amount\n"
            "diff --git a/bank/accounts.py b/bank/accounts.py\n--- a/bank/accounts.py\n+++ b/bank/accounts.py\n"
            "@@ -1,1 +1,1 @@\n-\"\"\"Accounts.\"\"\"\n+\"\"\"Bank accounts.\"\"\"\n")


def _turn(**changes: object):
    return sample_inputs(diff=GIT_DIFF, **changes)


def test_ids_equal_the_template_rendering_with_retrieved_code_and_a_selection(make_planner, tokenizer):
    planner = make_planner()
    plan = planner.plan(_turn(retrieved=(A, B), selection="    src.balance -= amount\n"))
    assert plan.token_ids == tokenizer.encode(tokenizer.apply_chat_template(plan.messages))
    entry = plan.messages[-1]["content"]
    assert entry.startswith("# Current diff\n```diff\ndiff --git a/bank/transfer.py")
    assert ("\n\n# Code for this question (retrieved from the workspace)\n\n## bank/accounts.py:8-11 "
            "(Account.deposit)\n```python\nclass Account:") in entry
    # what is known before the question first: the diff, the failing run, then the question's code
    assert (entry.index("# Current diff") < entry.index("# Terminal output") < entry.index("# Code for this question")
            < entry.index("# Selected code"))
    assert entry.endswith("\n\nWhy does test_transfer fail when the amount is larger than the balance?\n\n"
                          + load_prompts().answer)
    assert plan.user == entry  # what the thread records is exactly what was sent
    chunks = plan.manifest.chunks
    assert [(c.id, c.status, c.reasons) for c in chunks] == [
        (A.id, "new", A.reasons), (B.id, "new", B.reasons)]
    assert all(c.tokens > 0 for c in chunks)
    assert plan.manifest.segment("retrieved").tokens == sum(c.tokens for c in chunks) + len(
        tokenizer.encode("\n\n# Code for this question (retrieved from the workspace)"))


def test_next_turn_starts_with_the_last_turns_ids_and_references_chunks_it_holds(make_planner, tokenizer):
    planner = make_planner()
    first = planner.plan(_turn(retrieved=(A, B), selection="    src.balance -= amount\n"))
    answer = "`transfer` in bank/transfer.py:4 never checks `src.balance`."
    planner.record(first, None, answer_text=answer)
    second = planner.plan(_turn(user="And the test?", retrieved=(A, C, B), terminal=""))
    assert second.token_ids == tokenizer.encode(tokenizer.apply_chat_template(second.messages))
    # append-only: the whole first turn (its entry, exactly as sent) leads the second turn's history
    first_entry_end = first.manifest.segment("user").token_end - len(tokenizer.encode(planner.frame.generation))
    assert second.token_ids[:first_entry_end] == first.token_ids[:first_entry_end]
    assert second.messages[1] == {"role": "user", "content": first.user}
    assert second.messages[2] == {"role": "assistant", "content": answer}
    # only the chunk the thread lacks is entered; the others are named, not repeated
    entry = second.messages[-1]["content"]
    assert entry.count("```python") == 1 and "## tests/test_transfer.py:10-14 (test_overdraft)" in entry
    assert "# Also relevant, shown earlier in this thread\n- bank/accounts.py:8-11 (Account.deposit)\n" \
           "- bank/transfer.py:4-6 (transfer)" in entry
    assert [(c.id, c.status) for c in second.manifest.chunks] == [(A.id, "in thread"), (C.id, "new"),
                                                                  (B.id, "in thread")]
    assert second.manifest.segment("retrieved").note == "2 chunk(s) already in the thread, referenced (not repeated)"
    # the diff the thread already holds is not repeated either
    assert "# Current diff" not in entry
    assert "2 file(s) unchanged since an earlier turn of this thread" in second.manifest.segment("diff").note
    explain = planner.preview(second)
    table = render_explain(explain)
    assert "tests/test_transfer.py:10-14 test_overdraft" in table and "[new]  stack trace line 13" in table
    assert "bank/accounts.py:8-11 Account.deposit  cached  [in thread]  defines deposit (mentioned)" in table
    assert "| `bank/transfer.py:4-6` transfer | 0 | in thread | BM25 rank 1; caller of Account.deposit |" in (
        render_markdown(explain))


def test_a_chunk_whose_code_changed_is_entered_again(make_planner):
    planner = make_planner()
    planner.record(planner.plan(_turn(retrieved=(A,))), None, answer_text="ok")
    edited = Chunk(**{**{f: getattr(A, f) for f in A.__struct_fields__},
                      "text": A.text.replace("amount <= 0", "amount < 1")})
    plan = planner.plan(_turn(user="again?", retrieved=(edited,)))
    assert [(c.id, c.status) for c in plan.manifest.chunks] == [(A.id, "new")]
    assert "amount < 1" in plan.messages[-1]["content"]


def test_chunks_of_summarised_turns_are_entered_again(make_planner):
    planner = make_planner(max_history_turns=2)
    for n in range(3):
        planner.record(planner.plan(_turn(user=f"q{n}", retrieved=(A,) if n == 0 else ())), None, f"a{n}")
    plan = planner.plan(_turn(user="and deposit?", retrieved=(A,)))
    assert any(note.startswith("thread rebased") for note in plan.manifest.notes)
    assert [(c.id, c.status) for c in plan.manifest.chunks] == [(A.id, "new")]  # its turn left the thread


def test_a_chunk_whose_turn_budget_fitting_summarised_is_entered_again_not_referenced(make_planner):
    planner = make_planner(profile_changes={"max_tested_context": 1400, "default_context": 1024},
                           output_reserve=200)
    first = planner.plan(sample_inputs(user="question " + "word " * 250, retrieved=(A,), terminal="", diff=""))
    planner.record(first, None, answer_text="answer " + "text " * 250)
    log = "\n".join(f"line {i}: step {i} ok" for i in range(40)) + "\nFAILED test_deposit"
    plan = planner.plan(sample_inputs(user="and deposit?", retrieved=(A,), terminal=log, diff=""))
    manifest = plan.manifest
    assert manifest.total_tokens <= 1200
    assert manifest.segment("history").note == "1 older turn(s) summarised to fit the context (thread rebased)"
    # the turn that entered A is out of the prompt: A comes again, in full, instead of a reference to nothing
    assert [(c.id, c.status) for c in manifest.chunks] == [(A.id, "new")]
    assert manifest.segment("retrieved").note == ("1 chunk(s) entered again: the turns that held them were "
                                                  "summarised to fit the context")
    entry = plan.messages[-1]["content"]
    assert "raise ValueError(\"amount must be positive\")" in entry and "shown earlier in this thread" not in entry
    # and the next turn, which finds that turn summarised, does not count its chunks as held
    planner.record(plan, None, answer_text="ok")
    assert plan.entry.base == 1


def test_diff_delta_shows_changed_files_and_names_reverted_ones() -> None:
    files = split_diff(GIT_DIFF)
    assert [path for path, _ in files] == ["bank/transfer.py", "bank/accounts.py"]
    text, shown, notes = diff_delta(GIT_DIFF, {})
    assert text == "\n".join(patch for _, patch in files) and notes == []
    seen = dict(shown)
    edited = GIT_DIFF.replace("# TODO: check the balance", "if amount > src.balance: raise ValueError")
    only_transfer = edited.split("diff --git a/bank/accounts.py")[0]
    text, shown, notes = diff_delta(only_transfer, seen)
    assert text.startswith("diff --git a/bank/transfer.py") and "if amount > src.balance" in text
    assert text.endswith("# no longer changed (committed or reverted): bank/accounts.py")
    seen.update(dict(shown))
    assert seen["bank/accounts.py"] == ""
    text, shown, notes = diff_delta(only_transfer, seen)
    assert text == "" and notes == ["1 file(s) unchanged since an earlier turn of this thread, not repeated: "
                                    "bank/transfer.py"]


def test_the_turn_before_a_rebase_hands_out_the_rebased_prefix_to_warm(make_planner):
    planner = make_planner(max_history_turns=2)
    warm = []
    plans = []
    for n in range(4):
        plan = planner.plan(sample_inputs(user=f"q{n}", diff="", terminal=""))
        plans.append(plan)
        planner.record(plan, None, answer_text=f"a{n}")
        warm.append(planner.next_prefix(plan))
    # 3 turns recorded and a limit of 2: the 4th turn rebases, so the 3rd hands out what the 4th starts with
    assert warm[:2] == [None, None] and warm[2] is not None
    fourth = plans[3]
    assert any(note.startswith("thread rebased") for note in fourth.manifest.notes)
    assert fourth.token_ids[:len(warm[2])] == warm[2]
    assert len(warm[2]) == fourth.manifest.segment("history").token_end


def test_map_delta_shows_what_the_thread_has_not_seen_and_files_back_to_the_base() -> None:
    from contenox.planner.map_base import MapChange
    from contenox.planner.thread import map_delta

    a = MapChange(path="a.py", added=("def f(x, y)",), removed=("def f(x)",))
    b = MapChange(path="b.py", added=("def g()",), removed=())
    text, shown = map_delta([a, b], {})
    assert text == "a.py:\n+ def f(x, y)\n- def f(x)\nb.py:\n+ def g()"
    seen = dict(shown)
    text, shown = map_delta([a], seen)  # b.py is back to the base map; a.py was already shown
    assert text == "back to the map above: b.py" and dict(shown) == {"b.py": ""}


class _MergingTokenizer:
    """The real SmolLM2 tokenizer plus one merge across a part boundary, as Qwen2.5's tokenizer has: a code
    fence followed by a blank line becomes one token (Qwen encodes "```" + "\\n\\n## x" differently whole)."""

    MERGED = 49151

    def __init__(self, real) -> None:  # type: ignore[no-untyped-def]
        self.real = real
        self.chat_template = real.chat_template
        self.pair = real.encode("```") + real.encode("\n\n## x")[:2]  # the fence, then the blank line before "#"

    def apply_chat_template(self, messages, *, add_generation_prompt=True):  # type: ignore[no-untyped-def]
        return self.real.apply_chat_template(messages, add_generation_prompt=add_generation_prompt)

    def encode(self, text: str) -> list[int]:
        ids = self.real.encode(text)
        pair = self.pair
        out: list[int] = []
        i = 0
        while i < len(ids):
            if ids[i:i + len(pair)] == pair:
                out.append(self.MERGED)
                i += len(pair)
            else:
                out.append(ids[i])
                i += 1
        return out


def test_history_tokenizes_an_entry_in_the_parts_it_was_sent_in(tokenizer, profile, tmp_path):
    """Regression: with Qwen's tokenizer the history re-tokenized the last entry as one string, which merged
    across its part boundaries, so the whole previous turn missed the prefix cache (22% instead of ~60%)."""
    from contenox.config import PlannerConfig

    merging = _MergingTokenizer(tokenizer)
    assert merging.encode("```\n\n## x") != merging.encode("```") + merging.encode("\n\n## x")
    planner = MirroredPlanner(merging, profile, PlannerConfig(), tmp_path / "state", backend_version="test")
    first = planner.plan(_turn(retrieved=(A, B)))
    planner.record(first, None, answer_text="ok")
    second = planner.plan(_turn(user="and then?", retrieved=(A, B)))
    entry_end = first.manifest.segment("user").token_end - len(merging.encode(planner.frame.generation))
    assert second.token_ids[:entry_end] == first.token_ids[:entry_end]


def test_memory_keeps_summarised_turns_as_their_summary_and_plans_exactly_as_from_the_full_journal(make_planner):
    """The planner's records are bounded per thread (issue #16, the node's RSS grew with every turn): summarised
    turns keep their summary line only, manifests only the thread's last; a turn planned from those equals a
    turn planned by a new planner that read the full journal."""
    from contenox.planner import Journal
    from contenox.planner.thread import summary_line, thread_view

    planner = make_planner(max_history_turns=2)
    long_answer = "The balance is checked nowhere.\n" + "More detail. " * 200
    for n in range(7):
        thread = "panel" if n % 3 else "cli"
        plan = planner.plan(_turn(user=f"q{n} " + "why? " * 100, thread=thread, retrieved=(A, B) if n % 2 else (C,)))
        planner.record(plan, None, answer_text=f"a{n}: {long_answer}")
    full = Journal(planner.state_dir).load()
    kept = planner._records
    assert [(r.turn, r.thread) for r in kept] == [(r.turn, r.thread) for r in full]
    panel = [r for r in kept if r.thread == "panel"]
    base = panel[-1].entry.base
    assert base > 0  # the panel thread was rebased: its first turns are summaries now
    assert all(len(r.user) <= 200 and not r.entry.parts and not r.entry.chunks for r in panel[:base])
    assert [summary_line(r) for r in panel[:base]] == [summary_line(r) for r in full if r.thread == "panel"][:base]
    assert [r.manifest is not None for r in kept] == [r is kept[-1] or r is panel[-1] or r is [
        x for x in kept if x.thread == "cli"][-1] for r in kept]
    assert [r.explain is not None for r in kept] == [False] * (len(kept) - 1) + [True]
    count = planner.tokens.count
    for thread in ("panel", "cli"):
        assert thread_view([r for r in kept if r.thread == thread], max_turns=2, max_tokens=0, count=count) == \
            thread_view([r for r in full if r.thread == thread], max_turns=2, max_tokens=0, count=count)
    nxt = _turn(user="and now?", thread="panel", retrieved=(A,))
    reread = make_planner(max_history_turns=2)  # the same state dir: reads (and slims) the journal
    assert reread.plan(nxt).token_ids == planner.plan(nxt).token_ids
