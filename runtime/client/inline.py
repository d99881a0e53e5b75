"""Inline a method's body at one call site of another (the draws' validate, issue 20).

A CPython call costs a frame: on the steady-state draw, ``cso.validate(rs)`` is about a
tenth of the client's time. :func:`inline_call` builds a copy of a host function whose
statement ``obj.method(arg, ...)`` is replaced by the callee's own body -- read from its
source, so the callee stays the one place its logic is written -- behind a guard that
the object is of the class the body was read from (any other object, such as a bench
strategy standing where the cache stands, takes the call as written):

    if obj.__class__ is <class>:
        <the callee's body, ``self`` renamed to obj, its parameters to the arguments,
         its own locals prefixed so they cannot meet the host's>
    else:
        obj.method(arg, ...)

What the callee may be: a plain function with plain positional parameters, called with
plain names as its arguments, with no ``return`` but a last one (whose value the site
assigns: ``a, b = obj.method(x)``), and no ``yield``, ``await``, ``global``,
``nonlocal``, nested function, lambda, class or ``super()``; a parameter it assigns
becomes a local of its own. Its module's globals are reached under prefixed names added
to the host's module. Anything else is :class:`InlineError` when the module loads, never
a different program: one line ``file:line:col: INLINE-SHAPE: what, expected what`` at the
callee's statement or the call site in its source file (the CLI prints it and exits 2).
The copy's source (``ast.unparse``) is in ``linecache`` under its own file name, so a
traceback through it shows its lines.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import linecache
import textwrap
from collections.abc import Callable
from types import FunctionType
from typing import Any

__all__ = ["GATE", "InlineError", "inline_call"]

#: the gate an :class:`InlineError` names
GATE = "INLINE-SHAPE"

_FORBIDDEN = (ast.Return, ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal,
              ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)  # fmt: skip

Where = tuple[str, int, int]


class InlineError(RuntimeError):
    """A callee or call site :func:`inline_call` cannot copy faithfully:
    ``file:line:col: INLINE-SHAPE: text`` (``located``: those five, for the CLI's
    one-line refusal)."""

    def __init__(self, where: Where, text: str) -> None:
        self.located = (*where, GATE, text)
        super().__init__(f"{where[0]}:{where[1]}:{where[2]}: {GATE}: {text}")


class _Source:
    """A function's parsed definition, its nodes at their lines and columns in its file."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        code = getattr(fn, "__code__", None)
        self.path = code.co_filename if code is not None else "<unknown>"
        self.what = getattr(fn, "__qualname__", repr(fn))
        try:
            lines, first = inspect.getsourcelines(fn)
        except (OSError, TypeError) as exc:
            line = code.co_firstlineno if code is not None else 1
            raise InlineError((self.path, line, 1), f"{self.what} has no source to read "
                              f"({exc}), expected a function defined in a source file") from None
        indent = len(lines[0]) - len(lines[0].lstrip())  # what dedent takes off every line
        node = ast.parse(textwrap.dedent("".join(lines))).body[0]
        for sub in ast.walk(node):
            if isinstance(sub, (ast.stmt, ast.expr, ast.arg, ast.excepthandler)):
                sub.lineno += first - 1
                sub.col_offset += indent
                if sub.end_lineno is not None and sub.end_col_offset is not None:
                    sub.end_lineno += first - 1
                    sub.end_col_offset += indent
        if not isinstance(node, ast.FunctionDef):
            raise InlineError(self.at(node), f"{self.what} is a {type(node).__name__}, "
                                             "expected a plain function definition")  # fmt: skip
        self.node = node

    def at(self, node: ast.AST) -> Where:
        """``(file, line, col)`` of ``node`` (1-based column)."""
        return self.path, getattr(node, "lineno", 1), getattr(node, "col_offset", 0) + 1


def _is_site(stmt: ast.stmt, site: str) -> bool:
    return isinstance(stmt, (ast.Expr, ast.Assign)) and ast.unparse(stmt) == site


class _Rename(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.AST:  # noqa: N802 (ast's visitor name)
        new = self.names.get(node.id)
        return ast.copy_location(ast.Name(new, node.ctx), node) if new else node

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.AST:  # noqa: N802
        if node.name in self.names:
            node.name = self.names[node.name]
        self.generic_visit(node)
        return node


def _body(callee: FunctionType, call: ast.Call, site_at: Where, host_names: set[str],
          prefix: str, inner: tuple) -> tuple[list[ast.stmt], ast.expr | None, dict[str, Any]]:  # fmt: skip
    """The callee's statements renamed for the site ``call`` (its ``inner`` sites inlined
    first), the value of its final ``return`` (None: it has none), and the globals they
    need (by their new names)."""
    src = _Source(callee)
    node, what = src.node, src.what
    a = node.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults:
        raise InlineError(src.at(node), f"{what} takes *args, keywords or defaults, expected "
                                        "plain positional parameters")  # fmt: skip
    params = [p.arg for p in a.args]
    args = [call.func.value, *call.args]  # type: ignore[attr-defined]
    if call.keywords or len(args) != len(params) or not all(isinstance(x, ast.Name) for x in args):
        raise InlineError(site_at, f"the call of {what} passes {ast.unparse(call)!r}, expected "
                                   f"plain names, one per parameter ({', '.join(params)})")  # fmt: skip
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    result = None
    if body and isinstance(body[-1], ast.Return):  # a final return: the site's value
        result, body = body[-1].value or ast.Constant(None), body[:-1]
    needed: dict[str, Any] = {}
    for site, cls, method, *deeper in inner:  # (site, cls, method[, its own inner sites])
        needed.update(_splice(body, src, site, cls, method, callee.__globals__, *deeper))
    stores: set[str] = set()
    loads: dict[str, ast.Name] = {}
    for sub in (n for stmt in [*body, ast.Expr(result or ast.Constant(None))] for n in ast.walk(stmt)):
        if isinstance(sub, _FORBIDDEN):
            kind = type(sub).__name__
            raise InlineError(src.at(sub), f"{what} has a {kind} here, expected none (a "
                                           "Return only as its last statement)")  # fmt: skip
        if isinstance(sub, ast.Name):
            if sub.id == "super":
                raise InlineError(src.at(sub), f"{what} calls super(), expected no super()")
            if isinstance(sub.ctx, ast.Store):
                stores.add(sub.id)
            else:
                loads.setdefault(sub.id, sub)
        elif isinstance(sub, ast.ExceptHandler) and sub.name:
            stores.add(sub.name)
    names = {p: x.id for p, x in zip(params, args)}  # type: ignore[attr-defined]
    first: list[ast.stmt] = []
    for p in params:
        if p in stores:  # a parameter it assigns: a local of its own, bound to the argument
            first.append(ast.parse(f"{prefix}{p} = {names[p]}").body[0])
    names.update((n, f"{prefix}{n}") for n in stores)
    for n in sorted(set(loads) - stores - set(params)):
        if n in needed:
            continue  # an inner site's own global (already renamed)
        if n in callee.__globals__:
            names[n] = f"{prefix}{n}"
            needed[names[n]] = callee.__globals__[n]
        elif not hasattr(builtins, n):
            raise InlineError(src.at(loads[n]), f"{what} reads {n!r}, expected a name of "
                                                "its module or a builtin")  # fmt: skip
    renamed = {v for k, v in names.items() if k not in params or k in stores}
    clash = renamed & host_names
    if clash:
        raise InlineError(src.at(node), f"{what}'s renamed names {sorted(clash)} are the "
                                        "host's too, expected names of its own")  # fmt: skip
    ren = _Rename(names)
    return first + [ren.visit(s) for s in body], result and ren.visit(result), needed


def _splice(stmts_root: list[ast.stmt], host: _Source, site: str, cls: type, method: str,
            g: dict[str, Any], inner: tuple = ()) -> dict[str, Any]:  # fmt: skip
    """Replace the one statement ``site`` under ``stmts_root`` (``host``'s) with the guarded
    inline body of ``cls.method`` (see the module docstring); the globals it needs."""
    found: list[tuple[list[ast.stmt], int]] = []
    for root in stmts_root:
        for parent in ast.walk(root):
            for field in ("body", "orelse", "finalbody"):
                stmts = getattr(parent, field, None)
                if isinstance(stmts, list):
                    found += [(stmts, i) for i, s in enumerate(stmts)
                              if isinstance(s, ast.stmt) and _is_site(s, site)]  # fmt: skip
    found += [(stmts_root, i) for i, s in enumerate(stmts_root) if _is_site(s, site)]
    if len(found) != 1:
        at = host.at(found[1][0][found[1][1]]) if found else host.at(host.node)
        raise InlineError(at, f"{host.what} has {len(found)} statements {site!r}, expected "
                              "exactly one")  # fmt: skip
    stmts, i = found[0]
    stmt = stmts[i]
    call = stmt.value  # type: ignore[attr-defined]
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr == method and isinstance(call.func.value, ast.Name)):  # fmt: skip
        raise InlineError(host.at(stmt), f"{site!r} is no call of a name's .{method}(...), "
                                         f"expected obj.{method}(...)")  # fmt: skip
    host_names = {n.id for root in stmts_root for n in ast.walk(root) if isinstance(n, ast.Name)}
    prefix = f"_{method.lstrip('_')}_"
    body, result, needed = _body(getattr(cls, method), call, host.at(stmt), host_names,
                                 prefix, inner)  # fmt: skip
    if isinstance(stmt, ast.Assign):
        if result is None:
            raise InlineError(host.at(stmt), f"{site!r} assigns what {cls.__qualname__}."
                                             f"{method} returns, expected it to end in a "
                                             "return")  # fmt: skip
        body.append(ast.Assign(stmt.targets, result))
    cls_name = f"{prefix}class"
    if g.get(cls_name, cls) is not cls:
        raise InlineError(host.at(stmt), f"{cls_name!r} names another object in "
                                         f"{host.what}'s module, expected it free")  # fmt: skip
    needed[cls_name] = cls
    guard = ast.parse(f"if {call.func.value.id}.__class__ is {cls_name}:\n    pass\n"
                      "else:\n    pass").body[0]  # fmt: skip
    guard.body, guard.orelse = body, [stmt]  # type: ignore[attr-defined]
    stmts[i] = guard
    return needed


def inline_call(host: FunctionType, site: str, cls: type, method: str,
                inner: tuple = ()) -> FunctionType:  # fmt: skip
    """``host`` with its one statement ``site`` (``"cso.validate(rs)"``, or an assignment
    of the call's value, ``"a, b = obj.method(x)"``) running ``cls.method``'s body inline
    when the object is a ``cls``; ``inner``: ``(site, cls, method)`` triples inlined into
    that body first, in order, each with its own ``inner`` as a fourth item if it has
    one (see the module docstring)."""
    src = _Source(host)
    tree = src.node
    tree.decorator_list, tree.returns = [], None  # annotations would run at def time
    for a in ast.walk(tree.args):
        if isinstance(a, ast.arg):
            a.annotation = None
    g = host.__globals__
    needed = _splice(tree.body, src, site, cls, method, g, inner)
    for name, value in needed.items():
        if g.get(name, value) is not value:
            raise InlineError(src.at(tree), f"{name!r} names another object in "
                                            f"{host.__module__}, expected it free")  # fmt: skip
    text = ast.unparse(ast.fix_missing_locations(ast.Module([tree], [])))
    filename = f"<mgpipe inlined {host.__qualname__}: {cls.__qualname__}.{method}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    g.update(needed)
    ns: dict[str, Any] = {}
    exec(compile(text, filename, "exec"), g, ns)  # noqa: S102 - our own sources, rewritten
    fn: FunctionType = ns[host.__name__]
    fn.__defaults__, fn.__kwdefaults__ = host.__defaults__, host.__kwdefaults__
    fn.__doc__, fn.__qualname__, fn.__module__ = host.__doc__, host.__qualname__, host.__module__
    fn.__wrapped__ = host  # type: ignore[attr-defined]
    return fn
