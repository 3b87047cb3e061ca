"""The pieces of a verified turn that need no model: when a turn verifies, and the prose an offered answer keeps."""

from __future__ import annotations

from contenox.answer.edits import ProposedEdit, ProposedEdits
from contenox.node.verifying import asks_for_change, strip_edit_blocks

EDIT = ProposedEdits(edits=(ProposedEdit(path="a.py", old_text="x = 1\n", new_text="x = 2\n", diff="d", blocks=1),))


def test_when_a_turn_verifies() -> None:
    assert asks_for_change("How is the cache keyed?", EDIT)  # the answer proposes a change
    for question in ("Fix the parser.", "Rename foo to bar", "Where is the bug?", "test_x fails: why?",
                     "Importing it crashes with the trace below", "Give me the diff.", "It returns the wrong day."):
        assert asks_for_change(question, ProposedEdits()), question
    for question in ("How is the cache keyed?", "Walk me through the modules involved.", "Which key signs values?"):
        assert not asks_for_change(question, ProposedEdits()), question


def test_the_prose_without_its_edit_blocks() -> None:
    answer = ("The check uses only the newest key.\n\nsrc/signer.py\n```python\n<<<<<<< SEARCH\n"
              "        for k in self.keys[-1:]:\n=======\n        for k in reversed(self.keys):\n>>>>>>> REPLACE\n"
              "```\n\nOld keys verify again.\n\nREADME.md\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n")
    assert strip_edit_blocks(answer) == "The check uses only the newest key.\n\nOld keys verify again."
    assert strip_edit_blocks("No change needed.") == "No change needed."
