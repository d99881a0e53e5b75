"""The POD-only and reserved-name rules, unit by unit (the self-test plants each in a copy)."""

from __future__ import annotations

import pytest

from mgpipe.gen import ORIGINAL_DIR
from mgpipe.gen.controls import CONTROLS
from mgpipe.gen.selftest import run_control
from mgpipe.gen.wiregates import name_problem


@pytest.mark.parametrize("name, namespace_scope, why", [
    ("class", False, "a C++ keyword"),
    ("__x", False, "contains '__'"),
    ("a__b", True, "contains '__'"),
    ("_Foo", False, "an underscore and a capital letter"),
    ("_foo", True, "at namespace scope"),
])
def test_reserved_names_are_refused(name: str, namespace_scope: bool, why: str) -> None:
    problem = name_problem(name, namespace_scope)
    assert problem is not None and why in problem


@pytest.mark.parametrize("name", ["Flush", "_foo", "m_x", "ClassId", "Float16"])
def test_ordinary_names_pass(name: str) -> None:
    assert name_problem(name, namespace_scope=False) is None


def test_the_pod_controls_cover_every_kind_the_rule_names() -> None:
    names = {c.name for c in CONTROLS if c.gate == "WIRE-POD"}
    for kind in ("pointer", "reference", "function-pointer", "anonymous-union", "named-union",
                 "long-double", "int128", "float16", "vector", "bit-field", "not-fixed-width",
                 "packed-attribute", "pragma-pack"):
        assert f"pod-{kind}" in names


def test_an_anonymous_union_is_refused_without_an_absolute_path() -> None:
    # the pod plants are the original shape's: on a MobileGL-shaped tree WIRE-POD judges the
    # wire structs only, so a standalone struct appended there is no wire struct (gen's note)
    r = run_control("pod-anonymous-union", ORIGINAL_DIR)
    assert r.status == "PASS", r.reason
