"""libclang's constant evaluator, for the ``constexpr`` integers a header defines.

The Python bindings do not wrap ``clang_Cursor_Evaluate``; this module declares it once
through ``ctypes``. :func:`evaluate` answers a ``constexpr`` variable's value: one integer,
or each element of a brace-initialised array (``Array<SizeT, 16> k = {0, offsetof(...)}``),
every element computed by the compiler, never read from the text.
"""

from __future__ import annotations

import ctypes
from functools import lru_cache

from clang.cindex import Cursor, CursorKind, conf

_INT_KIND = 1  # CXEval_Int


@lru_cache(maxsize=1)
def _lib():  # type: ignore[no-untyped-def]
    lib = conf.lib
    lib.clang_Cursor_Evaluate.restype = ctypes.c_void_p
    lib.clang_Cursor_Evaluate.argtypes = [Cursor]
    lib.clang_EvalResult_getKind.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getKind.restype = ctypes.c_int
    lib.clang_EvalResult_isUnsignedInt.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_isUnsignedInt.restype = ctypes.c_uint
    lib.clang_EvalResult_getAsUnsigned.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getAsUnsigned.restype = ctypes.c_ulonglong
    lib.clang_EvalResult_getAsLongLong.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getAsLongLong.restype = ctypes.c_longlong
    lib.clang_EvalResult_dispose.argtypes = [ctypes.c_void_p]
    return lib


def evaluate_expr(c: Cursor) -> int | None:
    """The integer value of an expression or variable cursor, or None."""
    lib = _lib()
    res = lib.clang_Cursor_Evaluate(c)
    if not res:
        return None
    try:
        if lib.clang_EvalResult_getKind(res) != _INT_KIND:
            return None
        if lib.clang_EvalResult_isUnsignedInt(res):
            return int(lib.clang_EvalResult_getAsUnsigned(res))
        return int(lib.clang_EvalResult_getAsLongLong(res))
    finally:
        lib.clang_EvalResult_dispose(res)


def evaluate(var: Cursor) -> tuple[int, ...] | None:
    """A ``constexpr`` variable's value(s): ``(v,)`` for an integer, the elements of its
    initializer list for an array; None when the compiler cannot reduce it to integers."""
    one = evaluate_expr(var)
    if one is not None:
        return (one,)
    for sub in var.walk_preorder():
        if sub.kind == CursorKind.INIT_LIST_EXPR:
            elems = [evaluate_expr(x) for x in sub.get_children()]
            if elems and all(e is not None for e in elems):
                return tuple(e for e in elems if e is not None)
            return None
    return None


__all__ = ["evaluate", "evaluate_expr"]
