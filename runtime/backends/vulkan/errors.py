"""The Vulkan backend's named refusal: input the decoder accepts but this backend cannot take.

``VulkanRefused(place, log)`` is a :class:`~mgpipe.runtime.errors.PipeFatal` of kind
``DriverRefused`` (the kind the GLES backend uses for the same situation); ``place`` names
the record and field, ``log`` says why::

    Fatal{DriverRefused, "DrawVbo.Mode"}: draw mode 0x2 has no Vulkan topology
"""

from __future__ import annotations

from ...errors import PipeFatal

__all__ = ["VulkanRefused"]


class VulkanRefused(PipeFatal):
    def __init__(self, reason: str, log: str = "") -> None:
        super().__init__("DriverRefused", reason)
        self.log = log

    def __str__(self) -> str:
        base = super().__str__()
        return f"{base}: {self.log}" if self.log else base

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.reason, self.log))
