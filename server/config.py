"""Typed, fully defaulted configuration at ``$CONTENOX_HOME/config.toml``.

Every key has a default. A bad value is reported with its key (``engine.cache_size_gb: expected
float, got str``) and the default is used instead; loading never crashes on user input.
"""

from __future__ import annotations

import logging
import os
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

import msgspec

from contenox.errors import ConfigError

__all__ = [
    "CompletionConfig",
    "Config",
    "EngineConfig",
    "ModelConfig",
    "NodeConfig",
    "PlannerConfig",
    "ToolsConfig",
    "VerifyConfig",
    "WorkspaceConfig",
    "config_path",
    "contenox_home",
    "load_config",
    "render_config",
]

log = logging.getLogger(__name__)


class ModelConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    default: str = "qwen2.5-coder-0.5b"
    """The smallest model that gives useful coding answers; smollm2-135m is the fast test model."""
    device: str = "CPU"


class EngineConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    cache_size_gb: float = 2.0
    """KV cache kept by the engine; large enough for several workspaces' stable prefixes."""
    chunk_tokens: int = 256
    """Split-fuse prefill chunk (tokens per step); cancellation takes effect at chunk boundaries."""
    max_num_seqs: int = 8
    max_new_tokens: int = 512
    repetition_penalty: float = 1.1
    """Greedy decoding's guard against loops (1.0 turns it off); deterministic either way."""
    threads: int = 0
    """Inference threads; 0 lets OpenVINO decide."""
    process: bool = True
    """Run the engine in a child process (the node never stalls on a prefill step and survives an engine
    crash); false runs it on a thread of the node (one process less, for debugging)."""
    backend: Literal["openvino", "openai"] = "openvino"
    """Where the model runs: "openvino" (an OpenVINO engine here) or "openai": a serving engine the team runs
    (vLLM, OpenVINO Model Server, llama.cpp's server) behind the OpenAI-compatible API. The node still plans by
    tokens with ``[model] default``'s local tokenizer, which must be the one the server's model uses."""
    url: str = ""
    """The serving engine's OpenAI base URL (``http://gpu-box:8080/v1``; OVMS: ``.../v3``); https uses TLS."""
    model: str = ""
    """The model name the serving engine serves it under (empty: ``[model] default``)."""
    api_key_env: str = ""
    """The environment variable holding the serving engine's API key (a bearer token; never logged)."""
    api_key_file: str = ""
    """A file holding the API key instead (its first line)."""
    token_prompt: bool = False
    """Send the prompt as token ids (llama.cpp's server and vLLM take them) instead of its text."""
    timeout_s: float = 120.0
    """Longest wait for the serving engine's next bytes (the first token after a long prefill included)."""
    retries: int = 3
    """Retries, with backoff, of a request refused with 429 or 503 before any token came."""
    cache_key_field: str = "prompt_cache_key"
    """The body field carrying a stable per-thread cache key (empty: not sent)."""
    affinity_header: str = "x-session-id"
    """The header a prefix-aware router keeps a thread on one replica by (empty: not sent)."""
    prefix_hash_header: str = "x-contenox-prefix-hash"
    """The header carrying the hash of the stable prefix (empty: not sent)."""
    grammar_field: str = ""
    """The body field the server takes a grammar in (llama.cpp: ``grammar``, vLLM: ``guided_grammar``); empty:
    grammars are not sent (the answer is unconstrained, said once in the log)."""


class NodeConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    idle_exit_s: float = 1800.0
    """Seconds without clients before the node exits; 0 keeps it running."""
    socket_dir: str = ""
    """Empty: $XDG_RUNTIME_DIR/contenox, else /tmp/contenox-$UID."""


class PlannerConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    output_reserve: int = 512
    repo_map_tokens: int = 1024
    repo_map_delta_tokens: int = 512
    """Definitions changed since the base repo map go into the turn as a delta up to this size; past it
    the base map is rebuilt (named in explain-context)."""
    retrieval_tokens: int = 3072
    """Code retrieved for each question (chunks already in the thread are referenced, not repeated); 0: off."""
    call_tree_lines: int = 0
    """A question that asks how code works ("How does X get to Y?", "Walk me through...", "Trace test_x down to...")
    and names a function, class or test gets, before it, the calls that definition makes, read from the source (not
    run) and followed a few levels deep, in up to this many lines (30 is what was measured); 0: off, the default:
    on five architecture questions it lifted the 1.5B's answers by one task and cost the 0.5B's two
    (bench/results/2026-12-06-eval-verified-{calls,nocalls}-*). Named in explain-context."""
    mention_tokens: int = 4096
    """Files mentioned for one turn (ACP resource links, ``ask --pin``) enter that turn's message, whole while they
    fit in this many tokens together, else as their outline (named in explain-context)."""
    max_history_turns: int = 8
    """Turns of a thread kept in full; when exceeded (or over ``thread_tokens``) older turns are summarised."""
    thread_tokens: int = 6144
    """A thread's history budget; past it the thread is rebased (older turns summarised), named in explain."""
    locations: bool = True
    """After the answer, one sentence marked as the node's gives the file and line of each name the answer presents
    as code (in backticks) without naming its file, where exactly one workspace file defines it. Named in
    explain-context."""
    answer_calls: int = 30
    """After the answer to a question that asks how code works and names a function, class or test ("Walk me
    through what happens between load_dotenv() and os.environ"), the calls that definition makes, read from the
    source (not run), in up to this many lines, marked as the node's: the small models stop after the first call
    or two. 0: off. Named in explain-context."""
    edit_step: bool = True
    """A turn whose question asks for a change to be made (fix, rename, add, "give me the diff"...) and whose answer
    wrote no edit block takes one more step: its answer is followed by a request for the change as edit blocks,
    and what that step writes is appended to the answer (Aider's architect/editor split; the answer is in the
    prefix cache, so the step prefills only the request). The step is drawn under a grammar of edit blocks on the
    definitions the question and the answer name (a rename question's step begins at the renamed definition's
    line). Named in explain-context."""
    continue_edits: bool = True
    """An answer (or edit step) that ran out of tokens inside an edit block goes on once, for up to as many more,
    from where it stopped (the answer so far is in the prefix cache), so the block can close and apply."""


class CompletionConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Inline (ghost-text) completions: fill-in-the-middle with a cached repo-level context."""

    enabled: bool = True
    context_tokens: int = 1536
    """The repo-level block: definitions the file uses and places edited recently (0: none)."""
    prefix_tokens: int = 384
    suffix_tokens: int = 128
    max_new_tokens: int = 64
    time_budget_ms: int = 400
    """Past this time after the keystroke, a completion ends with the line being generated (the first line is
    always finished): ghost text comes fast, and more lines only while they are quick to make. 0: no budget."""


class WorkspaceConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    max_file_bytes: int = 1_000_000
    max_files_outside_git: int = 20_000
    """Outside a git repository (no .gitignore'd build trees to lean on) the walk stops after this many files,
    nearest the root first, and every turn says so."""


class ToolsConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Agent turns: only a model that passed ``contenox certify`` is given the tools."""

    enabled: bool = True
    """Give a certified model the tools (false: no model is, certified or not)."""
    max_steps: int = 6
    """Tool steps one turn may take before it must answer."""
    max_seconds: float = 300.0
    """Wall time after which a turn takes no further tool step."""
    max_result_chars: int = 8000
    """A tool result longer than this is cut (the cut is said in the result)."""
    check: bool = True
    """The tool check: a tool-enabled turn first asks the model, in a short request of its own, whether the
    question needs a tool; on no it is answered in text (:mod:`contenox.planner.toolcheck`)."""
    require_call: bool = True
    """On the check's yes, the turn's first answer must be a call (OpenAI's ``tool_choice: "required"``, as
    llama.cpp and vLLM constrain it): small models otherwise answer "I cannot see your files" in prose."""
    redraw_edits: bool = True
    """A ``propose_edit`` whose diff does not apply, changes nothing or is cut off is drawn again once, from the
    call's opening on, held to the file's own lines and to a change (false: its error goes to the model as is)."""
    ignore_certification: bool = False
    """Give the model the tools whether or not it passed ``contenox certify``: only ``contenox eval --mode agent``
    sets it, in its private node's config (a user's node never should)."""


class VerifyConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Verified fixes: a turn that asks for a change draws candidates from its one prefilled prompt, tests each
    in a scratch copy of the workspace with the check command, and offers the one that passes."""

    enabled: bool = True
    """Verify change turns (the check command still runs only with the user's consent)."""
    command: str = ""
    """The check command for every workspace without one of its own (``.contenox.toml``'s ``[verify] command``)
    and without a failing run in the turn; empty: detected (pytest, package.json's test script)."""
    candidates: int = 4
    """Answers per round: the greedy one plus sampled ones, drawn from the same prefilled prompt."""
    rounds: int = 2
    """Repair rounds after a round where no candidate passed (the best one's failing output is appended)."""
    temperature: float = 0.8
    top_p: float = 0.95
    timeout_s: float = 120.0
    """A check run longer than this is stopped (its whole process group) and counts as failed."""
    hang_factor: float = 3.0
    hang_extra_s: float = 10.0
    """A candidate's check run is stopped as hung (outcome ``timeout``) past ``hang_factor`` times the longest run
    of the check without a candidate (before any change; the failing tests' files run whole) plus
    ``hang_extra_s``, within ``timeout_s``: mutation testing's timeout, relative to the code's own run (PIT's is
    1.25x + 4 s, Stryker's 1.5x + 5 s; this one allows for a check stopped at its first failure before the change
    running its whole file after it). A one-token change to a loop's guard (``||`` to ``&&``) loops until memory
    runs out: three such candidates of a JavaScript trial ran 40 s each where the check took 0.3 s. 0: only
    ``timeout_s``."""
    hang_quiet_s: float = 10.0
    """Past that limit a run is stopped only once it has printed nothing for this long: a check that stopped at its
    first failure before the change (``pytest -x``: 2 s) may run a long suite after a right one, printing its
    progress as it goes; a loop that never ends prints nothing. 0: stopped at the limit whatever it prints."""
    budget_s: float = 900.0
    """No more candidates are drawn once a verification has run this long (the places not yet tried and the
    repair rounds left are named in explain-context); what was checked by then is chosen from as always. A search
    that finds nothing in 15 minutes rarely does later: of 336 verifications in the evals of 2026-12-03 to -06,
    33 ran longer than 10 minutes and 3 of those passed. 0: no limit."""
    max_output_chars: int = 20_000
    """A check's output beyond this is cut in the middle (head and tail kept, the cut named)."""
    grammar: bool = True
    """Sampled candidates are generated under a grammar: an edit block whose SEARCH lines are the target
    file's real lines."""
    focused: bool = True
    """When the turn's candidates fail, localize the failing run to functions and draw candidates from a short
    prompt per function (the failing output, the test, the function to rewrite), as Agentless does."""
    places: int = 3
    """Functions a focused round tries in turn (most suspicious by the trace first, the model's picks breaking
    ties, then the order found), stopping at the first whose candidate passes; each costs a short prompt and
    ``candidates`` answers (4 measured no better than 2 on the eval's bug and trace tasks, at about twice the
    time, before the trace ordered them: bench/results/...-verified-places-*; 3 since a line candidate decodes
    one or two lines, not its whole function)."""
    lines: int = 3
    """After a focused place's candidates fail, its lines to change are ranked (the trace's most suspicious first,
    then the model's ``candidates`` picks) and, for up to this many lines, in turn, candidates are drawn that
    change that line alone (every other line kept by a grammar): Agentless's edit locations. 0: none. A line
    costs a line's decoding, not the function's: the lines before it begin the answer (prefilled), the ones
    after are added to it (was 2 while every candidate decoded the whole function)."""
    infill: int = 12
    """When the turn's candidates fail, before the focused rewrites, up to this many lines of each of the first
    ``infill_places`` places (the trace's most suspicious first, then in order; only lines the failing run ran,
    when a trace says which) are each taken out and filled in by the model's fill-in-the-middle, the way it
    completes code in the editor (cloze-style repair, as AlphaRepair does): a fill that differs from the line is
    a candidate. The chat models rewrite a function they are told is wrong mostly as it was; filled from the code
    around it, the line is what the code there should say (the 1.5B's greedy fill put the bug's line back where
    its focused rewrites never did: bench/probes/fim_lines.py). Needs a model with a FIM format; 0: none."""
    infill_inserts: int = 8
    """Beside the lines filled in (``infill``), up to this many lines are put in, in each of those places (an
    empty line after a whole statement, at its indentation, filled in the same way): the fix of a bug that took a
    line out is a line the function lacks, and no line's own fill adds one (the 1.5B's greedy fill put
    cachetools' missing ``key += tuple(...)`` and ``self.__hits = self.__misses = 0`` back:
    bench/probes/fim_lines.py --insert). A fill that opens a block brings the block's lines with it. Python
    functions only; 0: none."""
    mutations: int = 24
    """When the turn's candidates fail, before the lines are filled in, one-token changes of the lines the failing
    run ran in those places (mutation testing's operators: ``>`` to ``>=``, ``==`` to ``!=``, an integer constant
    one up or down, true/false, and/or; and a one-word string literal to a word of its kind the question writes
    as a literal, "use NFKD"; :mod:`contenox.verify.mutate`), the trace's most suspicious lines first, up
    to this many in all: each costs a check run and no decoding, and the fix a small model misses is often one
    token away (the 0.5B drew 100 candidates for a bulk discount that began one item late, ``>`` for ``>=``, and
    none passed). A passing one shows the line: the model fills that line in, and its own passing fix is offered
    first; else the node's change is, said to be the node's. Only against the project's own failing run, never a
    test the model wrote for the change. 0: none."""
    stack: int = 2
    """When no candidate passed and the closest one fixed some of the failing tests (fewer failing and more passing
    than the code as it is), the search runs again on top of it, up to this many times: the failing run with that
    change laid in the scratch copy is localized again, and each candidate of the new search is checked with that
    change under it, and offered with it (a trial's fix was two entries of a table: a fill wrote `"s": 1`, which made
    one of the two failing tests pass, and no fill wrote both). 0: never."""
    infill_places: int = 6
    """Places whose lines are filled in (found along the failing run, in the focused round's order): more than the
    rewrites try (``places``), since a fill decodes one line, not a function (0: none)."""
    reproduce: bool = True
    """A check that already passes before any change (a feature asked for under the existing tests) can only
    guard; the model is then asked for a test of the change (Agentless's reproduction test), which runs after the
    check in the scratch copy. When that test fails before the change (for want of what was asked, not for an
    error of its own), candidates are drawn and repaired as for a failing check, and one that passes both is
    offered; else the turn's answer is guarded as before. The test is the node's, never part of the offered
    change. (Also a JavaScript project whose check cannot run: a Node script of the change, which is then the
    check.)"""
    written_tests: int = 3
    """How many such tests the model writes, drawn as one group from one prefill (the greedy one first, the rest
    sampled). Each runs alone before the change; those that fail for want of it are kept, and a candidate passes
    them when it passes at least half (more first): a test the model got wrong alone cannot turn down a right
    change (the 1.5B's one script for semver's `satisfies` expected a throw the task never asked for, and the
    right answer was offered "not verified"), as Agentless keeps the reproduction tests most candidates agree
    with. 1: one test, which every candidate must pass."""
    trace: bool = True
    """The check's first run (before any candidate) is traced: which of the workspace's functions and lines each
    test ran (a tracer laid in through ``sitecustomize``; Node's own coverage, ``NODE_V8_COVERAGE``, for a
    JavaScript check, read as one run). A pytest check that names test ids
    or stops early is followed by its failing tests' whole files, traced (its own command, consented on its own),
    so that passing tests stand beside the failing ones. The focused round's places then drop what no failing test
    ran, add what it did, and go most suspicious first (line-level spectrum-based fault localization, Ochiai)."""
    localize: bool = True
    """Before the focused prompts, the model picks the function to rewrite among up to ten places found along
    the failing test's calls (three calls deep), as Agentless localizes with the model (``candidates`` picks, the
    greedy one and sampled ones, counted as votes). The picks order only the places the trace leaves tied (the
    0.5B's picks did worse than the order found: bench/results/2026-12-03-probe-pick-0.5b.txt); off: no picks."""


class AnticipateConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Anticipated context: the code at the user's place (reported by the editor) is retrieved and prefilled
    while the engine is idle, so a question about it finds its context already computed."""

    enabled: bool = True
    tokens: int = 2048
    """Retrieved code one anticipation may prefill (per workspace: a new place replaces the last one)."""
    draft_tokens: int = 0
    """Retrieved code one anticipation of a question being typed (the chat box's draft) may prefill; 0: the
    question's own budget (``[planner] retrieval_tokens``): that question is about to be asked, and whatever of
    its code the draft's anticipation did not hold, the question waits for."""
    delay_ms: int = 1000
    """How long the user's place must stay put before it is anticipated."""
    quiet_ms: int = 1500
    """An inline completion within this time (the user is typing) postpones the anticipation, and pauses one
    under way between its pieces."""
    question_tokens: int = 512
    """A question that uses the anticipated code (it is about the user's place) adds at most this many tokens of
    its own code that was not anticipated, best first (the rest is named in explain-context): every anticipated
    chunk is cached, so what the question adds is what it waits for. 0: no cap."""
    pointed_only: bool = True
    """Of its own code, a question about the user's place adds only what it points at (definitions it names,
    files it names, its failing run's frames, the configuration or export list it asks about); what merely ranks
    near the place is what the anticipation holds already."""
    piece_tokens: int = 64
    """An anticipation prefills this many tokens per request, so an inline completion waits at most one such
    step behind it (not one of the engine's ``chunk_tokens`` steps); 0: all in one request."""
    on_battery: bool = False
    """Anticipate on battery power too (where the OS reports it; Linux)."""
    focus_ttl_s: float = 900.0
    """A place older than this no longer seeds a question's retrieval."""
    terminal_ttl_s: float = 600.0
    """A failing run the editor reported goes with a question that brings none of its own for this long (the
    editor clears it when the command passes)."""


class Config(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    model: ModelConfig = msgspec.field(default_factory=ModelConfig)
    engine: EngineConfig = msgspec.field(default_factory=EngineConfig)
    node: NodeConfig = msgspec.field(default_factory=NodeConfig)
    planner: PlannerConfig = msgspec.field(default_factory=PlannerConfig)
    workspace: WorkspaceConfig = msgspec.field(default_factory=WorkspaceConfig)
    completion: CompletionConfig = msgspec.field(default_factory=CompletionConfig)
    tools: ToolsConfig = msgspec.field(default_factory=ToolsConfig)
    verify: VerifyConfig = msgspec.field(default_factory=VerifyConfig)
    anticipate: AnticipateConfig = msgspec.field(default_factory=AnticipateConfig)
    home: str = ""
    """Resolved root directory (not read from the file)."""
    warnings: tuple[str, ...] = ()
    """Problems found while loading, one line each, key first."""

    @property
    def root(self) -> Path:
        return Path(self.home)

    @property
    def models_dir(self) -> Path:
        return self.root / "models"

    @property
    def logs_dir(self) -> Path:
        return self.root / "logs"

    @property
    def state_dir(self) -> Path:
        return self.root / "state"


_SECTIONS: dict[str, type[msgspec.Struct]] = {
    "model": ModelConfig,
    "engine": EngineConfig,
    "node": NodeConfig,
    "planner": PlannerConfig,
    "workspace": WorkspaceConfig,
    "completion": CompletionConfig,
    "tools": ToolsConfig,
    "verify": VerifyConfig,
    "anticipate": AnticipateConfig,
}

_POSITIVE = {"engine.chunk_tokens", "engine.max_num_seqs", "engine.max_new_tokens", "planner.repo_map_tokens",
             "workspace.max_file_bytes", "completion.prefix_tokens", "completion.max_new_tokens",
             "tools.max_steps", "tools.max_result_chars", "verify.candidates", "verify.timeout_s",
             "verify.max_output_chars", "verify.written_tests"}
_POSITIVE_FLOAT = {"engine.repetition_penalty", "tools.max_seconds", "engine.timeout_s"}
_RETIRED = {"planner.align_blocks", "workspace.debounce_ms"}
"""Keys older versions wrote (``contenox init`` writes every key); read and dropped without a warning."""
_NON_NEGATIVE = {"engine.cache_size_gb", "engine.threads", "engine.retries", "node.idle_exit_s", "planner.output_reserve",
                 "planner.max_history_turns", "planner.retrieval_tokens", "planner.call_tree_lines", "planner.answer_calls", "planner.thread_tokens",
                 "planner.repo_map_delta_tokens", "completion.context_tokens",
                 "completion.suffix_tokens", "completion.time_budget_ms", "verify.rounds", "verify.temperature",
                 "verify.infill", "verify.infill_inserts", "verify.infill_places", "verify.mutations", "verify.stack",
                 "verify.hang_factor", "verify.hang_extra_s", "verify.hang_quiet_s",
                 "anticipate.tokens", "anticipate.draft_tokens", "anticipate.delay_ms", "anticipate.quiet_ms",
                 "anticipate.focus_ttl_s", "anticipate.piece_tokens", "anticipate.question_tokens",
                 "anticipate.terminal_ttl_s"}


def contenox_home() -> Path:
    """``$CONTENOX_HOME`` or ``~/.contenox``."""
    env = os.environ.get("CONTENOX_HOME")
    return Path(env).expanduser() if env else Path.home() / ".contenox"


def config_path(home: Path | None = None) -> Path:
    return (home or contenox_home()) / "config.toml"


def _check_range(key: str, value: Any) -> str | None:
    if key in _POSITIVE and value <= 0:
        return f"{key}: must be > 0, got {value!r}"
    if key in _POSITIVE_FLOAT and value < 1.0:
        return f"{key}: must be >= 1.0, got {value!r}"
    if key in _NON_NEGATIVE and value < 0:
        return f"{key}: must be >= 0, got {value!r}"
    return None


def _section(name: str, raw: Any, warnings: list[str]) -> msgspec.Struct:
    cls = _SECTIONS[name]
    default = cls()
    if not isinstance(raw, dict):
        warnings.append(f"{name}: expected a table, got {type(raw).__name__}; using defaults")
        return default
    values: dict[str, Any] = {}
    fields = {f.name: f.type for f in msgspec.structs.fields(cls)}
    for key, value in raw.items():
        full = f"{name}.{key}"
        if full in _RETIRED:
            continue
        if key not in fields:
            warnings.append(f"{full}: unknown key; ignored")
            continue
        try:
            converted = msgspec.convert(value, type=fields[key], strict=False)
        except msgspec.ValidationError as exc:
            warnings.append(f"{full}: {exc}; using default {getattr(default, key)!r}")
            continue
        problem = _check_range(full, converted)
        if problem:
            warnings.append(f"{problem}; using default {getattr(default, key)!r}")
            continue
        values[key] = converted
    return msgspec.structs.replace(default, **values)


def load_config(home: Path | None = None, *, strict: bool = False) -> Config:
    """Load the config under ``home`` (default :func:`contenox_home`).

    A missing file gives the defaults. Bad values give the default for that key and a line in
    ``Config.warnings``; with ``strict=True`` they raise :class:`ConfigError` instead.
    """
    root = (home or contenox_home()).resolve()
    path = config_path(root)
    warnings: list[str] = []
    raw: dict[str, Any] = {}
    if path.is_file():
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            warnings.append(f"{path}: not valid TOML ({exc}); using all defaults")
    sections: dict[str, Any] = {}
    for name, value in raw.items():
        if name not in _SECTIONS:
            warnings.append(f"{name}: unknown section; ignored")
            continue
        sections[name] = _section(name, value, warnings)
    if strict and warnings:
        raise ConfigError("; ".join(warnings), path=str(path))
    for line in warnings:
        log.warning("config: %s", line)
    return Config(home=str(root), warnings=tuple(warnings), **sections)


def _toml_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def set_default_model(home: Path, name: str) -> Path:
    """Make ``name`` the ``[model] default`` in ``home``'s config.toml, changing only that line (or adding it;
    the rest of the file, comments included, stays as the user wrote it). The file's path."""
    path = config_path(home)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = []
    setting = f"default = {_toml_string(name)}"
    section = None
    for index, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("["):
            if section == "model":  # the section ends without a default: add one
                lines.insert(index, setting)
                break
            section = stripped.strip("[] ")
        elif section == "model" and re.match(r"default\s*=", stripped):
            lines[index] = setting
            break
    else:
        if section == "model":
            lines.append(setting)
        else:
            lines += ([""] if lines else []) + ["[model]", setting]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def render_config(config: Config) -> str:
    """TOML text of every section with its values (what ``contenox init`` writes)."""
    lines: list[str] = []
    for name in _SECTIONS:
        lines.append(f"[{name}]")
        for key, value in msgspec.structs.asdict(getattr(config, name)).items():
            if isinstance(value, bool):
                text = "true" if value else "false"
            elif isinstance(value, str):
                text = _toml_string(value)
            else:
                text = repr(value)
            lines.append(f"{key} = {text}")
        lines.append("")
    return "\n".join(lines)
