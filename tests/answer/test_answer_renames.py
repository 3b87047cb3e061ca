"""Carrying a rename to every use (``propagate_renames``) over an in-memory workspace with the real syntax-tree
renamer: a method's attribute uses follow in its package's importers, unless builtin types share its name."""

from __future__ import annotations

from contenox.answer.edits import Located, ProposedEdit, ProposedEdits, unified_diff
from contenox.answer.renames import keep_overwritten, propagate_renames
from contenox.workspace import rename_identifier

DURATION = ("class Duration:\n    def __init__(self, days=0):\n        self.days = days\n\n"
            "    # in days\n    def totimedelta(self):\n        return self.days\n\n"
            "    def items(self):\n        return [self.totimedelta()]\n")
FILES = {
    "src/isodate/duration.py": DURATION,
    "tests/test_duration.py": ("from isodate import Duration\n\n\ndef test_totimedelta():\n"
                               "    assert Duration(2).totimedelta() == 2 == len(Duration(2).items()) + 1\n"),
    "tools/report.py": "def show(row):\n    return row.totimedelta(), dict(row).items()\n",  # imports nothing
}


def _carry(old_line: str, new_line: str) -> ProposedEdits:
    new_text = DURATION.replace(old_line, new_line)
    edit = ProposedEdit(path="src/isodate/duration.py", old_text=DURATION, new_text=new_text,
                        diff=unified_diff("src/isodate/duration.py", DURATION, new_text), blocks=1)

    def locate(name: str) -> list[Located]:
        lines = DURATION.split("\n")
        return [("src/isodate/duration.py", n + 1, n + 2) for n, line in enumerate(lines)
                if line.strip().startswith(f"def {name}(")]

    def users(name: str) -> list[str]:
        return [path for path, text in FILES.items() if name in text]

    return propagate_renames(ProposedEdits(edits=(edit,), problems=(), notes=()), locate, users, FILES.get,
                             rename_identifier)


def test_a_renamed_method_follows_into_the_attribute_uses_of_its_package_s_importers() -> None:
    carried = _carry("def totimedelta(self):", "def to_timedelta(self):")
    texts = {edit.path: edit.new_text for edit in carried.edits}
    assert sorted(texts) == ["src/isodate/duration.py", "tests/test_duration.py"]
    assert "return [self.to_timedelta()]" in texts["src/isodate/duration.py"]
    assert "Duration(2).to_timedelta() == 2" in texts["tests/test_duration.py"]
    assert ("rename of `totimedelta` to `to_timedelta` carried to every use (a method: its `obj.totimedelta` uses in "
            "the files that import from `isodate`): 2 more place(s): src/isodate/duration.py (1), "
            "tests/test_duration.py (1)") in carried.notes
    assert any(note.startswith("rename of `totimedelta` not carried into tools/report.py") for note in carried.notes)


def test_a_method_named_like_a_builtin_s_is_not_followed_into_attribute_uses() -> None:
    carried = _carry("def items(self):", "def entries(self):")
    assert [edit.path for edit in carried.edits] == ["src/isodate/duration.py"]  # not len(...items()) in the test
    assert ("`items` is a method, and builtin types have a method of that name too: its attribute uses "
            "(`obj.items`) outside src/isodate/duration.py are left as they are") in carried.notes


def test_a_definition_renamed_where_the_question_asks_for_no_rename_is_left_as_written_and_said() -> None:
    """Asked to add a function next to another, the model overwrote the other's definition line: carried, the
    rename would make a consistent change (that passes the tests) without the function the user keeps."""
    new_text = DURATION.replace("def totimedelta(self):", "def to_timedelta(self):")
    edit = ProposedEdit(path="src/isodate/duration.py", old_text=DURATION, new_text=new_text,
                        diff=unified_diff("src/isodate/duration.py", DURATION, new_text), blocks=1)
    proposed = ProposedEdits(edits=(edit,))
    kept = propagate_renames(proposed, lambda name: [("src/isodate/duration.py", 6, 7)], lambda name: list(FILES),
                             FILES.get, rename_identifier, "Add to_timedelta next to totimedelta.")
    assert kept.edits == (edit,) and kept.notes == (
        "rename of `totimedelta` to `to_timedelta` left as written: the question asks for no rename (the change "
        "overwrites the line that defines `totimedelta`)",)
    carried = propagate_renames(proposed, lambda name: [("src/isodate/duration.py", 6, 7)] if name == "totimedelta"
                                else [], lambda name: list(FILES), FILES.get, rename_identifier,
                                "Rename totimedelta to to_timedelta.")
    assert "tests/test_duration.py" in {e.path for e in carried.edits}


TAX = ('from decimal import Decimal\n\nRATES = {"DE": Decimal("0.19")}\n\n\n@cached\ndef tax_for(region, amount):\n'
       '    """The tax owed."""\n    return amount * RATES[region]\n\n\ndef total(amount):\n    return amount\n')
RATE = 'def tax_rate(region):\n    """A region\'s rate."""\n    return RATES[region]\n'


def _overwritten(question: str, written: str = RATE) -> ProposedEdits:
    """tax.py with ``tax_for`` (and its decorator line) replaced by ``written``, as the 1.5B wrote it."""
    new_text = TAX.replace('@cached\ndef tax_for(region, amount):\n    """The tax owed."""\n'
                           '    return amount * RATES[region]\n', written)
    edit = ProposedEdit(path="tax.py", old_text=TAX, new_text=new_text, diff=unified_diff("tax.py", TAX, new_text),
                        blocks=1)

    def locate(name: str) -> list[Located]:
        lines = TAX.split("\n")
        return [("tax.py", n + 1, n + 3) for n, line in enumerate(lines) if line.startswith(f"def {name}(")]

    return keep_overwritten(ProposedEdits(edits=(edit,), problems=(), notes=()), locate, question)


def test_a_definition_the_question_asks_to_add_written_over_another_keeps_the_other() -> None:
    kept = _overwritten("Add a tax_rate(region) function next to tax_for that returns a region's rate.")
    (edit,) = kept.edits
    assert edit.new_text == TAX.replace("\n\n\ndef total(", "\n\n\n" + RATE + "\n\ndef total(")
    assert not [line for line in edit.diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert kept.notes == ("`tax_for` kept: the change wrote `tax_rate` over it, and the question asks to add "
                          "`tax_rate`, not to replace `tax_for`: `tax_rate` added after it",)


def test_a_kept_definition_at_the_file_s_end_is_spaced_from_the_added_one_as_the_file_spaces_it() -> None:
    last = TAX.split("\n\n\ndef total(")[0] + "\n"
    new_text = last.replace('@cached\ndef tax_for(region, amount):\n    """The tax owed."""\n'
                            '    return amount * RATES[region]\n', RATE)
    edit = ProposedEdit(path="tax.py", old_text=last, new_text=new_text, diff=unified_diff("tax.py", last, new_text),
                        blocks=1)
    kept = keep_overwritten(ProposedEdits(edits=(edit,)), lambda name: [("tax.py", 7, 9)] if name == "tax_for" else [],
                            "Add tax_rate(region) next to tax_for")
    assert kept.edits[0].new_text == last + "\n\n" + RATE


def test_an_overwrite_is_left_as_written_where_the_question_asks_a_rename_or_names_nothing_new() -> None:
    for question in ("Rename tax_for to tax_rate", "Clean up the tax module.",
                     "Replace tax_for with a tax_rate(region) function"):
        left = _overwritten(question)
        assert "-def tax_for" in left.edits[0].diff and not left.notes, question
    # the old definition written again by the change itself: nothing to keep
    both = _overwritten("Add tax_rate(region) next to tax_for", RATE + "\n\n@cached\ndef tax_for(region, amount):\n"
                        "    return amount * tax_rate(region)\n")
    assert not both.notes and "+    return amount * tax_rate(region)" in both.edits[0].diff


EXC = ('class BadData(Exception):\n    pass\n\n\nclass BadPayload(BadData):\n    """A bad payload."""\n\n\n'
       'class BadTime(BadData):\n    pass\n')
LARGE = 'class PayloadTooLarge(BadPayload):\n    """Too large."""\n'


def _exc(question: str, written: str, users: list[str]) -> ProposedEdits:
    new_text = EXC.replace('class BadPayload(BadData):\n    """A bad payload."""\n', written)
    edit = ProposedEdit(path="exc.py", old_text=EXC, new_text=new_text, diff=unified_diff("exc.py", EXC, new_text),
                        blocks=1)

    def locate(name: str) -> list[Located]:
        return [("exc.py", n + 1, n + 2) for n, line in enumerate(EXC.split("\n")) if line.startswith(f"class {name}(")]

    return keep_overwritten(ProposedEdits(edits=(edit,)), locate, question, lambda name: users)


def test_a_definition_written_over_one_still_used_keeps_it_though_the_question_does_not_name_it() -> None:
    question = "Refuse payloads past 1 MiB with a new PayloadTooLarge error, a kind of bad payload."
    kept = _exc(question, LARGE, ["exc.py"])  # the new class itself subclasses it
    assert kept.edits[0].new_text == EXC.replace("\n\n\nclass BadTime", "\n\n\n" + LARGE + "\n\nclass BadTime")
    assert kept.notes == ("`BadPayload` kept: the change wrote `PayloadTooLarge` over it, and the question asks to "
                          "add `PayloadTooLarge`, not to replace `BadPayload`, which is still used: `PayloadTooLarge` "
                          "added after it",)
    other = 'class PayloadTooLarge(BadData):\n    """Too large."""\n'
    assert _exc(question, other, ["exc.py", "__init__.py"]).notes  # the package still imports it
    left = _exc(question, other, ["exc.py"])  # used nowhere else, not named: the model's replacement stands
    assert not left.notes and "-class BadPayload(BadData):" in left.edits[0].diff
