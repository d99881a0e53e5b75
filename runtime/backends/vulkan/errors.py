"""The Vulkan backend's named refusal (input the decoder accepts but this backend cannot
take) and :class:`GlError` (a GL rule the record breaks: an ordered ``OnGlError`` event).

``VulkanRefused(place, log)`` is a :class:`~mgpipe.runtime.backends.refusal.DriverRefused`
(kind ``DriverRefused``, as the GLES backend's); ``place`` names the record and field,
``log`` says why::

    Fatal{DriverRefused, "DrawVbo.Mode"}: draw mode 0x2 has no Vulkan topology
"""

from __future__ import annotations

from ..refusal import DriverRefused

__all__ = ["VulkanRefused", "GlError", "GL_ERR"]


class VulkanRefused(DriverRefused):
    """Raised by the Vulkan backend (pickles as itself: ``__reduce__`` names the type)."""


class GL_ERR:
    """GL registry values of the errors ``OnGlError`` carries."""

    INVALID_ENUM, INVALID_VALUE, INVALID_OPERATION = 0x0500, 0x0501, 0x0502
    OUT_OF_MEMORY = 0x0505


class GlError(Exception):
    """A GL rule the record broke: the record completes and ``OnGlError(code)`` follows it."""

    def __init__(self, code: int, why: str) -> None:
        super().__init__(why)
        self.code = code
