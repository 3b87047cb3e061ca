"""The layout rule of anticipated context: anticipated chunks first, byte for byte, while the question uses one."""

from __future__ import annotations

from contenox.planner.anticipate import layout_retrieved
from contenox.planner.explain import AnticipatedContext
from contenox.planner.inputs import Chunk


def chunk(cid: str, text: str = "", reason: str = "") -> Chunk:
    path, lines = cid.rsplit(":", 1)
    start, end = (int(n) for n in lines.split("-"))
    return Chunk(id=cid, path=path, start_line=start, end_line=end, name=cid, text=text or f"code of {cid}",
                 reasons=(reason,) if reason else ())


def test_anticipated_chunks_come_first_up_to_the_last_one_the_question_uses() -> None:
    a, b, c, d = chunk("a.py:1-5"), chunk("b.py:1-5"), chunk("c.py:1-5"), chunk("d.py:1-5")
    x = chunk("x.py:1-9")
    question = [x, chunk("c.py:1-5", reason="mentioned"), chunk("a.py:1-5", reason="selected")]
    laid, record = layout_retrieved(question, [a, b, c, d], place="a.py:3")
    assert [ch.id for ch in laid] == ["a.py:1-5", "b.py:1-5", "c.py:1-5", "x.py:1-9"]
    assert record is not None
    assert record.chunks == ("a.py:1-5", "b.py:1-5", "c.py:1-5")
    assert record.used == ("a.py:1-5", "c.py:1-5") and record.kept == ("b.py:1-5",) and record.dropped == ("d.py:1-5",)
    # the question's reasons are kept and the layout says why each chunk sits where it does
    assert laid[0].reasons == ("selected", "anticipated") and laid[2].reasons == ("mentioned", "anticipated")
    assert laid[1].reasons[-1].startswith("anticipated (the question did not choose it")
    # laid out again (a question after an anticipation that carried it over): said once
    assert layout_retrieved(question, laid, place="a.py:3")[0][1].reasons == laid[1].reasons
    assert [ch.text for ch in laid[:3]] == [a.text, b.text, c.text]  # byte for byte what was prefilled


def test_a_changed_chunk_is_not_the_anticipated_one() -> None:
    old = chunk("a.py:1-5", "def f():\n    return 1")
    new = chunk("a.py:1-5", "def f():\n    return 2")
    laid, record = layout_retrieved([new], [old])
    assert laid == [new]
    assert record is not None and record.chunks == () and record.dropped == ("a.py:1-5",)


def test_nothing_anticipated_leaves_the_question_as_it_came() -> None:
    question = [chunk("x.py:1-2"), chunk("y.py:1-2")]
    assert layout_retrieved(question, []) == (question, None)


def test_the_explain_line_names_anticipated_cached_and_new_tokens() -> None:
    used = AnticipatedContext(place="a.py:3", state="warm", retrieved_tokens=2940, anticipated_tokens=2610,
                              cached_tokens=2600, new_tokens=340, used=4, kept=1, dropped=2)
    assert used.summary().startswith("retrieved: 2,940 tokens, 2,610 anticipated (2,600 cached), 340 new")
    assert "1 it did not choose kept for the cache" in used.summary() and "2 left out" in used.summary()
    unused = AnticipatedContext(place="a.py:3", state="warm", retrieved_tokens=900, anticipated_tokens=0,
                                cached_tokens=0, new_tokens=900, used=0, kept=0, dropped=5)
    assert "not used" in unused.summary() and "5 chunk(s)" in unused.summary()


def test_a_question_about_the_place_adds_its_own_code_up_to_the_cap() -> None:
    a, b, c = chunk("a.py:1-5"), chunk("b.py:1-5"), chunk("c.py:1-5")
    x, y, z = chunk("x.py:1-9", "x" * 40), chunk("y.py:1-9", "y" * 400), chunk("z.py:1-9", "z" * 30)
    question = [x, chunk("a.py:1-5", reason="selected"), y, z]
    laid, record = layout_retrieved(question, [a, b, c], place="a.py:3", count=lambda ch: len(ch.text),
                                    new_tokens=100)
    # every anticipated chunk (cached: context, not prefill), then the question's own best first within 100 tokens
    assert [ch.id for ch in laid] == ["a.py:1-5", "b.py:1-5", "c.py:1-5", "x.py:1-9", "z.py:1-9"]
    assert record is not None and record.left_out == ("y.py:1-9",) and record.new_tokens == 100
    assert record.used == ("a.py:1-5",) and record.kept == ("b.py:1-5", "c.py:1-5") and record.dropped == ()
    # a question about something else is not capped: its own retrieval as it came
    other = [x, y, z]
    assert layout_retrieved(other, [a, b, c], count=lambda ch: len(ch.text), new_tokens=100)[0] == other


def test_the_explain_line_names_what_the_cap_left_out() -> None:
    line = AnticipatedContext(place="a.py:3", state="warm", retrieved_tokens=2500, anticipated_tokens=2000,
                              cached_tokens=1984, new_tokens=516, used=3, kept=2, dropped=0, left_out=4,
                              new_cap=512).summary()
    assert "4 of the question's own chunk(s) left out" in line and "at most 512 tokens" in line


def test_a_question_about_the_place_adds_only_the_code_it_points_at() -> None:
    a, b = chunk("a.py:1-5"), chunk("b.py:1-5")
    named = chunk("x.py:1-9", "x" * 40, reason="defines parse (mentioned)")
    ranked = chunk("y.py:1-9", "y" * 30, reason="BM25 rank 2")
    frame = chunk("z.py:1-9", "z" * 30, reason="stack trace line 4")
    question = [ranked, chunk("a.py:1-5", reason="selected"), named, frame]
    laid, record = layout_retrieved(question, [a, b], place="a.py:3", count=lambda ch: len(ch.text),
                                    new_tokens=512, pointed=lambda ch: not ch.reasons[0].startswith("BM25"))
    assert [ch.id for ch in laid] == ["a.py:1-5", "b.py:1-5", "x.py:1-9", "z.py:1-9"]
    assert record is not None and record.unpointed == ("y.py:1-9",) and record.left_out == ()
    # without the rule the ranked chunk is added too (best first, within the cap)
    laid, record = layout_retrieved(question, [a, b], place="a.py:3", count=lambda ch: len(ch.text),
                                    new_tokens=512)
    assert [ch.id for ch in laid] == ["a.py:1-5", "b.py:1-5", "y.py:1-9", "x.py:1-9", "z.py:1-9"]
    assert record is not None and record.unpointed == ()
    # a question about something else keeps all of its own retrieval, pointed at or not
    other = [ranked, named]
    assert layout_retrieved(other, [a, b], count=lambda ch: len(ch.text), new_tokens=512,
                            pointed=lambda ch: False)[0] == other


def test_the_explain_line_names_what_the_question_did_not_point_at() -> None:
    line = AnticipatedContext(place="a.py:3", state="warm", retrieved_tokens=2100, anticipated_tokens=2000,
                              cached_tokens=2000, new_tokens=100, used=3, kept=2, dropped=0, unpointed=5,
                              new_cap=512).summary()
    assert "5 of the question's own chunk(s) it does not point at left out" in line


def test_only_the_computed_anticipated_chunks_are_laid_out_as_anticipated() -> None:
    a, b, c, d, e = (chunk(f"{n}.py:1-5", n * 20) for n in "abcde")
    named = chunk("x.py:1-9", "x" * 30, reason="defines parse (mentioned)")
    near = chunk("y.py:1-9", "y" * 10)  # only ranked near the place
    # the anticipation computed a and b; the question chose a, d and c (in that order), names x, ranks y
    question = [a, d, chunk("c.py:1-5", "c" * 20, reason="defines c (mentioned)"), named, near]
    laid, record = layout_retrieved(question, [a, b, c, d, e], place="a.py:3", count=lambda ch: len(ch.text),
                                    new_tokens=35, pointed=lambda ch: "mentioned" in "".join(ch.reasons),
                                    computed=2)
    # a and b come first (cached); then what the question chose of the rest, in the anticipation's order, beyond
    # the cap and the pointed rule (the place's code: the anticipation does not hold it); then its own within the cap
    assert [ch.id for ch in laid] == ["a.py:1-5", "b.py:1-5", "c.py:1-5", "d.py:1-5", "x.py:1-9"]
    assert laid[2].reasons == ("defines c (mentioned)",)  # the question's chunk, not called anticipated
    assert record is not None and record.chunks == ("a.py:1-5", "b.py:1-5") and record.used == ("a.py:1-5",)
    assert record.uncomputed == ("c.py:1-5", "d.py:1-5", "e.py:1-5")
    assert record.uncomputed_kept == ("c.py:1-5", "d.py:1-5")  # e: not chosen, it would cost prefill for nothing
    assert record.unpointed == ("y.py:1-9",) and record.left_out == () and record.dropped == ()
    laid, record = layout_retrieved(question, [a, b, c, d, e], count=lambda ch: len(ch.text), new_tokens=20,
                                    pointed=lambda ch: "mentioned" in "".join(ch.reasons), computed=2)
    assert record is not None and record.left_out == ("x.py:1-9",)  # the cap binds the question's own


def test_an_anticipation_cut_short_before_its_code_leaves_the_question_as_it_came() -> None:
    a, b = chunk("a.py:1-5"), chunk("b.py:1-5")
    question = [b, chunk("y.py:1-2")]
    laid, record = layout_retrieved(question, [a, b], place="a.py:3", count=lambda ch: 10, new_tokens=5,
                                    computed=0)
    assert laid == question  # no cap either: the question is not served by the anticipation
    assert record is not None and record.chunks == () and record.uncomputed == ("a.py:1-5", "b.py:1-5")
    line = AnticipatedContext(place="a.py:3", state="computing", retrieved_tokens=300, anticipated_tokens=0,
                              cached_tokens=0, new_tokens=300, used=0, kept=0, dropped=0, uncomputed=2).summary()
    assert line.startswith("anticipated context at a.py:3 (computing) not used: 2 anticipated chunk(s) not "
                           "computed yet") and "chose none" not in line


def test_the_explain_line_names_the_anticipated_chunks_not_computed_in_time() -> None:
    line = AnticipatedContext(place="a.py:3", state="computing", retrieved_tokens=1200, anticipated_tokens=800,
                              cached_tokens=800, new_tokens=400, used=2, kept=1, dropped=0, uncomputed=3,
                              uncomputed_kept=2).summary()
    assert "3 anticipated chunk(s) not computed yet when the question came: the 2 it chose kept, the rest left " \
        "out" in line


def test_a_new_anticipation_keeps_first_the_run_of_the_previous_ones_code_that_saves_it_the_most() -> None:
    from contenox.planner.anticipate import carried_over

    a, b, c, d = (chunk(f"{n}.py:1-5", n * size) for n, size in zip("abcd", (100, 30, 200, 50), strict=True))
    count = lambda ch: len(ch.text)  # noqa: E731
    y = chunk("y.py:1-5", "y" * 80)
    # the new retrieval chose a, c and d in its own order, and y; b (30) sits between a and c (200): worth keeping
    assert [ch.id for ch in carried_over([y, c, d, a], [a, b, c, d], count)] == ["a.py:1-5", "b.py:1-5", "c.py:1-5",
                                                                                  "d.py:1-5"]
    # a long unchosen chunk before a short chosen one is not worth it: the run ends before it
    big = chunk("b.py:1-5", "b" * 500)
    assert [ch.id for ch in carried_over([a, c], [a, big, c], count)] == ["a.py:1-5"]
    # nothing the new retrieval chose leads: nothing is carried; nothing computed: nothing either
    assert carried_over([y], [a, b], count) == [] and carried_over([a], [], count) == []
    # a chunk whose code changed since is not the computed one
    assert carried_over([chunk("a.py:1-5", "new code")], [a], count) == []
