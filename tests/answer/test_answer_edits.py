"""Edit blocks in an answer, resolved against real file text into diffs that ``git apply`` takes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from contenox.answer.blocks import parse_edit_blocks
from contenox.answer.edits import unified_diff
from contenox.answer.resolve import propose_edits

SIGNER = '''class Signer:
    def validate(self, value):
        for secret_key in self.secret_keys[-1:]:
            if self.verify(secret_key, value):
                return True
        return False
'''
FILES = {"src/pkg/signer.py": SIGNER, "src/pkg/util.py": "def twice(x):\n    return x * 3\n",
         "README.md": "no trailing newline"}


def _propose(answer: str, files: dict[str, str] = FILES):
    return propose_edits(answer, files.get, files)


def _git_apply(tmp_path: Path, files: dict[str, str], diff: str) -> dict[str, str]:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    done = subprocess.run(["git", "apply", "-"], cwd=tmp_path, input=diff, text=True, capture_output=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    return {rel: (tmp_path / rel).read_text(encoding="utf-8") for rel in files}


def test_block_with_path_becomes_a_diff_git_applies(tmp_path: Path) -> None:
    answer = """The bug is in `src/pkg/signer.py` `Signer.validate`: only the newest key is tried.

src/pkg/signer.py
<<<<<<< SEARCH
        for secret_key in self.secret_keys[-1:]:
=======
        for secret_key in reversed(self.secret_keys):
>>>>>>> REPLACE
"""
    result = _propose(answer)
    assert result.problems == ()
    [edit] = result.edits
    assert edit.path == "src/pkg/signer.py" and edit.old_text == SIGNER and edit.blocks == 1
    applied = _git_apply(tmp_path, FILES, result.diff)
    assert "reversed(self.secret_keys)" in applied["src/pkg/signer.py"]
    assert applied["src/pkg/util.py"] == FILES["src/pkg/util.py"]


def test_fenced_block_short_name_and_lost_indentation_resolve() -> None:
    answer = """```python
signer.py
<<<<<<< SEARCH
for secret_key in self.secret_keys[-1:]:
    if self.verify(secret_key, value):
=======
for secret_key in reversed(self.secret_keys):
    if self.verify(secret_key, value):
>>>>>>> REPLACE
```"""
    [edit] = _propose(answer).edits
    assert edit.path == "src/pkg/signer.py"
    assert "        for secret_key in reversed(self.secret_keys):\n            if self.verify" in edit.new_text


def test_block_without_path_is_placed_in_the_one_file_that_holds_it() -> None:
    answer = "Fix:\n<<<<<<< SEARCH\n    return x * 3\n=======\n    return x * 2\n>>>>>>> REPLACE\n"
    [edit] = _propose(answer).edits
    assert edit.path == "src/pkg/util.py" and edit.new_text == "def twice(x):\n    return x * 2\n"


def test_misnamed_file_falls_back_to_the_holder_and_blocks_of_one_file_combine() -> None:
    answer = """src/pkg/signer.py
<<<<<<< SEARCH
        return False
=======
        return None
>>>>>>> REPLACE
and then
<<<<<<< SEARCH
def twice(x):
=======
def thrice(x):
>>>>>>> REPLACE
src/pkg/signer.py
<<<<<<< SEARCH
class Signer:
=======
class KeySigner:
>>>>>>> REPLACE
"""
    result = _propose(answer)
    assert result.problems == ()
    by_path = {e.path: e for e in result.edits}
    assert by_path["src/pkg/signer.py"].blocks == 2
    assert by_path["src/pkg/signer.py"].new_text.startswith("class KeySigner:")
    assert by_path["src/pkg/util.py"].new_text.startswith("def thrice(x):")


def test_unplaceable_and_unfinished_blocks_are_named_not_applied() -> None:
    answer = """src/pkg/signer.py
<<<<<<< SEARCH
    def sign(self):
=======
    def sign(self, value):
>>>>>>> REPLACE

src/pkg/util.py
<<<<<<< SEARCH
def twice(x):
=======
def tw"""
    result = _propose(answer)
    assert result.edits == ()
    assert result.problems == ("edit block 1: its search lines are not in src/pkg/signer.py",)


def test_empty_search_creates_a_file_and_no_newline_at_end_is_kept(tmp_path: Path) -> None:
    answer = """docs/NEW.md
<<<<<<< SEARCH
=======
# New
>>>>>>> REPLACE

README.md
<<<<<<< SEARCH
no trailing newline
=======
a trailing newline? still none
>>>>>>> REPLACE
"""
    result = _propose(answer)
    assert result.problems == ()
    new = {e.path: e for e in result.edits}
    assert new["docs/NEW.md"].old_text is None and "new file mode" in new["docs/NEW.md"].diff
    applied = _git_apply(tmp_path, FILES, result.diff)
    assert applied["README.md"] == "a trailing newline? still none"
    assert (tmp_path / "docs/NEW.md").read_text() == "# New\n"


def test_a_block_that_changes_nothing_is_named() -> None:
    answer = "src/pkg/util.py\n<<<<<<< SEARCH\ndef twice(x):\n=======\ndef twice(x):\n>>>>>>> REPLACE\n"
    result = _propose(answer)
    assert result.edits == () and result.problems == ("src/pkg/util.py: the edit blocks change nothing",)


@pytest.mark.parametrize("answer", ["", "no blocks here", "<<<<<<< SEARCH\nx\n>>>>>>> REPLACE\n",
                                    "```diff\n--- a/x\n+++ b/x\n```"])
def test_answers_without_complete_blocks_propose_nothing(answer: str) -> None:
    assert parse_edit_blocks(answer) == [] and _propose(answer).edits == ()


def test_unified_diff_of_identical_text_is_empty() -> None:
    assert unified_diff("a.py", "x\n", "x\n") == ""


JS = """class Range {
  constructor (range) {
    this.raw = range
  }

  test (version) {
    return false
  }
}

const maxSatisfying = (versions, range) => {
  return null
}

module.exports = { Range, maxSatisfying }
"""
TREE = {**FILES, "classes/range.js": JS, "other/range.js": "function test () {}\n"}


def _locate(files: dict[str, str]):
    """Definition ranges by a plain line scan of the fixture files (the node asks the workspace index)."""
    import re

    def locate(name: str) -> list[tuple[str, int, int]]:
        found = []
        for path, text in files.items():
            lines = text.splitlines()
            for i, line in enumerate(lines):
                if re.match(rf"\s*(?:def|class|function|const)\s+{name}\b|\s*{name} \(", line):
                    indent, end = len(line) - len(line.lstrip()), len(lines)
                    for j in range(i + 1, len(lines)):
                        depth = len(lines[j]) - len(lines[j].lstrip())
                        if lines[j].strip() and depth <= indent:
                            closes = depth == indent and lines[j].strip().startswith(("}", ")"))
                            end = j + 1 if closes else j
                            break
                    while end > i + 1 and not lines[end - 1].strip():
                        end -= 1
                    found.append((path, i + 1, end))
        return found
    return locate


def _quoted(answer: str, files: dict[str, str] = TREE):
    return propose_edits(answer, files.get, files, _locate(files))


def test_a_quoted_whole_function_replaces_its_definition(tmp_path: Path) -> None:
    answer = """Here is the updated code:

```javascript
const maxSatisfying = (versions, range) => {
  return versions.sort().pop() || null
}
```"""
    result = _quoted(answer)
    [edit] = result.edits
    assert edit.path == "classes/range.js"
    applied = _git_apply(tmp_path, TREE, result.diff)
    assert "return versions.sort().pop() || null\n}\n\nmodule.exports" in applied["classes/range.js"]


def test_a_class_with_placeholders_stands_for_its_methods() -> None:
    answer = """classes/range.js
```js
class Range {
  // ...
  test (version) {
    return this.raw === version
  }
}
```"""
    [edit] = _quoted(answer).edits
    assert "  test (version) {\n    return this.raw === version\n  }\n}" in edit.new_text
    assert "constructor (range)" in edit.new_text and "return false" not in edit.new_text


CART = ('from dataclasses import dataclass, field\n\n\n@dataclass\nclass Cart:\n    items: list = field(default_factory=list)\n\n'
        '    def add(self, name, quantity=1):\n        self.items.append((name, quantity))\n\n'
        '    def remove(self, name):\n        self.items = [i for i in self.items if i[0] != name]\n\n\n'
        'def total(cart):\n    count = 0\n    for _, quantity in cart.items:\n        count += quantity\n'
        '    return count\n')


def test_a_class_quoted_as_the_prompt_shows_it_head_apart_deletes_none_of_its_methods(tmp_path: Path) -> None:
    """A small model's answer quotes the chunks it was shown; a class's head is a chunk of its own (its methods are
    others). Read as the whole class, that quote deleted `add` and `remove` (a user trial of the verified fix)."""
    files = {"src/shop/cart.py": CART}
    head = "#### src/shop/cart.py:4-6 (Cart)\n```python\n@dataclass\nclass Cart:\n    items: list = field(default_factory=list)\n```\n"
    result = propose_edits(head, files.get, files, _locate(files))
    assert result.edits == ()
    assert result.problems == ("code block: `Cart` quoted as far as the prompt may show it (its first 3 of 7 lines, "
                               "unchanged): not a change",)
    # the beginning of a long function, unchanged, is a citation too
    cut = "```python\ndef total(cart):\n    count = 0\n    for _, quantity in cart.items:\n```\n"
    assert propose_edits(cut, files.get, files, _locate(files)).edits == ()
    # a class quoted with a changed field and one changed method: both change, the method it leaves out stays
    changed = ("src/shop/cart.py\n```python\n@dataclass\nclass Cart:\n    items: list = field(default_factory=list)\n"
               "    owner: str = ''\n\n    def add(self, name, quantity=1):\n        if quantity > 0:\n"
               "            self.items.append((name, quantity))\n```\n")
    result = propose_edits(changed, files.get, files, _locate(files))
    assert [e.path for e in result.edits] == ["src/shop/cart.py"]
    assert result.problems == ("code block: class `Cart` quoted without its remove: kept; what it shows replaces "
                               "the class's own",)
    applied = _git_apply(tmp_path, files, result.diff)["src/shop/cart.py"]
    assert "    owner: str = ''\n\n    def add(self, name, quantity=1):\n        if quantity > 0:\n" in applied
    assert "    def remove(self, name):\n        self.items = [i for i in self.items if i[0] != name]\n" in applied
    assert applied.count("class Cart:") == 1 and applied.count("def add(") == 1


def test_a_chunk_header_names_the_definition_a_renamed_function_replaces() -> None:
    answer = """src/pkg/util.py:1-2 (twice)
```python
def double(x):
    return x * 2
```"""
    [edit] = _quoted(answer).edits
    assert edit.new_text.startswith("def double(x):\n    return x * 2\n")


def test_quoted_code_that_is_partial_equal_or_ambiguous_proposes_nothing() -> None:
    partial = "```python\ndef twice(x):\n    ...\n```"
    same = "```python\ndef twice(x):\n    return x * 3\n```"
    ambiguous = "```js\nfunction test () { return 1 }\n```"
    assert _quoted(partial).edits == () and _quoted(same).edits == ()
    result = _quoted(ambiguous)
    assert result.edits == () and result.problems == ("code block: `test` is defined in 2 places; name its file",)
    hinted = _quoted("In other/range.js:\n```js\nfunction test () { return 1 }\n```")
    assert [e.path for e in hinted.edits] == ["other/range.js"]


def test_a_block_without_a_path_is_looked_for_in_the_files_the_prompt_showed() -> None:
    answer = "<<<<<<< SEARCH\n    return x * 3\n=======\n    return x * 2\n>>>>>>> REPLACE\n"
    reads: list[str] = []

    def read(path: str) -> str | None:
        reads.append(path)
        return FILES.get(path)

    [edit] = propose_edits(answer, read, FILES, shown=("src/pkg/util.py",)).edits
    assert edit.path == "src/pkg/util.py" and reads == ["src/pkg/util.py"]
    assert propose_edits(answer, FILES.get, FILES, shown=("src/pkg/signer.py",)).edits == ()


KEYS = "def set_key(path, key, value):\n    lines = read(path)\n    lines[key] = value\n    write(path, lines)\n"


def test_a_definition_quoted_under_a_new_name_is_a_rename_only_when_the_answer_says_so() -> None:
    files = {"pkg/keys.py": KEYS}
    renamed = KEYS.replace("set_key", "store_key")
    answer = f"pkg/keys.py\n```python\n{renamed}```\n"
    said = propose_edits("I renamed it:\n" + answer, files.get, files, _locate(files))
    assert [e.new_text for e in said.edits] == [renamed]
    assert propose_edits("Here it is:\n" + answer, files.get, files, _locate(files)).edits == ()
    # a new function that only resembles the old one is an addition, not a rename, even when renames are spoken of
    similar = "def rename_key(path, old, new):\n    lines = read(path)\n    lines[new] = lines.pop(old)\n" \
              "    write(path, lines)\n"
    added = propose_edits(f"Add this next to set_key (it renames a key):\npkg/keys.py\n```python\n{similar}```\n",
                          files.get, files, _locate(files))
    assert [e.new_text for e in added.edits] == [KEYS + "\n\n" + similar]


MAIN = ('import os\n\n\ndef set_key(path, key, value):\n    return write(path, key, value)\n\n\n'
        'def unset_key(path, key):\n    return write(path, key, None)\n\n\nif __name__ == "__main__":\n    main()\n')
RENAME = "def rename_key(path, old, new):\n    value = read(path, old)\n    unset_key(path, old)\n" \
         "    return set_key(path, new, value)\n"


def test_a_new_definition_quoted_under_its_file_is_added_there(tmp_path: Path) -> None:
    """"Add rename_key next to set_key" answered with the new function whole: added to the named file (a path
    comment on the block's first line names it too), at the end before the main guard, or after the definition the
    answer quoted just before it; without a named file it is not placed."""
    files = {"src/pkg/main.py": MAIN, "src/pkg/__init__.py": ""}
    [edit] = propose_edits(f"```python\n# src/pkg/main.py\n{RENAME}```\n", files.get, files, _locate(files)).edits
    assert edit.new_text == MAIN.replace('\n\n\nif __name__', "\n\n\n" + RENAME.rstrip("\n") + '\n\n\nif __name__')
    assert _git_apply(tmp_path, files, edit.diff)["src/pkg/main.py"] == edit.new_text
    after_set = propose_edits("In pkg/main.py (the path shortened):\n```python\ndef set_key(path, key, value):\n"
                              f"    return write(path, key, str(value))\n\n\n{RENAME}```\n", files.get, files,
                              _locate(files))
    [edit] = after_set.edits
    assert "return write(path, key, str(value))\n\n\ndef rename_key(path, old, new):" in edit.new_text
    assert edit.new_text.index("def rename_key") < edit.new_text.index("def unset_key")
    assert propose_edits(f"Here it is:\n```python\n{RENAME}```\n", files.get, files, _locate(files)).edits == ()
    copy = RENAME.replace("rename_key", "copy_key").replace("unset_key(path, old)\n", "")
    [edit] = propose_edits(f"src/pkg/main.py\n```python\n{RENAME}\n\n{copy}```\n", files.get, files,
                           _locate(files)).edits  # two new ones at the end: in the order quoted
    assert edit.new_text.index("def rename_key") < edit.new_text.index("def copy_key") < edit.new_text.index("if __")


def test_a_new_method_of_a_class_quoted_with_placeholders_goes_at_the_end_of_the_class() -> None:
    answer = "classes/range.js\n```js\nclass Range {\n  // ...\n  intersects (other) {\n    return true\n  }\n}\n```"
    [edit] = _quoted(answer).edits
    assert "    return false\n  }\n\n  intersects (other) {\n    return true\n  }\n}\n\nconst maxSatisfying" \
        in edit.new_text


def test_a_block_the_answer_never_closed_does_not_replace_with_its_cut_last_definition() -> None:
    """An answer cut at its token limit ends inside a code block: its last definition may be cut (quoting it would
    delete the rest of the real one); the definitions before it are whole."""
    files = {"src/pkg/main.py": MAIN}
    cut = ("Here:\nsrc/pkg/main.py\n```python\ndef set_key(path, key, value):\n    return write(path, key, str(value))\n"
           "\n\ndef unset_key(path, key):\n    return")
    result = propose_edits(cut, files.get, files, _locate(files))
    [edit] = result.edits
    assert "str(value)" in edit.new_text and "return write(path, key, None)" in edit.new_text
    assert result.problems == ("code block: `unset_key` not used: the answer was cut inside it (its block never "
                               "closed)",)  # said, not dropped silently
    closed = propose_edits(cut + " None\n```\n", files.get, files, _locate(files))
    assert "return None" in closed.edits[0].new_text


def test_search_lines_that_drop_the_blank_lines_between_still_resolve() -> None:
    encoding = ('def base64_decode(string):\n    string = want_bytes(string)\n\n    try:\n'
                '        return base64.urlsafe_b64decode(string)\n    except ValueError as e:\n'
                '        raise BadData("Invalid") from e\n')
    files = {"src/pkg/encoding.py": encoding}
    answer = ("src/pkg/encoding.py\n<<<<<<< SEARCH\n    string = want_bytes(string)\n    try:\n=======\n"
              "    string = want_bytes(string)\n    string += b\"=\" * (-len(string) % 4)\n\n    try:\n>>>>>>> REPLACE\n")
    [edit] = _propose(answer, files).edits
    assert edit.new_text == encoding.replace("want_bytes(string)\n\n", "want_bytes(string)\n"
                                             "    string += b\"=\" * (-len(string) % 4)\n\n")
    lone = "src/pkg/encoding.py\n<<<<<<< SEARCH\n    try:\n    raise BadData\n=======\nx\n>>>>>>> REPLACE\n"
    assert not _propose(lone, files).edits  # the lines must still follow each other in the file
