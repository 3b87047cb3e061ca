"""The tool check: before a tool-enabled turn answers, the model says whether the question needs a tool at all.

Small models asked to write a function named like a tool (``read_file``, ``run_command``) answer with a call of
it; asked in a separate, short request whether the question needs a tool on this repository, they mostly say no.
So a tool-enabled turn first asks that, twice, in two phrasings whose instruction and examples are the same for
every turn (the engine's prefix cache holds them), the question last: :func:`check_ids` (``yes`` or ``no`` under
:data:`GRAMMAR`) and :func:`kind_ids` (``repo``, ``code`` or ``text`` under :data:`KIND_GRAMMAR`: is it about this
repository's files and commands, new code to write, or anything else). Each phrasing alone says yes to some
requests that need no tool (the first to code named like a tool, the second to JSON examples); the tools stay
only when both say so, and never for a request the node would refuse to carry out (:func:`request_refusal`:
pushing, publishing, sending, deleting the repository, root, system-wide installs).
Otherwise the turn is answered in text: the question is followed by the ``text_only`` line, its answer may not
open with a JSON object or a ```json block (:data:`TEXT_ONLY_GRAMMAR`: where small models put a call; prose, other
code blocks and a JSON example after a line of text stay free), and no call the answer may still hold is run
(``contenox certify`` counts it all the same). When the tools stay, the turn's first answer must be a call
(``[tools] require_call``).
"""

from __future__ import annotations

import re

import msgspec

from contenox.planner.prompts import PromptTexts
from contenox.planner.token_cache import TokenizerLike

__all__ = ["GRAMMAR", "KIND_GRAMMAR", "MAX_NEW_TOKENS", "QUESTION_CHARS", "REFUSED", "TEXT_ONLY_GRAMMAR", "Verdict",
           "check_ids", "decide", "kind_ids", "refused", "request_refusal", "wants_tool"]

GRAMMAR = 'root ::= "yes" | "no"'
KIND_GRAMMAR = 'root ::= "repo" | "code" | "text"'
MAX_NEW_TOKENS = 2
TEXT_ONLY_GRAMMAR = "\n".join([
    "root ::= first rest",
    'first ::= [^`{\\[ \\n] | "`" [^`] | "``" [^`] | "```" [^j\\n] | "```j" [^s] | "```js" [^o] | "```jso" [^n]',
    "rest ::= [^\\x00]*",
])
"""A text-only answer: it may not begin with ``{``, ``[``, a blank, a bare fence or a ```json fence; the rest is free."""


QUESTION_CHARS = 1200
"""A longer question (pasted code, a log) is asked about by its first 800 and last 400 characters: the request's
words are at its ends, and the check would otherwise prefill the whole of it a second time."""


def _request(question: str) -> str:
    text = question.strip()
    if len(text) > QUESTION_CHARS:
        text = f"{text[:800]}\n[...]\n{text[-400:]}"
    return f"Request: {text}"


def _ids(tokenizer: TokenizerLike, prompt: str, question: str) -> list[int]:
    instruction, _, examples = prompt.partition("\n---\n")
    messages = [{"role": "system", "content": instruction.strip()}]
    for line in examples.strip().splitlines():
        asked, _, answer = line.rpartition(" => ")
        messages += [{"role": "user", "content": _request(asked)}, {"role": "assistant", "content": answer.strip()}]
    messages.append({"role": "user", "content": _request(question)})
    return tokenizer.encode(tokenizer.apply_chat_template(messages))


def check_ids(tokenizer: TokenizerLike, prompts: PromptTexts, question: str) -> list[int]:
    """The check's prompt for ``question`` in the model's chat template: instruction, examples, the question."""
    return _ids(tokenizer, prompts.tool_check, question)


def kind_ids(tokenizer: TokenizerLike, prompts: PromptTexts, question: str) -> list[int]:
    """The check's second question (repo, code or text), laid out as :func:`check_ids`."""
    return _ids(tokenizer, prompts.tool_kind, question)


def wants_tool(answer: str) -> bool:
    """The check's answer read: anything but a plain ``no`` keeps the tools (a check that failed takes none)."""
    return answer.strip().lower() != "no"


_ASKED = r"(?:^Request:\s*|[.!?;:]\s+|\b(?:please|then|and|now|can you|could you|would you)\s+)"
"""Where a request's own verb stands: its start, a new sentence, or after please / then / can you."""
REFUSED = tuple((re.compile(_ASKED + verb, re.I | re.S), what) for verb, what in (
    (r"(?:git\s+)?push\b", "push to a remote"),
    (r"(?:publish|upload|deploy)\b", "publish, upload or deploy"),
    (r"(?:e-?mail|send|share)\b.{0,40}\bto\s+(?:my|our)\b", "send anything off this machine"),
    (r"(?:delete|remove|wipe|erase|destroy|rm\s+-rf)\b.{0,40}(?:\.git\b|\b(?:repository|repo|everything|all\s+(?:the\s+)?"
     r"files|home|(?:hard\s+)?(?:disk|drive))\b|\s/\s*$)", "delete the repository, a disk or the home folder"),
    (r"format\b.{0,20}\b(?:disk|drive|partition)\b", "format a disk"),
    (r"(?:sudo\b|(?:run|install)\b.{0,40}\b(?:with\s+sudo|as\s+root|globally|system-?wide)\b)",
     "act as root or install system-wide"),
))
"""Requests, in the request's own imperative words, that no tool of the node carries out (``run_command`` refuses
such commands whatever the model asks: :mod:`contenox.node.command_guard`)."""


def refused(question: str) -> Verdict | None:
    """The verdict on a request the node does not carry out (:func:`request_refusal`), before any model is asked;
    None: ask the model."""
    what = request_refusal(question)
    return None if what is None else Verdict(tools=False, why=f"the request asks to {what}, which the node does not do")


def request_refusal(question: str) -> str | None:
    """What the request asks that the node does not do for it, whatever a tool could (``run_command`` refuses
    such commands: :mod:`contenox.node.command_guard`), or None. Read from the request's own words (a pasted
    log's are not the request's: the ends, as the check reads them)."""
    text = _request(question)
    for pattern, what in REFUSED:
        if pattern.search(text):
            return what
    return None


class Verdict(msgspec.Struct, frozen=True, kw_only=True):
    """Whether a turn keeps its tools, and why not."""

    tools: bool
    why: str = ""
    """Why not, for explain-context (empty when the tools stay)."""


def decide(yes_no: str, kind: str) -> Verdict:
    """The two answers read together: the tools stay only when neither says otherwise (an answer that is neither
    phrasing's word, a check that failed, keeps them)."""
    if not wants_tool(yes_no) or kind.strip().lower() in ("code", "text"):
        return Verdict(tools=False, why=f"the tool check answered no (needs a tool: {yes_no.strip() or '?'}; "
                                        f"kind: {kind.strip() or '?'})")
    return Verdict(tools=True)
