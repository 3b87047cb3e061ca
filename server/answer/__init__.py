"""contenox.answer: what the model wrote, read back: its edits, tool calls and citations, trimmed and guarded.

The planner assembles the prompt; this package reads the answer. Edits in any format resolve to one model
(:mod:`contenox.answer.edits`: a file's text before and after) with one applier, :func:`~contenox.answer.edits.
apply_edit`; the formats are siblings: edit blocks (:mod:`~contenox.answer.blocks`, resolved by
:mod:`~contenox.answer.resolve`, renames carried by :mod:`~contenox.answer.renames`) and unified diffs
(:mod:`~contenox.answer.udiff`); the imports a change leaves undone are added by
:mod:`~contenox.answer.imports`. Beside them: tool calls (:mod:`~contenox.answer.toolcalls`), citations checked
against the workspace (:mod:`~contenox.answer.citations`), the inline completion's trimmer
(:mod:`~contenox.answer.fim_trim`) and the repetition guard (:mod:`~contenox.answer.repetition`). Pure text in,
text out (the unified diff's ``git apply`` in a scratch folder aside): it imports nothing of the product but its
errors and the explain types.
"""
