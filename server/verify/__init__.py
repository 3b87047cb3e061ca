"""contenox.verify: checking a proposed change before it is offered.

The check command and where it came from (:mod:`command`), the user's consent (:mod:`consent`), a scratch copy
of the workspace (:mod:`scratch`), the one command runner (:mod:`runner`), whether a check's run before any change
can judge one (:mod:`usable`), the failing run traced (:mod:`trace`), the grammar that makes a candidate
an edit of real lines (:mod:`grammar`) and the typed report (:mod:`report`). The node draws the candidates and
decides; nothing here touches the engine or the user's files.
"""

from contenox.verify.command import (
    CheckCommand,
    command_from_request,
    command_from_terminal,
    consent_scope,
    covered_by,
    pasted_run,
    project_test_command,
    resolve_check_command,
    source_words,
    spectrum_command,
    suite_command,
    test_file_command,
    unusable_terminal_command,
)
from contenox.verify.consent import Consent, ConsentStore
from contenox.verify.grammar import (
    LineRepair,
    choice_grammar,
    diff_call_grammar,
    edit_block_grammar,
    edit_blocks_grammar,
    function_grammar,
    line_repair,
    number_grammar,
    rename_grammar,
)
from contenox.verify.localize import Frame, frames, is_test_path
from contenox.verify.report import (
    CandidateResult,
    Verification,
    changed_lines,
    failed_test_ids,
    failed_test_names,
    failing_tests,
    passing_tests,
)
from contenox.verify.runner import CheckRun, run_check
from contenox.verify.scratch import EditLike, ScratchTree, python_env
from contenox.verify.syntax import code_unchanged, undefined_names, unparsable

__all__ = [
    "CandidateResult",
    "CheckCommand",
    "CheckRun",
    "Consent",
    "ConsentStore",
    "EditLike",
    "Frame",
    "LineRepair",
    "ScratchTree",
    "Verification",
    "changed_lines",
    "choice_grammar",
    "code_unchanged",
    "command_from_request",
    "command_from_terminal",
    "consent_scope",
    "covered_by",
    "diff_call_grammar",
    "edit_block_grammar",
    "edit_blocks_grammar",
    "failed_test_ids",
    "failed_test_names",
    "failing_tests",
    "frames",
    "function_grammar",
    "is_test_path",
    "line_repair",
    "number_grammar",
    "passing_tests",
    "pasted_run",
    "project_test_command",
    "python_env",
    "rename_grammar",
    "resolve_check_command",
    "run_check",
    "source_words",
    "spectrum_command",
    "suite_command",
    "test_file_command",
    "undefined_names",
    "unparsable",
    "unusable_terminal_command",
]
