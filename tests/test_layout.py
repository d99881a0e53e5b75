"""libclang layouts: sizes/offsets as the compiler lays them out, enums, constants, cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from mgpipe.gen import layout
from mgpipe.gen.errors import GenError, GenErrors
from mgpipe.gen.layout import Layouts, flatten, read_headers

TYPES_H = """\
#pragma once
#include <cstdint>
#include <cstddef>
typedef uint8_t  Uint8;
typedef uint16_t Uint16;
typedef uint32_t Uint32;
typedef int64_t  Int64;
typedef float    Float;
typedef double   Double;
"""

PODS_H = """\
#pragma once
#include "Types.h"
namespace mgp {
struct Padded {
    Uint8  A;
    Uint32 B;
    Uint16 C;
};
struct StencilFaceState { Uint8 Func; Uint8 FailOp; Uint16 Ref; Uint32 ValueMask; };
struct Params {
    Uint8 Mode;
    StencilFaceState StencilStates[2];
    Float BlendColor[4];
    Double Depth;
    bool Enabled;
    Int64 Grid[2][3];
};
enum class Compare : uint8_t { Never = 0, Always = 7 };
enum Mask : uint32_t { kMaskNone = 0, kMaskAll = 0xFFFFFFFFu };
enum Signed : int16_t { kNeg = -2, kPos = 5 };
enum { kMGPipeCsoCacheCapacity = 64, kOther = 3 };
struct WithEnums { Compare Cmp; Signed S; Mask M; };
struct Forward;
}
"""


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MGPIPE_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def include(tmp_path: Path) -> Path:
    inc = tmp_path / "include"
    inc.mkdir()
    (inc / "Types.h").write_text(TYPES_H)
    (inc / "Pods.h").write_text(PODS_H)
    return inc


def _read(include: Path, **kw: object) -> Layouts:
    return read_headers(include, display_root=include.parent, **kw)  # type: ignore[arg-type]


def test_struct_with_padding_has_compiler_offsets_size_and_align(include: Path) -> None:
    s = _read(include).structs["Padded"]
    assert (s.size, s.align) == (12, 4)
    assert [(m.name, m.offset, m.size, m.type, m.scalar) for m in s.members] == [
        ("A", 0, 1, "Uint8", "u8"),
        ("B", 4, 4, "Uint32", "u32"),
        ("C", 8, 2, "Uint16", "u16"),
    ]
    assert (s.path, s.line, s.col) == ("include/Pods.h", 4, 8)
    assert [(m.line, m.col) for m in s.members] == [(5, 12), (6, 12), (7, 12)]


def test_arrays_and_nested_struct_arrays(include: Path) -> None:
    lay = _read(include)
    p = lay.structs["Params"]
    assert (p.size, p.align) == (104, 8)
    stencil = p.member("StencilStates")
    assert (stencil.offset, stencil.size, stencil.count, stencil.elem_size) == (4, 16, 2, 8)
    assert (stencil.struct, stencil.scalar, stencil.type) == (
        "StencilFaceState",
        None,
        "StencilFaceState[2]",
    )
    color = p.member("BlendColor")
    assert (color.offset, color.count, color.elem_size, color.scalar, color.type) == (
        20,
        4,
        4,
        "f32",
        "Float[4]",
    )
    assert (p.member("Depth").offset, p.member("Depth").scalar) == (40, "f64")
    assert (p.member("Enabled").scalar, p.member("Enabled").count, p.member("Enabled").dims) == (
        "b8",
        1,
        (),
    )
    grid = p.member("Grid")
    assert (grid.offset, grid.count, grid.dims, grid.elem_size, grid.scalar) == (
        56,
        6,
        (2, 3),
        8,
        "i64",
    )


def test_flatten_names_sub_members_with_absolute_offsets(include: Path) -> None:
    lay = _read(include)
    flat = {f.path: (f.offset, f.size, f.scalar) for f in flatten(lay, "Params")}
    assert flat["StencilStates[0].Func"] == (4, 1, "u8")
    assert flat["StencilStates[1].Ref"] == (14, 2, "u16")
    assert flat["StencilStates[1].ValueMask"] == (16, 4, "u32")
    assert flat["BlendColor[3]"] == (32, 4, "f32")
    assert flat["Grid[1][2]"] == (96, 8, "i64")
    whole = {
        f.path: f.count for f in flatten(lay, "Params", "Rs.", 100, expand_scalar_arrays=False)
    }
    assert whole["Rs.BlendColor"] == 4
    assert "Rs.StencilStates[1].Ref" in whole
    assert [f.offset for f in flatten(lay, "Params", "Rs.", 100)][0] == 100


def test_enums_keep_underlying_type_values_and_locations(include: Path) -> None:
    lay = _read(include)
    cmp_ = lay.enums["Compare"]
    assert (cmp_.scoped, cmp_.underlying, cmp_.values()) == (True, "u8", {"Never": 0, "Always": 7})
    assert (cmp_.path, cmp_.line) == ("include/Pods.h", 18)
    assert lay.enums["Mask"].values() == {"kMaskNone": 0, "kMaskAll": 0xFFFFFFFF}
    assert (lay.enums["Signed"].underlying, lay.enums["Signed"].values()["kNeg"]) == ("i16", -2)
    w = lay.structs["WithEnums"]
    assert [(m.name, m.size, m.scalar, m.enum) for m in w.members] == [
        ("Cmp", 1, "u8", "Compare"),
        ("S", 2, "i16", "Signed"),
        ("M", 4, "u32", "Mask"),
    ]


def test_anonymous_enum_enumerators_are_constants_with_location(include: Path) -> None:
    lay = _read(include)
    c = lay.constants["kMGPipeCsoCacheCapacity"]
    assert (c.value, c.path, c.line, c.col) == (64, "include/Pods.h", 21, 8)
    assert lay.constants["kOther"].value == 3
    assert not any(name.startswith("(") for name in lay.enums)


def test_only_catalogue_definitions_are_listed(include: Path) -> None:
    lay = _read(include)
    assert set(lay.structs) == {"Padded", "StencilFaceState", "Params", "WithEnums"}
    assert lay.headers == ("include/Pods.h", "include/Types.h")


def test_compile_error_is_header_compile_at_its_location(include: Path) -> None:
    (include / "Bad.h").write_text(
        '#pragma once\n#include "Types.h"\nstruct Bad {\n    Uint33 X;\n};\n'
    )
    with pytest.raises((GenError, GenErrors)) as info:
        _read(include)
    first = str(info.value).splitlines()[0]
    assert first.startswith("include/Bad.h:4:5: HEADER-COMPILE: "), first
    assert "Uint33" in first


def test_missing_header_named_in_the_list_is_header_compile(include: Path) -> None:
    with pytest.raises(GenError) as info:
        _read(include, headers=["Pods.h", "Nope.h"])
    assert str(info.value).startswith("include/Nope.h:1:1: HEADER-COMPILE: ")


def test_cache_hit_skips_libclang(include: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _read(include)

    def no_libclang(*args: object, **kw: object) -> Layouts:
        raise AssertionError("libclang was called on a cache hit")

    monkeypatch.setattr(layout, "_parse_with_libclang", no_libclang)
    monkeypatch.setattr(layout, "system_args", no_libclang)
    again = _read(include)
    assert again == first
    assert again.structs["Params"].members == first.structs["Params"].members

    (include / "Pods.h").write_text(PODS_H.replace("Uint16 C;", "Uint32 C;"))
    with pytest.raises(AssertionError, match="cache hit"):
        _read(include)  # a changed header is a miss: libclang must run again


def test_layouts_round_trip_through_json(include: Path) -> None:
    lay = _read(include, use_cache=False)
    assert Layouts.from_json(lay.to_json()) == lay
