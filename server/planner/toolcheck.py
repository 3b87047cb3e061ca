"""The tool check: before a tool-enabled turn answers, the model says whether the question needs a tool at all.

Small models asked to write a function named like a tool (``read_file``, ``run_command``) answer with a call of
it; asked in a separate, short request whether the question needs a tool on this repository, they mostly say no.
So a tool-enabled turn first asks that (:func:`check_ids`: the check's own instruction and examples, the same for
every turn so the engine's prefix cache holds them, then the question; the answer is ``yes`` or ``no`` under
:data:`GRAMMAR`, two tokens at most). On ``no`` the turn is answered in text: the question is followed by the
``text_only`` line, its answer may not open with a JSON object or a ```json block (:data:`TEXT_ONLY_GRAMMAR`:
where small models put a call; prose, other code blocks and a JSON example after a line of text stay free), and no
call the answer may still hold is run (``contenox certify`` counts it all the same).
"""

from __future__ import annotations

from contenox.planner.prompts import PromptTexts
from contenox.planner.token_cache import TokenizerLike

__all__ = ["GRAMMAR", "MAX_NEW_TOKENS", "QUESTION_CHARS", "TEXT_ONLY_GRAMMAR", "check_ids", "wants_tool"]

GRAMMAR = 'root ::= "yes" | "no"'
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


def check_ids(tokenizer: TokenizerLike, prompts: PromptTexts, question: str) -> list[int]:
    """The check's prompt for ``question`` in the model's chat template: instruction, examples, the question."""
    instruction, _, examples = prompts.tool_check.partition("\n---\n")
    messages = [{"role": "system", "content": instruction.strip()}]
    for line in examples.strip().splitlines():
        asked, _, answer = line.rpartition(" => ")
        messages += [{"role": "user", "content": _request(asked)}, {"role": "assistant", "content": answer.strip()}]
    messages.append({"role": "user", "content": _request(question)})
    return tokenizer.encode(tokenizer.apply_chat_template(messages))


def wants_tool(answer: str) -> bool:
    """The check's answer read: anything but a plain ``no`` keeps the tools (a check that failed takes none)."""
    return answer.strip().lower() != "no"
