"""A change that leaves a function returning a value on some paths and falling off its end on others.

ESLint's ``consistent-return`` ("Expected to return a value at the end of function") and pylint's
``inconsistent-return-statements`` (R1710) flag such a function: its callers get ``undefined`` / ``None`` where
they got a value. :func:`dropped_returns` reports the functions a change makes so, read from the source (not run):
each named function of the file before and after the change (Python by ``ast``, JavaScript by tree-sitter) that
returned a value and ended in a return, a throw or a branch of them before, and returns a value somewhere but can
reach its end after. Found by using the product: semver's caret fix, where the 1.5B's three candidates that passed
the one-off check all took ``return result`` out of ``Range.parseRange`` (the second call was served by the cache
the first one filled). Only what the change brings is named: a function that already fell off its end is left
alone, so the reading's own shortcuts (a ``switch`` or loop is never taken to end the function) weigh on the
before and the after alike.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import tree_sitter

from contenox.workspace._languages import grammar, language_for

__all__ = ["dropped_returns"]

_JS_FUNCTIONS = ("function_declaration", "generator_function_declaration", "method_definition", "function_expression",
                 "function", "arrow_function", "generator_function")


def dropped_returns(path: str, before: str | None, after: str | None) -> str | None:
    """The functions ``after`` (a file's text once a change is laid on it) leaves returning a value on some paths
    and able to reach their end without one, where ``before`` ended every path in a return or a throw (in words,
    one line each, with the line the function starts on); None when the change brings none, the file is new or
    deleted, neither Python nor JavaScript, or either text does not parse."""
    if before is None or after is None:
        return None
    read = _python if path.endswith((".py", ".pyw")) else _javascript if language_for(path) == "javascript" else None
    if read is None:
        return None
    old, new = read(before), read(after)
    if old is None or new is None:
        return None
    found = [f"`{name}` (line {line}) returns a value on some paths and now reaches its end without one"
             for name, (line, returns, ends) in new.items()
             if returns and not ends and (was := old.get(name)) is not None and was[1] and was[2]]
    return f"{path}: " + "; ".join(found) if found else None


# -- Python ------------------------------------------------------------------------------------------------------------

def _python(text: str) -> dict[str, tuple[int, bool, bool]] | None:
    """Each function's qualified name: (its line, returns a value somewhere, every path ends in a return or raise)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    out: dict[str, tuple[int, bool, bool]] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                if not _generator(child):
                    out.setdefault(name, (child.lineno, any(r.value is not None for r in _own_returns(child)),
                                          _py_ends(child.body)))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")

    visit(tree, "")
    return out


def _own(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's body, not those of the functions, lambdas and classes defined in it."""
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            yield child
            yield from _own(child)


def _own_returns(fn: ast.AST) -> list[ast.Return]:
    return [n for n in _own(fn) if isinstance(n, ast.Return)]


def _generator(fn: ast.AST) -> bool:
    return any(isinstance(n, ast.Yield | ast.YieldFrom) for n in _own(fn))


def _py_ends(body: list[ast.stmt]) -> bool:
    """Every path through ``body`` ends in a return or a raise: one of its statements does (what follows it is
    never reached; ``while True`` without ``break`` counts as never ending; a ``match`` or ``for`` does not end it)."""
    return any(_py_stmt_ends(statement) for statement in body)


def _py_stmt_ends(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Return | ast.Raise):
        return True
    if isinstance(statement, ast.If):
        return _py_ends(statement.body) and _py_ends(statement.orelse)
    if isinstance(statement, ast.With | ast.AsyncWith):
        return _py_ends(statement.body)
    if isinstance(statement, ast.Try):
        if _py_ends(statement.finalbody):
            return True
        body_ends = _py_ends(statement.body) or _py_ends(statement.orelse)  # (``else`` runs when the body ends not)
        return body_ends and all(_py_ends(h.body) for h in statement.handlers)
    if isinstance(statement, ast.While) and isinstance(statement.test, ast.Constant) and statement.test.value is True:
        return not _breaks(statement)
    return False


def _breaks(loop: ast.AST) -> bool:
    """A ``break`` of ``loop`` itself in its body (one in a loop or function nested in it is that one's)."""
    for child in ast.iter_child_nodes(loop):
        if isinstance(child, ast.Break):
            return True
        if not isinstance(child, ast.For | ast.AsyncFor | ast.While | ast.FunctionDef | ast.AsyncFunctionDef
                          | ast.Lambda | ast.ClassDef) and _breaks(child):
            return True
    return False


# -- JavaScript --------------------------------------------------------------------------------------------------------

def _javascript(text: str) -> dict[str, tuple[int, bool, bool]] | None:
    """Each named function with a block body (a declaration, a method, a function or arrow function given to a
    name): (its line, returns a value somewhere, every path ends in a return or throw)."""
    tree = grammar("javascript").parser.parse(text.encode("utf-8"))
    if tree.root_node.has_error:
        return None
    out: dict[str, tuple[int, bool, bool]] = {}
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        stack.extend(reversed(node.named_children))
        if node.type not in _JS_FUNCTIONS or node.type.startswith("generator"):
            continue
        body = node.child_by_field_name("body")
        name = _js_name(node)
        if body is None or body.type != "statement_block" or name is None:
            continue
        out.setdefault(name, (node.start_point[0] + 1, _js_returns_value(body), _js_ends(body)))
    return out


def _js_name(node: tree_sitter.Node) -> str | None:
    """``Class.method``, a declaration's name, or the name a function or arrow function is given
    (``const f = () => {}``, ``obj.f = function () {}``, ``f: function () {}``); None: anonymous."""
    own = node.child_by_field_name("name")
    if own is not None and own.text is not None:
        name = own.text.decode("utf-8", "replace")
        if node.type == "method_definition":
            klass = node.parent.parent if node.parent is not None else None
            named = klass.child_by_field_name("name") if klass is not None else None
            if named is not None and named.text is not None:
                return f"{named.text.decode('utf-8', 'replace')}.{name}"
        return name
    parent = node.parent
    if parent is None:
        return None
    target = parent.child_by_field_name("name") if parent.type == "variable_declarator" else \
        parent.child_by_field_name("left") if parent.type == "assignment_expression" else \
        parent.child_by_field_name("key") if parent.type == "pair" else None
    return target.text.decode("utf-8", "replace") if target is not None and target.text is not None else None


def _js_returns_value(body: tree_sitter.Node) -> bool:
    stack = list(body.named_children)
    while stack:
        node = stack.pop()
        if node.type in _JS_FUNCTIONS or node.type in ("class_declaration", "class"):
            continue
        if node.type == "return_statement" and any(c.type != "comment" for c in node.named_children):
            return True
        stack.extend(node.named_children)
    return False


def _js_ends(node: tree_sitter.Node | None) -> bool:
    """Every path through ``node`` (a statement) ends in a return or a throw."""
    if node is None:
        return False
    if node.type in ("return_statement", "throw_statement"):
        return True
    if node.type == "statement_block":  # one statement that ends it is enough: what follows is never reached
        return any(_js_ends(c) for c in node.named_children if c.type != "comment")
    if node.type == "if_statement":
        alternative = node.child_by_field_name("alternative")
        if alternative is None:
            return False
        branch = next((c for c in alternative.named_children if c.type != "comment"), None) \
            if alternative.type == "else_clause" else alternative
        return _js_ends(node.child_by_field_name("consequence")) and _js_ends(branch)
    if node.type == "try_statement":
        final = node.child_by_field_name("finalizer")
        if final is not None and _js_ends(final.child_by_field_name("body") or final):
            return True
        handler = node.child_by_field_name("handler")
        handled = handler is None or _js_ends(handler.child_by_field_name("body"))
        return _js_ends(node.child_by_field_name("body")) and handled
    return False
