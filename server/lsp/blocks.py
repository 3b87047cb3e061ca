"""``contenox/resolveBlock``: a chat code block's Apply resolved by the node's edit machinery, as a turn's answer is.

The block (with the line before it, which may name its file, and the question it answers) goes to the node's
resolver: the file the block or its heading names, the definitions it replaces, its edit blocks against the
files' current text, renames carried to every use. When that proposes nothing and the heading (or the file the
user picked) names a file, the block replaces that file only when it is a whole file (or creates it when it
does not exist). A block that names no file and resolves nowhere comes back with the workspace files that define
its names (``candidates``): the editor asks which one and asks again with ``path``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from contenox.answer.blocks import named_path
from contenox.answer.edits import ProposedEdit
from contenox.answer.resolve import defined_names, whole_file_edit
from contenox.errors import ContenoxError, InvalidRequest

from .documents import document, param_str, root_for, uri_of
from .server import ContenoxLanguageServer

__all__ = ["RESOLVE_BLOCK", "block_answer", "resolve_block"]

RESOLVE_BLOCK = "contenox/resolveBlock"
_MAX_NAMES = 8
"""Definitions of a block looked up for the files that hold them (the quick pick's candidates)."""
_NEW_FILE_SUFFIXES = frozenset({
    "py", "pyi", "js", "mjs", "cjs", "ts", "tsx", "jsx", "go", "rs", "java", "kt", "c", "h", "cc", "cpp", "hpp",
    "cs", "rb", "php", "swift", "sh", "md", "rst", "txt", "toml", "json", "yaml", "yml", "ini", "cfg", "html",
    "css", "sql"})


def _safe(path: str) -> bool:
    parts = path.split("/")
    return bool(path) and not path.startswith(("/", "~")) and "\\" not in path and all(p not in ("", "..")
                                                                                        for p in parts)


def block_answer(text: str, heading: str, lang: str = "") -> str:
    """The block as an answer the resolver reads: the heading line, then the block fenced."""
    fence = "````" if "```" in text else "```"
    body = text if text.endswith("\n") else text + "\n"
    return (f"{heading.strip()}\n" if heading.strip() else "") + f"{fence}{lang}\n{body}{fence}\n"


def _edit_json(root: str, edit: ProposedEdit) -> dict[str, Any]:
    return {"path": edit.path, "uri": Path(root, edit.path).as_uri(), "diff": edit.diff, "oldText": edit.old_text,
            "newText": edit.new_text}


def _already_in(block: str, text: str) -> bool:
    """The block's lines (blank lines and trailing spaces aside) are a run of the file's lines, as they are."""
    lines = [line.rstrip() for line in block.splitlines() if line.strip()]
    have = [line.rstrip() for line in text.splitlines() if line.strip()]
    return bool(lines) and any(have[i:i + len(lines)] == lines for i in range(len(have) - len(lines) + 1))


async def resolve_block(ls: ContenoxLanguageServer, params: Any) -> dict[str, Any]:
    """``{uri?, text, heading?, question?, lang?, path?}`` -> ``{edits, problems, notes, candidates, named,
    wholeFile}``: the per-file changes applying the block makes (nothing is written), why it made none, and
    when it names no file, the files that define its names."""
    text = param_str(params, "text")
    assert text is not None
    uri = param_str(params, "uri", required=False)
    heading = param_str(params, "heading", required=False) or ""
    question = param_str(params, "question", required=False) or ""
    lang = param_str(params, "lang", required=False) or ""
    chosen = param_str(params, "path", required=False)
    if chosen is not None and not _safe(chosen):
        raise InvalidRequest(f"parameter 'path' must be a workspace-relative path: {chosen!r}", param="path")
    if "\n" in heading or len(heading) > 500 or (lang and not re.fullmatch(r"[\w+#.-]{1,32}", lang)):
        raise InvalidRequest("parameter 'heading' must be one line and 'lang' a language name", param="heading")
    node = ls.node
    root = root_for(ls, uri)
    resolved, _ = await node.pins(root)  # the node's root: the paths of its edits are relative to it
    line = f"{chosen}:" if chosen is not None else heading
    proposed = await node.resolve_edit(root, block_answer(text, line, lang), question)
    edits = list(proposed.edits)
    problems = list(proposed.problems)
    named = chosen if chosen is not None else named_path(heading) if heading.strip() else None
    if named is not None and not _safe(named):
        named = None
    whole = False
    ours = next((e for e in edits if e.path == named), None)
    if named is not None and (not edits or ours is not None):
        target = Path(resolved, named)
        current: str | None = None
        exists = target.exists()
        if exists:
            try:
                current = (await document(ls, uri_of(str(target)), node.config.workspace.max_file_bytes)).source
            except ContenoxError as exc:
                problems.append(f"{named}: {exc.message}")
        if current is not None or (not exists and named.rsplit(".", 1)[-1].lower() in _NEW_FILE_SUFFIXES):
            edit = whole_file_edit(named, current, text)
            if edit is not None and (ours is None or ours.new_text != edit.new_text):
                # the whole file as written (top-level statements too), the other files' diffs (a rename) kept
                edits, whole = [edit, *(e for e in edits if e.path != named)], True
            elif edit is None and not edits and current is not None and _already_in(text, current):
                problems.append(f"the block repeats code {named} already has, as it is: nothing to change")
            elif edit is None and not edits and current is not None:
                problems.append(f"the block is not the whole of {named} and replaces none of its definitions: "
                                "select the lines it replaces")
    candidates: list[str] = []
    if not edits and named is None:
        for name in defined_names(text)[:_MAX_NAMES]:
            info = await node.symbol_info(root, name)
            candidates.extend(d.path for d in (info.definitions if info else ()))
    return {"edits": [_edit_json(resolved, e) for e in edits], "problems": problems, "notes": list(proposed.notes),
            "candidates": list(dict.fromkeys(candidates)), "named": named, "wholeFile": whole}
