"""Question-driven retrieval over real repositories: mentions, stack traces, BM25, graph neighbours, budget,
exclusion, incremental updates and determinism."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from contenox.workspace import Retrieval, RetrievalQuery, Workspace
from support.gitrepo import write
from support.wsrepo import APP_FILES, count_tokens

EXTRA = {
    "web/headers.js": (
        "export function parseHeaderValue(raw) {\n  const [key, value] = raw.split(':');\n"
        "  return { key: key.trim(), value: value.trim() };\n}\n"),
    "app/report.py": (
        "from app.models import format_name\n\n\n"
        "def build_report(users):\n" + "".join(f"    line{i} = format_name(users[{i}])\n" for i in range(60))
        + "    return line0\n"),
}


@pytest.fixture
def ws(make_repo: Callable[..., Path], open_ws: Callable[..., Workspace]) -> Workspace:
    return open_ws(make_repo({**APP_FILES, **EXTRA}))


def ask(ws: Workspace, text: str = "", budget: int = 4000, **fields: object) -> Retrieval:
    return ws.retrieve(RetrievalQuery(text=text, **fields), budget, count_tokens)  # type: ignore[arg-type]


def where(result: Retrieval) -> list[tuple[str, str]]:
    return [(c.path, c.name) for c in result.chunks]


def test_a_mentioned_identifier_brings_its_definition_first_then_its_users(ws: Workspace) -> None:
    result = ask(ws, "Where is format_name defined and who calls it?")
    first = result.chunks[0]
    assert (first.path, first.name, first.start_line, first.end_line) == ("app/models.py", "format_name", 9, 10)
    assert "defines format_name (mentioned)" in first.reasons
    assert first.text == "def format_name(name):\n    return name.title()"
    users = {c.name for c in result.chunks if "mentions format_name" in c.reasons}
    assert {"User.greeting", "UserService.describe", "build_report"} <= users
    greeting = next(c for c in result.chunks if c.name == "User.greeting")
    assert greeting.header == "class User:"
    assert result.used == sum(c.tokens for c in result.chunks) <= 4000


def test_a_dotted_mention_prefers_the_qualified_definition(ws: Workspace) -> None:
    result = ask(ws, "What does `UserService.create` return?")
    assert (result.chunks[0].name, result.chunks[0].reasons[0]) == (
        "UserService.create", "defines UserService.create (mentioned)")


def test_common_words_mention_nothing(ws: Workspace) -> None:
    result = ask(ws, "What does the return value of this function mean, and where is it used?")
    assert not [r for c in result.chunks for r in c.reasons if r.startswith(("defines", "mentions"))]


def test_stack_trace_frames_resolve_to_the_chunk_holding_the_line(ws: Workspace) -> None:
    root = ws.root
    trace = ("Traceback (most recent call last):\n"
             f'  File "{root}/app/cli.py", line 7, in main\n'
             '  File "app/service.py", line 9, in describe\n'
             "AttributeError: 'NoneType' object has no attribute 'name'\n")
    result = ask(ws, "why does this fail?", terminal=trace)
    assert where(result)[:2] == [("app/service.py", "UserService.describe"), ("app/cli.py", "main")]
    assert "stack trace line 9" in result.chunks[0].reasons
    assert "stack trace line 7" in result.chunks[1].reasons
    js = ask(ws, "render breaks", terminal="TypeError: x\n    at render (web/app.js:2:30)\n")
    assert js.chunks[0].name == "render" and "stack trace line 2" in js.chunks[0].reasons


def test_bm25_finds_a_chunk_by_a_camel_case_part(ws: Workspace) -> None:
    result = ask(ws, "where do we parse a header value?")
    first = result.chunks[0]
    assert (first.path, first.name) == ("web/headers.js", "parseHeaderValue")
    assert "BM25 rank 1" in first.reasons


def test_a_mentioned_path_selects_that_files_chunks(ws: Workspace) -> None:
    result = ask(ws, "what is in service.py?")
    from_path = {(c.path, c.name) for c in result.chunks if "path mentioned" in c.reasons}
    assert from_path == {("app/service.py", name) for name in
                         ("<module>", "UserService", "UserService.create", "UserService.describe")}


def test_selection_brings_callees_and_callers(ws: Workspace) -> None:
    result = ask(ws, "explain this", open_file="app/service.py", selection_lines=(8, 9))
    reasons = {c.name: c.reasons for c in result.chunks}
    assert reasons["UserService.describe"][0] == "selected"
    assert "callee of UserService.describe" in reasons["format_name"]
    assert "caller of UserService.describe" in reasons["main"]


def test_diff_lines_seed_the_graph(ws: Workspace) -> None:
    path = ws.root / "app/service.py"
    path.write_text(path.read_text().replace("return User(name)", "return User(name.strip())"))
    ws.refresh()
    result = ask(ws, "review my change", diff=ws.diff_text())
    create = next(c for c in result.chunks if c.name == "UserService.create")
    assert "in the diff" in create.reasons and "name.strip()" in create.text
    assert any("callee of UserService.create" in c.reasons for c in result.chunks if c.name == "User")


def test_budget_drops_what_does_not_fit_and_says_so(ws: Workspace) -> None:
    whole = ask(ws, "what does build_report do?")
    report = next(c for c in whole.chunks if c.name == "build_report")
    budget = report.tokens - 1
    result = ask(ws, "what does build_report do?", budget=budget)
    assert report.id not in [c.id for c in result.chunks]
    said = next(d for d in result.dropped if d.startswith(f"{report.id} build_report ({report.tokens} tokens)"))
    part = next(c for c in result.chunks if c.name == "build_report")  # cut to the part that fits
    assert said == f"{report.id} build_report ({report.tokens} tokens) over budget: lines {part.start_line}-" \
                   f"{part.end_line} kept"
    assert part.tokens <= budget // 8 and result.used <= budget
    tiny = ask(ws, "what does build_report do?", budget=100)  # no room for a window: left out
    assert "build_report" not in [c.name for c in tiny.chunks]
    assert f"{report.id} build_report ({report.tokens} tokens) over budget" in tiny.dropped
    assert tiny.chunks and tiny.used <= 100


def test_excluded_chunks_are_not_returned_again(ws: Workspace) -> None:
    first = ask(ws, "Where is format_name defined?")
    seen = first.chunks[0].id
    assert seen == "app/models.py:9-10"
    again = ws.retrieve(RetrievalQuery(text="Where is format_name defined?"), 4000, count_tokens, exclude=[seen])
    assert seen not in [c.id for c in again.chunks]
    assert [c.id for c in again.chunks] == [c.id for c in first.chunks[1:]][:len(again.chunks)]


QUESTIONS = [
    RetrievalQuery(text="Where is format_name defined and who calls it?"),
    RetrievalQuery(text="how do we parse a header value and fetch users over http"),
    RetrievalQuery(text="explain", open_file="app/service.py", selection_lines=(4, 9)),
]


def test_an_edit_updates_chunks_and_equals_a_fresh_workspace(make_repo: Callable[..., Path],
                                                              open_ws: Callable[..., Workspace]) -> None:
    root = make_repo({**APP_FILES, **EXTRA})
    ws = open_ws(root)
    before = [ask(ws, q.text, **_rest(q)) for q in QUESTIONS]
    assert not any(c.name == "format_title" for r in before for c in r.chunks)
    write(root, "app/models.py", APP_FILES["app/models.py"] + "\n\ndef format_title(name):\n"
          "    return format_name(name) + '!'\n")
    write(root, "web/extra.ts", "export function fetchUsersOverHttp(): void {\n  request('/users');\n}\n")
    (root / "web/headers.js").unlink()
    ws.refresh()
    after = [ask(ws, q.text, **_rest(q)) for q in QUESTIONS]
    assert any(c.name == "format_title" and "mentions format_name" in c.reasons for c in after[0].chunks)
    assert after[1].chunks[0].name == "fetchUsersOverHttp"
    assert not any(c.path == "web/headers.js" for r in after for c in r.chunks)
    fresh = open_ws(root)
    expected = [msgspec.json.encode(ask(fresh, q.text, **_rest(q))) for q in QUESTIONS]
    assert [msgspec.json.encode(r) for r in after] == expected
    ws.prepare()  # recompiles the postings: still the same answers
    assert [msgspec.json.encode(ask(ws, q.text, **_rest(q))) for q in QUESTIONS] == expected


def _rest(query: RetrievalQuery) -> dict[str, object]:
    return {"open_file": query.open_file, "selection_lines": query.selection_lines}


def test_a_folder_without_git_retrieves_too(tmp_path: Path, open_ws: Callable[..., Workspace]) -> None:
    for rel, text in APP_FILES.items():
        write(tmp_path / "plain", rel, text)
    ws = open_ws(tmp_path / "plain")
    result = ask(ws, "Where is format_name defined?")
    assert result.chunks[0].name == "format_name"


def test_an_inflected_word_finds_the_code_word_it_inflects(ws: Workspace) -> None:
    from contenox.workspace._bm25 import stems

    assert stems("planned")[-1] == "plan" and stems("entries")[0] == "entry" and "parse" in stems("parsing")
    result = ask(ws, "which greetings are shown?")
    assert any(c.name == "User.greeting" and any(r.startswith("BM25") for r in c.reasons) for c in result.chunks)


def test_a_plain_word_finds_the_class_it_names(ws: Workspace) -> None:
    result = ask(ws, "how is a user made?")
    assert any(c.name == "User" and "defines User (mentioned)" in c.reasons for c in result.chunks)


def test_points_at_tells_what_the_question_names_from_what_only_ranked(ws: Workspace) -> None:
    from contenox.workspace import points_at

    result = ask(ws, "Where is format_name defined and who calls it?")
    named = next(c for c in result.chunks if c.name == "format_name")
    assert points_at(named.reasons)
    users = [c for c in result.chunks if c.reasons and all(r.startswith(("mentions ", "BM25", "graph", "calls"))
                                                          for r in c.reasons)]
    assert users and not any(points_at(c.reasons) for c in users)  # found by use or ranking alone
    assert points_at(("stack trace line 4",)) and points_at(("path mentioned",))
    assert points_at(("project configuration",)) and points_at(("exports of app",))
