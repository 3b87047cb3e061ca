"""A change's bookkeeping in the other files (``complete_imports``) over an in-memory package: a name the change
uses gets its import from the one module that defines it, and a name the question asks to export is imported by the
package root as its siblings are and listed in each ``__all__``."""

from __future__ import annotations

import ast

from contenox.answer.edits import Located, ProposedEdit, ProposedEdits, unified_diff
from contenox.answer.imports import complete_imports, export_asked, unbound_names

EXC = ('"""Errors."""\n\n\nclass BadData(Exception):\n    pass\n\n\nclass BadPayload(BadData):\n    pass\n')
LOADER = ("import zlib\n\nfrom .exc import BadData\nfrom .exc import BadPayload\nfrom .util import clean\n\n\n"
          "def load(data):\n    try:\n        data = zlib.decompress(data)\n    except Exception as e:\n"
          "        raise BadPayload(str(e)) from e\n    return clean(data)\n")
INIT = ('from .exc import BadData as BadData\nfrom .exc import BadPayload as BadPayload\n'
        'from .loader import load as load\n\n__all__ = ["BadData", "BadPayload", "load"]\n')
FILES = {"src/pkg/__init__.py": INIT, "src/pkg/exc.py": EXC, "src/pkg/loader.py": LOADER,
         "src/pkg/util.py": "def clean(data):\n    return data\n", "tests/test_loader.py": "from pkg import load\n"}
TOO_LARGE = '\n\nclass PayloadTooLarge(BadPayload):\n    """Inflates past the limit."""\n'
LIMITED = LOADER.replace("    return clean(data)\n",
                         "    if len(data) > 1 << 20:\n        raise PayloadTooLarge(\"too large\")\n"
                         "    return clean(data)\n")


def _edit(path: str, new: str, files: dict[str, str] = FILES) -> ProposedEdit:
    return ProposedEdit(path=path, old_text=files[path], new_text=new, diff=unified_diff(path, files[path], new),
                        blocks=1)


def _complete(*edits: ProposedEdit, question: str = "", files: dict[str, str] = FILES) -> ProposedEdits:
    def locate(name: str) -> list[Located]:
        return [(path, 1, 1) for path, text in files.items() if f"class {name}" in text or f"def {name}" in text]

    return complete_imports(ProposedEdits(edits=edits), files.get, locate, question)


def test_a_name_the_change_uses_is_imported_beside_the_other_imports_from_the_module_that_defines_it() -> None:
    done = _complete(_edit("src/pkg/loader.py", LIMITED), _edit("src/pkg/exc.py", EXC + TOO_LARGE))
    texts = {e.path: e.new_text for e in done.edits}
    assert "from .exc import BadPayload\nfrom .exc import PayloadTooLarge\nfrom .util import clean" \
        in texts["src/pkg/loader.py"]
    assert texts["src/pkg/exc.py"] == EXC + TOO_LARGE and "src/pkg/__init__.py" not in texts  # no export asked
    assert done.notes == ("import of `PayloadTooLarge` added to src/pkg/loader.py: the change uses it, "
                          "src/pkg/exc.py defines it",)
    assert "+from .exc import PayloadTooLarge" in done.diff
    assert unbound_names(texts["src/pkg/loader.py"]) == set()


def test_a_name_no_module_or_two_modules_define_is_left_as_written() -> None:
    alone = _edit("src/pkg/loader.py", LIMITED)
    assert _complete(alone) == ProposedEdits(edits=(alone,))  # nothing defines PayloadTooLarge
    twice = {**FILES, "src/pkg/other.py": "class PayloadTooLarge(Exception):\n    pass\n"}
    kept = _complete(_edit("src/pkg/loader.py", LIMITED, twice), _edit("src/pkg/exc.py", EXC + TOO_LARGE, twice),
                     files=twice)
    assert not kept.notes and "import PayloadTooLarge" not in kept.diff


def test_a_name_the_question_asks_to_export_is_imported_by_the_package_root_as_its_siblings_and_listed() -> None:
    question = ("Refuse payloads that inflate past 1 MiB with a new PayloadTooLarge error, defined with the other "
                "exceptions and importable from the package root.")
    assert "PayloadTooLarge" in export_asked(question)
    done = _complete(_edit("src/pkg/loader.py", LIMITED), _edit("src/pkg/exc.py", EXC + TOO_LARGE),
                     question=question)
    init = {e.path: e.new_text for e in done.edits}["src/pkg/__init__.py"]
    assert init == ('from .exc import BadData as BadData\nfrom .exc import BadPayload as BadPayload\n'
                    'from .exc import PayloadTooLarge as PayloadTooLarge\nfrom .loader import load as load\n\n'
                    '__all__ = ["BadData", "BadPayload", "PayloadTooLarge", "load"]\n')
    assert done.notes[-1] == ("`PayloadTooLarge` (src/pkg/exc.py) exported from its package as the question asks: "
                              "imported in src/pkg/__init__.py, listed in src/pkg/__init__.py's __all__")


def test_an_export_joins_a_parenthesized_import_and_each_all_list_one_entry_a_line() -> None:
    init = ("from .sizes import (\n    naturalsize,\n    naturaldelta\n)\n\n__all__ = [\n    'naturaldelta',\n"
            "    'naturalsize',\n]\n")
    sizes = "__all__ = ['naturalsize', 'naturaldelta']\n\n\ndef naturalsize(v):\n    return str(v)\n"
    files = {"src/hz/__init__.py": init, "src/hz/sizes.py": sizes,
             "src/hz/__init__.pyi": "from .sizes import naturalsize\n"}
    added = sizes + "\n\ndef naturalsize_binary(v):\n    return naturalsize(v)\n"
    done = _complete(_edit("src/hz/sizes.py", added, files),
                     question="Add naturalsize_binary to sizes.py and export it from the hz package like "
                              "naturalsize.", files=files)
    texts = {e.path: e.new_text for e in done.edits}
    assert texts["src/hz/__init__.py"] == ("from .sizes import (\n    naturalsize,\n    naturaldelta,\n"
                                           "    naturalsize_binary,\n)\n\n__all__ = [\n    'naturaldelta',\n"
                                           "    'naturalsize',\n    'naturalsize_binary',\n]\n")
    assert texts["src/hz/__init__.pyi"] == "from .sizes import naturalsize\nfrom .sizes import naturalsize_binary\n"
    assert texts["src/hz/sizes.py"].startswith("__all__ = ['naturalsize', 'naturaldelta', 'naturalsize_binary']\n")
    for text in texts.values():
        ast.parse(text)


def test_a_name_already_imported_by_the_root_is_only_listed() -> None:
    init = "from ._state import SWITCHED, MIGHT_SWITCH\n\n__all__ = ('SWITCHED',)\n"
    state = "SWITCHED = object()\nMIGHT_SWITCH = object()\n"
    files = {"h/__init__.py": init, "h/_state.py": state}
    done = _complete(_edit("h/_state.py", state + "# states\n", files), files=files,
                     question="h.MIGHT_SWITCH works, but `from h import *` does not bring it in, unlike SWITCHED.")
    assert {e.path: e.new_text for e in done.edits}["h/__init__.py"] == \
        "from ._state import SWITCHED, MIGHT_SWITCH\n\n__all__ = ('MIGHT_SWITCH', 'SWITCHED',)\n"


def test_what_counts_as_unbound_and_as_asked() -> None:
    code = ("import os\nfrom a import *\n")
    assert unbound_names(code) == set()  # a star import: anything may be bound
    code = ("def f(x, *rest, key=None):\n    total = [y for y in rest if y]\n    try:\n        pass\n"
            "    except ValueError as err:\n        print(err, len(total), __name__)\n    return g(x, key)\n")
    assert unbound_names(code) == {"g"}
    assert unbound_names("def (") == set()
    assert export_asked("Fix the off-by-one in clamp_value.") == []
    assert "Headers" in export_asked("Make it available as h11.Headers, part of the package's public API.")
