"""Render outputs: one generator module + one Jinja2 template per output file.

An output module exposes ``FILE`` (the name under ``generated/``), ``TEMPLATE`` (the
name under ``templates/``), ``TITLE`` and ``context(model) -> dict``. The template only
prints what the context hands it. Python outputs are formatted with black.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import jinja2
import xxhash

from mgpipe.gen import TEMPLATES_DIR
from mgpipe.gen import cache
from mgpipe.gen.model import Model

#: Every output, in generation order (G1..G8, then the Python tables).
OUTPUT_MODULES: tuple[str, ...] = (
    "mgpipe.gen.g1_tables",
    "mgpipe.gen.g2_thunks",
    "mgpipe.gen.g3_wire",
    "mgpipe.gen.g3b_wire_layout",
    "mgpipe.gen.g4_verify",
    "mgpipe.gen.g5_filled",
    "mgpipe.gen.g5b_fill_points",
    "mgpipe.gen.g6_coverage",
    "mgpipe.gen.g7_spans",
    "mgpipe.gen.g8_ownership",
    "mgpipe.gen.py_tables",
)


@dataclass(frozen=True)
class Output:
    name: str  # file name under the output directory
    text: str


def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES_DIR)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["pyrepr"] = repr
    return env


def outputs() -> list[ModuleType]:
    return [importlib.import_module(m) for m in OUTPUT_MODULES]


#: model methods -> the fields they read
_METHOD_READS: dict[str, tuple[str, ...]] = {
    "struct": ("structs",), "enum": ("enums",), "payload_structs": ("calls", "structs"),
    "name_of": ("names",), "rows_of": ("lists",),
}


class ModelView:
    """The model as one output sees it: only the fields its ``READS`` declares.

    Reading anything else is an error, so an output's provenance header (the inputs of
    its ``READS``) can never leave out an input the output depends on.
    """

    def __init__(self, model: Model, reads: tuple[str, ...]) -> None:
        self._model = model
        self._reads = frozenset(reads)

    def __getattr__(self, name: str) -> object:
        needs = _METHOD_READS.get(name, (name,))
        if not self._reads.issuperset(needs):
            raise AttributeError(f"this output reads model.{name} without naming "
                                 f"{', '.join(needs)} in its READS")
        return getattr(self._model, name)


def provenance(model: Model, reads: tuple[str, ...]) -> dict[str, object]:
    """The header facts of an output that reads ``reads``: its inputs and their fingerprint;
    the build fingerprint (xxh64 of PipeCalls.def) only when it reads the calls."""
    inputs = model.inputs_of(reads)
    digest = xxhash.xxh64("".join(f"{f.path}\0{f.fingerprint}\n" for f in inputs).encode())
    return {"inputs": inputs, "input_fingerprint": digest.hexdigest(),
            "build_fingerprint": model.catalogue_fingerprint if "calls" in reads else None}


def render_one(module: ModuleType, model: Model, env: jinja2.Environment | None = None) -> Output:
    env = env or _env()
    view = ModelView(model, module.READS)
    ctx = {"model": view, "title": module.TITLE, "file": module.FILE,
           **provenance(model, module.READS), **module.context(view)}
    text = env.get_template(module.TEMPLATE).render(**ctx)
    if module.FILE.endswith(".py"):
        text = format_python(text)
    return Output(module.FILE, text)


def _black_version() -> str:
    from importlib.metadata import version

    return version("black")


def format_python(text: str) -> str:
    """black, memoised on disk by the xxh64 of the unformatted text and black's version.

    black is imported only on a cache miss: a warm `gen --check` never pays for it.
    """
    key = xxhash.xxh64(f"{_black_version()}\0{text}".encode()).hexdigest()
    path = cache.entry("black", key, "py")
    hit = cache.read(path)
    if hit is not None:
        return hit
    import black

    out = black.format_str(text, mode=black.Mode(line_length=100))
    cache.write(path, out)
    return out


def missing_for_outputs(model: Model) -> list[str]:
    """``kind name`` of each declaration an output reads by name that the model lacks.

    An output module may declare ``NEEDS = (("struct", name), ("constant", name), ...)``;
    MobileGL's tree, for one, declares no wire record header of its own (its generator
    writes one), so its outputs wait for mgpipe's overlay to state it."""
    have = {"struct": {s.name for s in model.structs}, "constant": {n for n, _ in model.constants},
            "enum": {e.name for e in model.enums}}
    return [f"{kind} {name}" for m in outputs() for kind, name in getattr(m, "NEEDS", ())
            if name not in have[kind]]


def render_all(model: Model) -> list[Output]:
    missing = missing_for_outputs(model)
    if missing:
        from mgpipe.gen.errors import GenError

        where = model.inputs[0].path if model.inputs else "<catalogue>"
        raise GenError(where.rsplit("/", 1)[0] + "/PipeCalls.def", 1, 1, "HEADER-VOCABULARY",
                       f"the headers declare no {', no '.join(dict.fromkeys(missing))}, which the "
                       f"outputs are rendered from, expected them in the headers (or mgpipe's overlay)")
    env = _env()
    return [render_one(m, model, env) for m in outputs()]


def template_path(module: ModuleType) -> Path:
    return TEMPLATES_DIR / module.TEMPLATE


__all__ = ["OUTPUT_MODULES", "Output", "outputs", "render_all", "render_one"]
