"""One-token changes of a line (mutation testing's operators), code only: strings, templates and comments kept."""

from __future__ import annotations

from contenox.verify.mutate import mutants


def _said(line: str, path: str) -> list[str]:
    return [m.said for m in mutants(line, path)]


def test_a_boundary_comparison_gets_its_other_side() -> None:
    [mutant] = mutants("    if item.quantity > BULK_THRESHOLD:", "src/shop/cart.py")
    assert mutant.line == "    if item.quantity >= BULK_THRESHOLD:" and mutant.said == "`>` to `>=`"
    assert [m.line for m in mutants("  if (n <= max) {", "lib/a.js")] == ["  if (n < max) {"]


def test_python_tokens_in_order_and_nothing_inside_strings_comments_or_floats() -> None:
    line = "    x = 'a < b' if a == b and flag is True else 1.5  # > 3"
    assert _said(line, "a.py") == ["`==` to `!=`", "`and` to `or`", "`True` to `False`"]
    assert _said("    return round(price, 2)", "a.py") == ["`2` to `3`", "`2` to `1`"]
    assert _said("    offset = 0", "a.py") == ["`0` to `1`"]  # no negative constant made of 0
    # a line that opens a bracket it does not close is read as far as it goes
    assert _said("    total = combine(a > 1,", "a.py") == ["`>` to `>=`", "`1` to `2`", "`1` to `0`"]


def test_javascript_operators_and_constants_but_not_shifts_arrows_strings_or_templates() -> None:
    line = "  if (a.length >= 0 && b !== 'x<') { // 3 > 2"
    assert _said(line, "lib/a.js") == ["`>=` to `>`", "`0` to `1`", "`&&` to `||`", "`!==` to `===`"]
    assert _said("const f = (a, b) => a << 2 ? true : arr[10]", "lib/f.js") == [
        "`2` to `3`", "`2` to `1`", "`true` to `false`", "`10` to `11`", "`10` to `9`"]
    assert mutants("    ret = `>=${M}.${m}.0 <${+M + 1}.0.0-0`", "classes/range.js") == []
    assert mutants("    name = other_name", "a.py") == []


def test_a_word_the_question_writes_as_a_literal_replaces_a_string_literal_of_its_kind() -> None:
    """A trial's user said "It should use NFKD" and no candidate in 88 wrote it: the question's literal words
    (quoted, in backticks, in capitals, letters with digits) each replace a one-word string literal of their kind
    on a line the failing run ran; other string literals are left alone as before."""
    from contenox.verify.mutate import literal_words

    named = literal_words("slugify drops accented letters. It should use NFKD. Fix it, see `sha256` and 'utf-8'.")
    assert named == ("NFKD", "sha256", "utf-8")
    line = '    return unicodedata.normalize("NFC", text).encode(b"ascii", "ignore")'
    assert [m.line for m in mutants(line, "slug.py", ("NFKD",))] == [line.replace('"NFC"', '"NFKD"')]
    assert mutants(line, "slug.py", ("NFKD",))[0].said == '`"NFC"` to `"NFKD"` (the question\'s word)'
    assert [m.said for m in mutants(line, "slug.py", ("utf-8",))] == [
        '`b"ascii"` to `b"utf-8"` (the question\'s word)', '`"ignore"` to `"utf-8"` (the question\'s word)']
    assert mutants(line, "slug.py") == []  # no word named: strings are left alone
    assert mutants('    key = f"NFC{x}"', "a.py", ("NFKD",)) == []  # an f-string's text is code
    assert [m.line for m in mutants("  return s.normalize('NFC') // 'NFC'", "lib/slug.js", ("NFKD",))] == [
        "  return s.normalize('NFKD') // 'NFC'"]
    assert literal_words("Fix it. I think the cache is wrong.") == ()
