"""The runtime's named refusals (seed 001: ``Fatal{Kind, "Reason"}``).

Every refusal the runtime raises for a protocol, ring or handle fault is a
:class:`PipeFatal`. ``kind`` is the C++ ``Fatal`` kind, ``reason`` names the place,
and ``str()`` spells it the way the C++ side logs it::

    >>> str(ProtocolCorruption("SetDynamicState.Blob"))
    'Fatal{ProtocolCorruption, "SetDynamicState.Blob"}'

:class:`HandleRefused` is a :class:`ProtocolCorruption`: a decoder fed arbitrary bytes
may only ever raise ``ProtocolCorruption`` (handle faults included).
"""

from __future__ import annotations

__all__ = [
    "PipeFatal",
    "ProtocolCorruption",
    "HandleRefused",
    "RingOverrun",
    "BarrierTimeout",
    "NullEntry",
    "TransportShutdown",
    "HandleExhausted",
    "SecondProducer",
]


class PipeFatal(Exception):
    """``Fatal{kind, "reason"}``: the pipe cannot continue past this point."""

    kind: str = "Fatal"

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(kind, reason)
        self.kind = kind
        self.reason = reason

    def __str__(self) -> str:
        return f'Fatal{{{self.kind}, "{self.reason}"}}'

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.reason!r})"

    def __reduce__(self) -> tuple[object, ...]:
        # Subclasses take only ``reason``; keep them picklable across processes.
        if type(self) is PipeFatal:
            return (PipeFatal, (self.kind, self.reason))
        return (type(self), (self.reason,))


class LoggedFatal(PipeFatal):
    """A named refusal of one fixed kind (:attr:`KIND`) with a free-text ``log`` after it:
    ``Fatal{Kind, "Call.Field"}: what was wrong``. Pickles as itself (spawn sends it)."""

    KIND = "Fatal"

    def __init__(self, reason: str, log: str = "") -> None:
        super().__init__(self.KIND, reason)
        self.log = log

    def __str__(self) -> str:
        base = super().__str__()
        return f"{base}: {self.log}" if self.log else base

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.reason, self.log))


class ProtocolCorruption(PipeFatal):
    """A record, header or payload that cannot be what a correct peer sent."""

    def __init__(self, reason: str) -> None:
        super().__init__("ProtocolCorruption", reason)


class HandleRefused(ProtocolCorruption):
    """A ``{slot, gen}`` handle that is null, unknown, stale or moves backwards.

    The reason names the place and the fault, e.g. ``"BindRenderState.Cso.Stale"``.
    """


class RingOverrun(PipeFatal):
    """A single record larger than the ring's record limit (capacity / 2; R-10)."""

    def __init__(self, reason: str) -> None:
        super().__init__("RingOverrun", reason)


class BarrierTimeout(PipeFatal):
    """A bounded wait (applied seq, ring space, join) ran out of budget."""

    def __init__(self, reason: str = "Barrier") -> None:
        super().__init__("BarrierTimeout", reason)


class NullEntry(PipeFatal):
    """Dispatch reached a null entry of a backend table."""

    def __init__(self, call: str) -> None:
        super().__init__("UnimplementedCall", call)
        self.call = call


class TransportShutdown(PipeFatal):
    """The transport is closed, or died; no further records move."""

    def __init__(self, reason: str = "Transport") -> None:
        super().__init__("TransportShutdown", reason)


class HandleExhausted(PipeFatal):
    """A slot allocator has no slot left in its band (e.g. ``"ShaderCso.Composite"``)."""

    def __init__(self, reason: str) -> None:
        super().__init__("HandleExhausted", reason)


class SecondProducer(PipeFatal):
    """A second thread submitted on a single-producer transport (refused before the ring)."""

    def __init__(self, reason: str = "Transport.Producer") -> None:
        super().__init__("SecondProducer", reason)
