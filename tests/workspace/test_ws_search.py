"""Lexical search (.gitignore respected), symbol lookup, symbol info and related code."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from contenox.errors import InvalidRequest
from contenox.workspace import SearchHit, Workspace
from support.gitrepo import write

OpenWs = Callable[..., Workspace]


def test_search_regex_literal_word_and_limit(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    root = make_repo()
    write(root, "build/out.py", "format_name()\n")  # ignored by .gitignore
    write(root, "debug.log", "format_name\n")  # ignored by *.log
    ws = open_ws(root)
    hits = ws.search(r"format_\w+\(")
    assert [(h.path, h.line) for h in hits] == [("app/models.py", 6), ("app/models.py", 9),
                                                ("app/service.py", 9)]
    assert hits[0] == SearchHit(path="app/models.py", line=6, column=16,
                                text="        return format_name(self.name)")
    assert len(ws.search("format_name", regex=False, limit=2)) == 2
    assert ws.search("name(", regex=False)
    assert ws.search("format", word=True) == [] and ws.search("format", regex=False)
    assert ("app/models.py", 2) in [(h.path, h.line) for h in ws.search("name", word=True)]
    with pytest.raises(InvalidRequest, match="invalid search pattern"):
        ws.search("(unclosed")


def test_gitignore_in_plain_folder(tmp_path: Path, open_ws: OpenWs) -> None:
    root = tmp_path / "plain"
    write(root, ".gitignore", "*.gen.py\n")
    write(root, "sub/.gitignore", "local/\n")
    write(root, "keep.py", "TOKEN = 1\n")
    write(root, "skip.gen.py", "TOKEN = 2\n")
    write(root, "sub/local/x.py", "TOKEN = 3\n")
    write(root, "sub/y.py", "TOKEN = 4\n")
    ws = open_ws(root)
    assert [h.path for h in ws.search("TOKEN")] == ["keep.py", "sub/y.py"]


def test_find_symbol_and_symbol_info(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    ws = open_ws(make_repo())
    [loc] = ws.find_symbol("format_name")
    assert (loc.path, loc.line, loc.end_line, loc.kind, loc.text) == (
        "app/models.py", 9, 10, "function", "def format_name(name):")
    info = ws.symbol_info("format_name")
    assert info is not None
    assert info.definitions == (loc,)
    assert set(info.referenced_by) == {"app/models.py", "app/service.py"}
    assert info.files_ranked == 6 and 1 <= info.rank_position <= 6 and 0 < info.rank < 1
    users = ws.symbol_info("UserService")
    assert users is not None and users.referenced_by == ("app/cli.py",)
    assert ws.symbol_info("no_such_symbol") is None
    print_info = ws.symbol_info("print")  # only referenced
    assert print_info is not None and print_info.definitions == () and print_info.rank_position == 0


def test_related(make_repo: Callable[..., Path], open_ws: OpenWs) -> None:
    ws = open_ws(make_repo())
    hits = ws.related("service = UserService()\nuser = service.create('ada')")
    definitions = [(h.name, h.path) for h in hits if h.kind == "definition"]
    assert ("UserService", "app/service.py") in definitions and ("create", "app/service.py") in definitions
    references = [(h.name, h.path, h.line) for h in hits if h.kind == "reference"]
    assert ("UserService", "app/cli.py", 1) in references
    assert ws.related("nothing known here") == []
