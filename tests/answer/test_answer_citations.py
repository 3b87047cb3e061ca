"""Citations of an answer checked against a real workspace: real files, symbols and lines vs invented ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from contenox.answer.citations import check_citations, cited_paths, cited_symbols
from contenox.config import WorkspaceConfig
from contenox.workspace import Workspace

FILES = {
    "itsdangerous/signer.py": "import hmac\n\n\nclass Signer:\n    def unsign(self, value, fallback_signers=None):\n"
                              "        return hmac.compare_digest(value, value)\n\n\n"
                              "def derive_key(secret):\n    return secret\n",
    "itsdangerous/timed.py": "from .signer import Signer\n\n\nclass TimestampSigner(Signer):\n"
                             "    def get_timestamp(self):\n        return 0\n",
    "tests/test_signer.py": "from itsdangerous.signer import Signer\n\n\ndef test_unsign():\n"
                            "    assert Signer().unsign(b'x')\n",
}


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    for rel, text in FILES.items():
        path = tmp_path / "repo" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return Workspace.open(tmp_path / "repo", WorkspaceConfig(), None)


def test_paths_and_symbols_are_read_from_prose_backticks_and_calls() -> None:
    text = ("See `itsdangerous/signer.py` (lines 4-6) and timed.py:5; `Signer.unsign` calls derive_key() "
            "and hmac.compare_digest. Not `self` or `None`; plain words such as `binascii` or `hexdump` may name "
            "a module or a tool, so they make no claim, but `loads()` and `Serializer` do.")
    assert cited_paths(text) == [("itsdangerous/signer.py", None, None), ("timed.py", 5, 5)]
    assert cited_symbols(text) == ["Signer.unsign", "loads", "Serializer", "derive_key"]


def test_real_and_invented_citations_are_told_apart(workspace: Workspace) -> None:
    answer = ("The check happens in `Signer.unsign` (itsdangerous/signer.py:5), which uses "
              "`hmac.compare_digest`; `TimestampSigner.get_timestamp` in timed.py:5 supplies the time. "
              "Rotate keys with `rotate_secret_keys()` from itsdangerous/keys.py, or catch "
              "`BadSignatureExpired`. See also itsdangerous/signer.py:400.")
    cited = check_citations(answer, workspace)
    assert cited.files_real == ("itsdangerous/signer.py", "itsdangerous/timed.py")
    assert cited.files_unknown == ("itsdangerous/keys.py",)
    assert cited.lines_unknown == ("itsdangerous/signer.py:400",)
    assert cited.symbols_real == ("Signer.unsign", "hmac.compare_digest", "TimestampSigner.get_timestamp")
    assert cited.symbols_unknown == ("rotate_secret_keys", "BadSignatureExpired")
    assert cited.summary() == ("cited: 5 real, 4 unknown (itsdangerous/keys.py, rotate_secret_keys, "
                               "BadSignatureExpired, itsdangerous/signer.py:400)")


def test_a_partial_path_resolves_to_the_file_it_names(workspace: Workspace, tmp_path: Path) -> None:
    (tmp_path / "repo" / "docs").mkdir()
    (tmp_path / "repo" / "docs" / "signer.py").write_text("x = 1\n")
    workspace.refresh()
    cited = check_citations("signer.py, timed.py, dangerous/timed.py and docs/timed.py", workspace)
    assert cited.files_real == ("signer.py", "itsdangerous/timed.py")  # two signer.py: kept as written
    assert cited.files_unknown == ("dangerous/timed.py", "docs/timed.py")


def test_attributes_and_parameters_are_real_once_the_code_is_indexed_for_retrieval(workspace: Workspace) -> None:
    from contenox.workspace import RetrievalQuery

    answer = "`Signer.unsign` takes `fallback_signers`; `Signer.rotate_keys()` does not exist."
    assert check_citations(answer, workspace).symbols_unknown == ("fallback_signers", "Signer.rotate_keys")
    workspace.retrieve(RetrievalQuery(text="unsign"), 1000, len)  # the node always retrieves before it checks
    assert check_citations(answer, workspace).symbols_unknown == ("Signer.rotate_keys",)
