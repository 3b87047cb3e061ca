"""The chat template's fixed pieces, derived once per tokenizer by rendering sentinel messages.

A turn is sent as ``system, (user, assistant)*, user`` messages. Rendering the model's template
with sentinel contents and splitting at the sentinels gives the text between contents:

    open_system S system_to_user U1 user_to_assistant A1 assistant_to_user U2 generation

Each piece is tokenized on its own, so the planner can join cached content ids with piece ids and
get exactly the ids of the rendered template (checked against the real template in the tests).
A template that does not fit this shape (e.g. one that rewrites contents) is a ProfileMismatch.
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec

from contenox.errors import ProfileMismatch
from contenox.planner.token_cache import TokenizerLike

__all__ = ["ChatFrame", "ToolFrame", "derive_chat_frame", "derive_tool_frame"]

_S = "\x00CONTENOX-SYSTEM\x00"


def _sentinel(tag: str, n: int) -> str:
    return f"\x00CONTENOX-{tag}{n}\x00"


class ChatFrame(msgspec.Struct, frozen=True, kw_only=True):
    open_system: str
    system_to_user: str
    user_to_assistant: str
    assistant_to_user: str
    generation: str
    """Closes the last user message and opens the assistant's answer."""
    template_digest: str
    """sha256 of the template text the pieces came from."""

    def render(self, system: str, turns: list[tuple[str, str]], user: str) -> str:
        """The text the template renders for these contents (for checks and debugging)."""
        parts = [self.open_system, system, self.system_to_user]
        for asked, answered in turns:
            parts += [asked, self.user_to_assistant, answered, self.assistant_to_user]
        parts += [user, self.generation]
        return "".join(parts)


def _split(rendered: str, sentinels: list[str]) -> list[str]:
    pieces: list[str] = []
    rest = rendered
    for sentinel in sentinels:
        head, found, rest = rest.partition(sentinel)
        if not found:
            raise ProfileMismatch(f"chat template dropped or rewrote a message (missing {sentinel!r})")
        pieces.append(head)
    pieces.append(rest)
    return pieces


def derive_chat_frame(tokenizer: TokenizerLike) -> ChatFrame:
    """Render the template with sentinels and split it into its fixed pieces."""
    u1, a1, u2, a2, u3 = (_sentinel("U", 1), _sentinel("A", 1), _sentinel("U", 2), _sentinel("A", 2),
                          _sentinel("U", 3))
    messages = [{"role": "system", "content": _S}, {"role": "user", "content": u1},
                {"role": "assistant", "content": a1}, {"role": "user", "content": u2}]
    try:
        rendered = tokenizer.apply_chat_template(messages, add_generation_prompt=True)
    except (RuntimeError, ValueError) as exc:
        raise ProfileMismatch(f"the model's chat template cannot be rendered: {exc}") from exc
    p0, p1, p2, p3, p4 = _split(rendered, [_S, u1, a1, u2])
    frame = ChatFrame(open_system=p0, system_to_user=p1, user_to_assistant=p2, assistant_to_user=p3,
                      generation=p4,
                      template_digest=hashlib.sha256(tokenizer.chat_template.encode()).hexdigest())
    # The shape must hold for no history and for longer histories too.
    checks = [
        ([{"role": "system", "content": _S}, {"role": "user", "content": u3}], frame.render(_S, [], u3)),
        ([*messages[:4], {"role": "assistant", "content": a2}, {"role": "user", "content": u3}],
         frame.render(_S, [(u1, a1), (u2, a2)], u3)),
    ]
    for msgs, expected in checks:
        if tokenizer.apply_chat_template(msgs, add_generation_prompt=True) != expected:
            raise ProfileMismatch("chat template is not of the system/user/assistant shape the planner needs")
    return frame


class ToolFrame(msgspec.Struct, frozen=True, kw_only=True):
    """How the model's template renders tools: the block its system message gains for the tool schemas, and
    the text around a tool result (sent as the next user message, as the template renders a ``tool`` message)."""

    block: str
    """Appended to the system message's content: the schemas and the call syntax, exactly as the template says."""
    result_open: str
    result_close: str

    def result(self, text: str) -> str:
        return f"{self.result_open}{text}{self.result_close}"


def derive_tool_frame(tokenizer: TokenizerLike, frame: ChatFrame, tools: list[dict[str, Any]]
                      ) -> tuple[ToolFrame | None, str]:
    """The template's tool rendering for ``tools`` (OpenAI-style definitions), or None and why the planner
    cannot use it: no tool support in the template, a call syntax other than ``<tool_call>`` (the only one the
    strict parser reads), or tool results rewritten (escaped) instead of framed."""
    u1, r1 = _sentinel("U", 1), "\x00CONTENOX-R1\n\"quoted\"\x00"
    try:
        rendered = tokenizer.apply_chat_template([{"role": "system", "content": _S}, {"role": "user", "content": u1}],
                                                 add_generation_prompt=True, tools=tools)
        call = "<tool_call>\n{}\n</tool_call>"
        answered = tokenizer.apply_chat_template(
            [{"role": "system", "content": _S}, {"role": "user", "content": u1},
             {"role": "assistant", "content": call}, {"role": "tool", "content": r1}],
            add_generation_prompt=True, tools=tools)
    except (RuntimeError, ValueError) as exc:
        return None, f"the chat template cannot render tools: {exc}"
    head, found, rest = rendered.partition(_S)
    block, found_user, _ = rest.partition(frame.system_to_user + u1)
    if not found or not found_user or head != frame.open_system or not block.strip():
        return None, "the chat template renders no tools"
    if "<tool_call>" not in block:
        return None, "the chat template's tool-call syntax is not <tool_call> (the parser reads only that)"
    lead = rendered[: len(rendered) - len(frame.generation)] if rendered.endswith(frame.generation) else rendered
    expected_lead = lead + frame.user_to_assistant + call + frame.assistant_to_user
    if not answered.startswith(expected_lead) or not answered.endswith(frame.generation):
        return None, "the chat template does not frame a tool result as the next user message"
    wrapped = answered[len(expected_lead): len(answered) - len(frame.generation)]
    opening, found_result, closing = wrapped.partition(r1)
    if not found_result:
        return None, "the chat template rewrites tool results (escapes them) instead of framing them"
    return ToolFrame(block=block, result_open=opening, result_close=closing), ""
