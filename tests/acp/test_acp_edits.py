"""Offering edits over ACP (``acp.edits.offer_edits``), one layer: a rename that moved its file offers the
deletion as its own approval ("Delete ..."), and an approved deletion is made on disk (ACP's fs has no delete)."""

from __future__ import annotations

from pathlib import Path

from acp.schema import ClientCapabilities, FileSystemCapabilities

from contenox.acp.edits import offer_edits
from contenox.answer.edits import ProposedEdit, unified_diff
from support.acp_recorder import Recorder

OLD = "const parseOptions = o => o\nmodule.exports = parseOptions\n"
NEW = OLD.replace("parseOptions", "normalizeOptions")


def _edit(path: str, old: str | None, new: str | None) -> ProposedEdit:
    return ProposedEdit(path=path, old_text=old, new_text=new, diff=unified_diff(path, old, new), blocks=1)


async def test_an_approved_move_deletes_the_old_file_and_writes_the_new_one(tmp_path: Path) -> None:
    (tmp_path / "internal").mkdir()
    (tmp_path / "internal/parse-options.js").write_text(OLD)
    caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))
    edits = (_edit("internal/parse-options.js", OLD, None), _edit("internal/normalize-options.js", None, NEW))
    client = Recorder(permit="apply")
    written = await offer_edits(client, "s1", str(tmp_path), 1, edits, caps)  # type: ignore[arg-type]
    assert written == ["internal/parse-options.js", "internal/normalize-options.js"]
    assert [call.title for call, _ in client.permission_requests] == [
        "Delete internal/parse-options.js", "Create internal/normalize-options.js"]
    assert not (tmp_path / "internal/parse-options.js").exists()
    assert client.writes == [(str(tmp_path / "internal/normalize-options.js"), NEW)]
    # rejected: nothing deleted
    (tmp_path / "internal/parse-options.js").write_text(OLD)
    rejecting = Recorder(permit="reject")
    assert await offer_edits(rejecting, "s1", str(tmp_path), 2, edits[:1], caps) == []  # type: ignore[arg-type]
    assert (tmp_path / "internal/parse-options.js").read_text() == OLD
