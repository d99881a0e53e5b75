"""The Vulkan backend's named refusal: input the decoder accepts but this backend cannot take.

``VulkanRefused(place, log)`` is a :class:`~mgpipe.runtime.backends.refusal.DriverRefused`
(kind ``DriverRefused``, as the GLES backend's); ``place`` names the record and field,
``log`` says why::

    Fatal{DriverRefused, "DrawVbo.Mode"}: draw mode 0x2 has no Vulkan topology
"""

from __future__ import annotations

from ..refusal import DriverRefused

__all__ = ["VulkanRefused"]


class VulkanRefused(DriverRefused):
    """Raised by the Vulkan backend (pickles as itself: ``__reduce__`` names the type)."""
