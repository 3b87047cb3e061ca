"""The CLI never sends a typo or a bare word to the model: only `ask` or a quoted question of several words."""

from __future__ import annotations

import argparse

import pytest

from contenox import cli


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    calls: list[list[str]] = []

    def fake_ask(args: argparse.Namespace) -> int:
        calls.append(list(args.prompt))
        return 0

    monkeypatch.setattr(cli, "cmd_ask", fake_ask)
    return calls


@pytest.mark.parametrize(("argv", "said"), [
    (["modle", "list"], "unknown command 'modle'; did you mean `contenox model`?"),
    (["stauts"], "unknown command 'stauts'; did you mean `contenox node status`?"),
    (["explian-context"], "did you mean `contenox explain-context`?"),
    (["How", "does", "it", "work?"], "To ask a question, quote it (contenox \"How does it work?\")"),
    (["hello"], "unknown command 'hello'\n"),
])
def test_typos_and_unquoted_words_are_not_asked(argv: list[str], said: str, asked: list[list[str]],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(argv) == 2
    assert said in capsys.readouterr().err
    assert asked == []


def test_a_quoted_question_and_ask_are_asked(asked: list[list[str]]) -> None:
    assert cli.main(["How does the planner order segments?"]) == 0
    assert cli.main(["ask", "why", "not?"]) == 0
    assert asked == [["How does the planner order segments?"], ["why", "not?"]]


def test_help_and_version_words(capsys: pytest.CaptureFixture[str], asked: list[list[str]]) -> None:
    with pytest.raises(SystemExit) as done:
        cli.main(["version"])
    assert done.value.code == 0 and capsys.readouterr().out.startswith("contenox ")
    with pytest.raises(SystemExit):
        cli.main(["help"])
    assert "COMMAND" in capsys.readouterr().out and asked == []
