"""What a question asks: a change, or to be told how code works (read by the planner for the answer's format, by the
node for whether a turn verifies and what its agent may do).

Words, not a model: a question's sentences are read for the verbs that ask for a change ("Fix it.", "Rename foo to
bar"), for a failure ("Why does test_x fail?") and for the words that only ask to see or to be told ("Where is...",
"How does ... work?").
"""

from __future__ import annotations

import re

from contenox.answer.edits import ProposedEdits

__all__ = ["asks_for_change", "asks_how_it_works", "asks_only_to_read", "asks_questions_only", "asks_test_change",
           "asks_to_edit", "explains_only"]

_HOW = re.compile(r"\b(?:how (?:does|do|is|are|did|can|will)|walk (?:me )?through|what happens|step by step|"
                  r"(?:call|code) (?:path|flow|chain)|flow|get(?:s)? (?:there|to)|end(?:s)? up|evaluated|"
                  r"trace|follow)\b", re.IGNORECASE)
_VERB_ASKED = re.compile(r"(?:^|[.!?:;\n]\s+|\b(?:and|then|so|to)\s+|"
                         r"\bhow (?:do|can|could|would|should) (?:i|we|you)\s+)"
                         r"(?:(?:please|now|then|also|just|can you|could you|would you|let's|i want you to|i need to|"
                         r"we need to),?\s+)*"
                         r"(?:fix|change|rename|refactor|implement|add|update|patch|modify|edit|replace|remove|"
                         r"make|write|create|delete|move|extract|export|drop|refuse|propose|convert|split|merge)\b",
                         re.IGNORECASE)
"""A change asked for: the verb begins a sentence or a clause ("Then add a flag", "... and fix it"), follows "to"
or a "can you" ("I need to add", "could you rename"), or "how do I" asks how to make it. Not the same verb where
the question says what the code does ("where does the state machine move", "how does the cache update its
entries?")."""


def asks_how_it_works(text: str) -> bool:
    """The question asks how code works, through its calls ("How does X get there?", "Walk me through what happens
    between A and B", "How is f evaluated?", "Trace the test down to the code that computes the key") and asks for
    no change: the questions the call tree is for."""
    return _HOW.search(text) is not None and _VERB_ASKED.search(text.strip()) is None


_CHANGE = re.compile(r"\b(fix|fixes|fixing|change|rename|refactor|implement|add|update|correct|patch|repair|"
                     r"modify|edit|replace|remove|make (?:it|the|sure)|propose|should (?:return|raise|accept|be)|"
                     r"diff|bug|fails?|failing|failure|broken|crash(?:es|ing)?|wrong)\b",
                     re.IGNORECASE)
"""A question that asks for a change, or about a failure (whose answer a user acts on with a fix)."""


_FAILED_NOW = re.compile(r"\b(?:errors?|exceptions?|raises|used to|no longer|stopped|any ?more)\b", re.IGNORECASE)
"""Words of a question about what its failing run shows ("come back with error=True", "which step stopped handling
the prefix", "no longer matches"): asked over that run, it is about the failure."""


def asks_for_change(prompt: str, edits: ProposedEdits, terminal: str = "") -> bool:
    """A turn verifies when its question asks for a change or is about a bug or a failure (the failing run's fix is
    what the user needs, even when the answer only explains it: a question over a failing run that speaks of an
    error, a failure or what used to happen verifies though its answer wrote no edit), or its answer proposes one to
    a question that is not only asking to see or to be told how the code works (:func:`explains_only`)."""
    if not terminal.strip() and asks_questions_only(prompt):  # only where or how: its "add" names no change asked
        return False
    if terminal.strip() and _FAILED_NOW.search(prompt):  # "these cases come back with error=True" over the failing run
        return True
    return bool(_CHANGE.search(prompt)) or (bool(edits.edits) and not explains_only(prompt, terminal))


def explains_only(prompt: str, terminal: str = "") -> bool:
    """The question asks to see, find or explain code, or how it works ("How does parse_duration decide...? Walk me
    through the modules involved."), for no change, and carries no failing run: an edit its answer writes anyway is
    the model's own idea, offered as written, not verified (the 1.5B answered that question with an edit of
    `parse_datetime`; verified, the offered answer became a repair candidate's lone edit block and the explanation
    was gone). A question asked over a failing run ("Trace from the test into the parser") is about the failure."""
    return not terminal.strip() and not asks_to_edit(prompt) and (asks_only_to_read(prompt)
                                                                     or asks_how_it_works(prompt))


_ASKED = re.compile(r"[^.?!]*\?")
_FAILURE = re.compile(r"\b(?:bug|bugs|fails?|failing|failure|broken|crash(?:es|ing)?|wrong|errors?|should|fix|"
                      r"fixes|fixed|patch|diff|used to)\b", re.IGNORECASE)
"""Words of a question about a failure, what the code should do, or its fix ("Where is this handled, and what's
the fix?"): a question with one verifies."""


def asks_questions_only(prompt: str) -> bool:
    """Every sentence that asks something is a question that begins with what, where, which, how...: "date_isoformat
    and the others take format strings like '%Y-W%W-%w'. Where are those directives turned into text, and where
    would I add a new one?" asks where to add it, not for it to be added (the 1.5B's answer to it wrote an edit;
    verified, a repair candidate's lone edit block became the offered answer and the explanation was gone). Not a
    question that tells the node to change something (:func:`asks_to_edit`) or is about a failure, what the code
    should do or its fix ("Where is the bug?", "Why does it fail?", "Where is this handled, and what's the fix?")."""
    asked = [sentence.strip() for sentence in _ASKED.findall(prompt)]
    return (bool(asked) and all(_READ_ONLY.match(sentence) for sentence in asked) and not asks_to_edit(prompt)
            and not _FAILURE.search(prompt))


_EDIT = re.compile(r"(?:^|[.!?:;\n]\s*|\band\s+)(?:(?:please|now|then|so|and|can you|could you|would you|let's|"
                   r"i want you to),?\s+)*(?:fix|change|rename|refactor|implement|add|update|correct|patch|repair|"
                   r"modify|edit|replace|remove|delete|extract|export|make|drop|refuse|give|move|propose)\b|"
                   r"\b(?:the|a|me the) (?:diff|patch)\b", re.IGNORECASE)


def asks_to_edit(prompt: str) -> bool:
    """The question asks for a change to be made: a sentence that begins with what to do ("Fix it.", "Rename foo to
    bar", "Please add a flag", "Make pip refuse it") or asks for the diff; not one only asking about a failure ("Why
    does test_x fail?", "Trace it down") or about code whose name is such a word ("What does add do?"): its answer
    should hold the edit (:mod:`contenox.node`'s edit step asks for one when it does not)."""
    return bool(_EDIT.search(prompt.strip()))


_READ_ONLY = re.compile(r"^\s*(?:please\s+)?(?:show(?: me)?|print|display|open|read|what(?:'s| is| are| does| do)?|"
                        r"where|which|who|why|how (?:does|do|is|are)|explain|describe|summari[sz]e|list|find|"
                        r"tell me|is|are|does|do|did|can|will|has|have|if)\b", re.IGNORECASE)
_MAKING = re.compile(r"\b(?:make|write|create|delete)\b", re.IGNORECASE)


def asks_only_to_read(prompt: str) -> bool:
    """The question only asks to see, find or explain ("Show me the contents of notes/todo.txt.", "Where is helper
    defined?", or yes or no: "Is range parsing cached?", "If a variable is already set, does loading overwrite
    it?") and asks for no change (:func:`asks_for_change`'s words, or make/write/create/delete): its agent
    turn proposes no edit. (The 1.5B, shown a to-do file it was asked to show, went on to do the to-do's first
    item as a ``propose_edit``; told in a tool result that no edit was asked for, it answered that the file did
    not exist.)"""
    return bool(_READ_ONLY.match(prompt)) and not _CHANGE.search(prompt) and not _MAKING.search(prompt)


_TEST_CHANGE = re.compile(
    r"\b(?:update|change|rewrite|edit|correct|adjust|amend|modify|relax|loosen|tighten)\w*\s+(?:the\s+|this\s+|that\s+|"
    r"my\s+|our\s+|its\s+)?(?:[\w.:]+\s+)?[\w./:-]*\btests?(?:\b|_)[\w./:-]*(?!\s+(?:pass|passes|passing)\b)|"
    r"\btests?\b[^.?!\n]{0,60}?\b(?:is|are|was|were|looks?|seems?)\s+(?:\w+\s+)?(?:wrong|outdated|incorrect|stale|out of "
    r"date|mistaken|buggy)\b|\b(?:fix|bug)\s+(?:is\s+)?in\s+the\s+tests?\b", re.IGNORECASE)


def asks_test_change(prompt: str) -> bool:
    """The question asks for a test itself to change ("update the test", "the test is wrong", "the bug is in the
    test"), not for the code a failing test checks ("test_total fails, fix it", "fix the failing test", "make the
    test pass"): only then may a fix checked against that failing test edit it."""
    return bool(_TEST_CHANGE.search(prompt))
