"""Retrieval of files that hold no definition the question names: project configuration, a package's
export list, modules two hops from the question's code, files the question's code names by path; and long
chunks cut to the part that fits. Each test is a small real git repository shaped like the held-out misses."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from contenox.workspace import Retrieval, RetrievalQuery, Workspace
from contenox.workspace._config_files import calls_for_config, chunk_config, config_format
from contenox.workspace._mentions import words_in
from support.wsrepo import count_tokens

# A small HTTP-ish library: the wire grammar two modules away from the event class a question names, a
# receive buffer the readers use, a version module setup.py reads by path, and its configuration.
LIB = {
    "wire/__init__.py": ("from wire._events import Request, Response\nfrom wire._util import WireError\n\n"
                         "__all__ = ['Request', 'Response', 'WireError']\n"),
    "wire/_grammar.py": ("# Header values: any visible byte; NUL and whitespace are forbidden.\n"
                         "value_chars = r'[^\\x00\\s]'\n\n\ndef value_pattern():\n"
                         "    return '(' + value_chars + ')+'\n"),
    "wire/_headers.py": ("from wire._grammar import value_pattern\nfrom wire._util import WireError\n\n\n"
                         "def check_headers(headers):\n    pattern = value_pattern()\n    for name, value in headers:\n"
                         "        if not matches(pattern, value):\n            raise WireError(name)\n"
                         "    return headers\n\n\ndef matches(pattern, value):\n    return bool(pattern and value)\n"),
    "wire/_events.py": ("from wire._headers import check_headers\n\n\nclass Request:\n"
                        "    def __init__(self, method, headers):\n        self.method = method\n"
                        "        self.headers = check_headers(headers)\n\n\nclass Response:\n"
                        "    def __init__(self, status):\n        self.status = status\n\n\n"
                        "def make_request(method, headers):\n    return Request(method, check_headers(headers))\n"),
    "wire/_buffer.py": ("class Buffer:\n    def __init__(self):\n        self.data = b''\n\n"
                        "    def lines_until_blank(self):\n        end = self.data.find(b'\\r\\n\\r\\n')\n"
                        "        return None if end < 0 else self.data[:end].split(b'\\r\\n')\n"),
    "wire/_util.py": "class WireError(Exception):\n    pass\n",
    "wire/_version.py": "# Read by setup.py without importing the package.\n__version__ = '1.2.0'\n",
    "wire/tests/test_read.py": ("from wire._buffer import Buffer\n\n\ndef feed(data):\n    buf = Buffer()\n"
                                "    buf.data += data\n    return buf.lines_until_blank()\n\n\n"
                                "def test_split_blank_line():\n    assert feed(b'GET / HTTP/1.1\\r\\n\\r\\n')\n"),
    "setup.py": ("from setuptools import setup\n\nexec(open('wire/_version.py').read())\n\n"
                 "setup(name='wire', version=__version__, python_requires='>=3.8')\n"),
    "pyproject.toml": ("[build-system]\nrequires = ['setuptools']\n\n[project]\nname = 'wire'\n"
                       "dependencies = ['idna>=3', 'certifi']\n\n[project.optional-dependencies]\n"
                       "docs = ['sphinx<7']\n\n[tool.mypy]\nstrict = true\nwarn_unused_ignores = true\n\n"
                       "[tool.mypy.overrides]\nmodule = 'wire.tests.*'\n"),
    "docs/requirements.txt": "sphinx<7\nfuro\n",
    "docs/example.py": "from wire import Request\n\n\ndef check_headers(req):\n    return req.headers\n",
}


@pytest.fixture
def ws(make_repo: Callable[..., Path], open_ws: Callable[..., Workspace]) -> Workspace:
    return open_ws(make_repo(LIB))


def ask(ws: Workspace, text: str, budget: int = 4000, **fields: object) -> Retrieval:
    return ws.retrieve(RetrievalQuery(text=text, **fields), budget, count_tokens)  # type: ignore[arg-type]


def reasons_for(result: Retrieval, path: str) -> list[str]:
    return [r for c in result.chunks if c.path == path for r in c.reasons]


def test_configuration_files_are_cut_at_their_sections() -> None:
    assert config_format("pyproject.toml") == "sections" and config_format("docs/requirements.txt") == "lines"
    assert config_format("requirements-dev.txt") == "lines" and config_format("package.json") == "lines"
    assert config_format("src/app.py") is None and config_format("README.md") is None
    chunks = chunk_config("sections", LIB["pyproject.toml"])
    # [tool.mypy] and [tool.mypy.overrides] share their first two dotted parts: one chunk
    assert [(c.name, c.start, c.end) for c in chunks] == [
        ("[build-system]", 1, 2), ("[project]", 4, 6), ("[project.optional-dependencies]", 8, 9),
        ("[tool.mypy]", 11, 16)]
    assert {c.kind for c in chunks} == {"config"}
    assert [(c.name, c.start, c.end) for c in chunk_config("lines", "a\nb\n\nc\n")] == [("<config>", 1, 4)]


def test_a_question_about_dependencies_or_settings_calls_for_configuration() -> None:
    for text in ("Which packages does this depend on?", "What do I need to pip install to build the docs?",
                 "We are dropping Python 3.8 support", "Is it type-checked in strict mode? Where is that configured?",
                 "bump the version in pyproject"):
        assert calls_for_config(text), text
    for text in ("Where is the header value checked?", "Why does parse_date fail on '19'?",
                 "Rename bytesify to to_bytes everywhere"):
        assert not calls_for_config(text), text


def test_a_dependency_question_reaches_the_projects_configuration(ws: Workspace) -> None:
    result = ask(ws, "Which third-party packages does wire depend on at runtime?")
    found = [c for c in result.chunks if c.path == "pyproject.toml"]
    assert found and found[0].name == "[project]" and "dependencies = ['idna>=3', 'certifi']" in found[0].text
    assert any(r.startswith("configuration, BM25 rank") for r in found[0].reasons)


def test_a_docs_build_question_reaches_the_docs_requirements(ws: Workspace) -> None:
    result = ask(ws, "What must I pip install before building the documentation with sphinx?")
    assert any(r.startswith("configuration") for r in reasons_for(result, "docs/requirements.txt"))


def test_a_type_checker_question_reaches_its_settings(ws: Workspace) -> None:
    result = ask(ws, "Is wire type-checked in strict mode, and which extra warnings are switched on?")
    mypy = next(c for c in result.chunks if c.name == "[tool.mypy]")
    assert "strict = true" in mypy.text and mypy.path == "pyproject.toml"


def test_configuration_counts_half_when_the_question_is_not_about_it(ws: Workspace) -> None:
    about = ask(ws, "what does strict mean for headers")
    config = ask(ws, "what does strict mean for the mypy settings")
    score = {r.chunks[i].path: r.chunks[i].score for r in (about,) for i in range(len(r.chunks))}
    strict = next(c for c in config.chunks if c.name == "[tool.mypy]")
    assert score.get("pyproject.toml", 0.0) <= strict.score / 2


def test_an_export_question_reaches_the_package_file(ws: Workspace) -> None:
    # wire/__init__.py defines nothing the question names and never mentions Buffer
    result = ask(ws, "Buffer can only be imported from the private wire._buffer module; export it from the package "
                     "like Request.")
    assert "exports of wire" in reasons_for(result, "wire/__init__.py")


def test_a_module_two_calls_away_is_reached(ws: Workspace) -> None:
    # make_request -> check_headers (wire/_headers.py) -> value_pattern (wire/_grammar.py)
    result = ask(ws, "make_request('GET', [('A', 'x\\x00')]) no longer rejects the NUL byte. Why?")
    grammar = reasons_for(result, "wire/_grammar.py")
    assert "callee of check_headers (two hops)" in grammar


def test_a_failing_runs_frames_lead_to_what_they_call(ws: Workspace) -> None:
    trace = ("wire/tests/test_read.py:12: in test_split_blank_line\n    assert feed(b'GET / HTTP/1.1\\r\\n\\r\\n')\n"
             "wire/tests/test_read.py:7: in feed\n    return buf.lines_until_blank()\nE   assert None\n")
    result = ask(ws, "this test fails, why?", terminal=trace)
    assert "callee of feed" in reasons_for(result, "wire/_buffer.py")


def test_a_file_the_questions_code_names_by_path_is_reached(ws: Workspace) -> None:
    # setup.py reads wire/_version.py with exec(open(...)): no identifier links them
    result = ask(ws, "Where is the version number defined, and how does the packaging script read it at build time?")
    assert "near the question's code (named there)" in reasons_for(result, "wire/_version.py")


def test_documentation_examples_count_half_unless_the_question_is_about_them(ws: Workspace) -> None:
    plain = ask(ws, "What does check_headers do?")
    first = plain.chunks[0]
    assert (first.path, first.name) == ("wire/_headers.py", "check_headers")
    example = next(c for c in plain.chunks if c.path == "docs/example.py")
    docs = ask(ws, "What does check_headers do in the docs example?")
    assert next(c for c in docs.chunks if c.path == "docs/example.py").score > example.score


def test_a_lowercase_receiver_is_a_plain_word_a_class_stays_code() -> None:
    words = {w.name: w.code for w in words_in("conn.next_event() and Signer.unsign(x)")}
    assert words == {"next_event": True, "conn": False, "unsign": True, "Signer": True}


def test_a_chunk_over_the_budget_left_is_cut_to_the_part_that_fits(make_repo: Callable[..., Path],
                                                                   open_ws: Callable[..., Workspace]) -> None:
    long_body = "".join(f"    step_{i} = prepare({i})\n" for i in range(80))
    files = {"app/flow.py": ("def run_flow():\n" + long_body + "    checksum = verify_checksum(step_79)\n"
                             "    return checksum\n"),
             "app/small.py": "def prepare(i):\n    return i\n\n\ndef verify_checksum(x):\n    return x\n"}
    ws = open_ws(make_repo(files))
    whole = ask(ws, "where does run_flow verify the checksum?")
    full = next(c for c in whole.chunks if c.name == "run_flow")
    budget = full.tokens - 10  # it no longer fits; a window of up to budget / 8 tokens does
    result = ask(ws, "where does run_flow verify the checksum?", budget=budget)
    part = next(c for c in result.chunks if c.name == "run_flow")
    assert part.tokens <= budget // 8 and part.end_line - part.start_line < full.end_line - full.start_line
    assert "checksum = verify_checksum(step_79)" in part.text  # the window holds the lines the question is about
    assert any(r.endswith("the part that fits") for r in part.reasons)
    assert any(d.startswith(f"{full.id} run_flow") and "kept" in d for d in result.dropped)
    assert result.used <= budget


def test_a_large_chunk_that_only_matched_words_is_cut_down(make_repo: Callable[..., Path],
                                                          open_ws: Callable[..., Workspace]) -> None:
    # A long table found by a word of the question: it may take a quarter of the budget, not most of it.
    table = "".join(f"ROW_{i} = ('entry {i}', {i})\n" for i in range(60))
    ws = open_ws(make_repo({"app/table.py": table + "CHECKSUM_ROW = ('checksum', 99)\n" + table.replace("ROW", "R2"),
                            "app/run.py": "def run():\n    return 1\n"}))
    budget = 1200
    result = ask(ws, "which row holds the checksum entry?", budget=budget)
    part = next(c for c in result.chunks if c.path == "app/table.py")
    assert not any(r.startswith("defines ") for r in part.reasons)
    assert part.tokens <= budget // 4 and "CHECKSUM_ROW = ('checksum', 99)" in part.text
    assert any("is large for what found it" in d for d in result.dropped)


def test_the_budgets_tail_goes_to_chunks_that_fit_whole_not_to_a_window(make_repo: Callable[..., Path],
                                                                        open_ws: Callable[..., Workspace]) -> None:
    # Regression (sealed held-out set): a window cut into the last bit of the budget pushed out the small
    # definition that fitted there whole.
    def body(name: str, lines: int) -> str:
        return f"def {name}():\n" + "".join(f"    value_{i} = compute_{name}({i})\n" for i in range(lines)) + \
               "    return value_0\n"

    ws = open_ws(make_repo({"app/a.py": body("alpha_step", 100), "app/b.py": body("beta_step", 100),
                            "app/c.py": "def gamma_step():\n    return 3\n"}))
    whole = ask(ws, "alpha_step, beta_step and gamma_step")
    alpha, gamma = (next(c for c in whole.chunks if c.name == n) for n in ("alpha_step", "gamma_step"))
    budget = alpha.tokens + 100
    left = budget - alpha.tokens
    assert 64 <= left < budget // 8 and gamma.tokens <= left  # room for gamma, less than a whole window
    result = ask(ws, "alpha_step, beta_step and gamma_step", budget=budget)
    assert [c.name for c in result.chunks] == ["alpha_step", "gamma_step"]
    assert any(d.startswith("app/b.py:1-102 beta_step") and d.endswith("over budget") for d in result.dropped)


def test_configuration_follows_edits_like_code(make_repo: Callable[..., Path],
                                               open_ws: Callable[..., Workspace]) -> None:
    root = make_repo({"app/main.py": "def run():\n    return 1\n", "README.md": "# app\n"})
    ws = open_ws(root)
    question = "Which packages does the app depend on?"
    assert not [c for c in ask(ws, question).chunks if c.path == "pyproject.toml"]
    (root / "pyproject.toml").write_text("[project]\nname = 'app'\ndependencies = ['attrs']\n")
    (root / "README.md").write_text("# app\n\nNo dependencies.\n")
    ws.refresh()
    found = [c for c in ask(ws, question).chunks if c.path == "pyproject.toml"]
    assert found and "dependencies = ['attrs']" in found[0].text
    assert not [c for c in ask(ws, question).chunks if c.path == "README.md"]  # prose is not configuration
    (root / "pyproject.toml").unlink()
    ws.refresh()
    assert not [c for c in ask(ws, question).chunks if c.path == "pyproject.toml"]
