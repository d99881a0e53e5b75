"""A backend's named refusal: input the decoder accepts but the driver would reject.

``DriverRefused(place, log)`` is a :class:`~mgpipe.runtime.errors.PipeFatal` of kind
``DriverRefused``; ``place`` names the record and field (``"DrawVbo.VertexRange"``),
``log`` carries the driver's error or info log::

    Fatal{DriverRefused, "ResourceRespecify.Width"}: 20000 > GL_MAX_TEXTURE_SIZE 16384
"""

from __future__ import annotations

from ..errors import PipeFatal

__all__ = ["DriverRefused"]


class DriverRefused(PipeFatal):
    def __init__(self, reason: str, log: str = "") -> None:
        super().__init__("DriverRefused", reason)
        self.log = log

    def __str__(self) -> str:
        base = super().__str__()
        return f"{base}: {self.log}" if self.log else base

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.reason, self.log))
