"""A backend's named refusal: input the decoder accepts but the driver would reject.

``DriverRefused(place, log)`` is a :class:`~mgpipe.runtime.errors.PipeFatal` of kind
``DriverRefused``; ``place`` names the record and field (``"DrawVbo.VertexRange"``),
``log`` carries the driver's error or info log::

    Fatal{DriverRefused, "ResourceRespecify.Width"}: 20000 > GL_MAX_TEXTURE_SIZE 16384
"""

from __future__ import annotations

from ..errors import LoggedFatal

__all__ = ["DriverRefused"]


class DriverRefused(LoggedFatal):
    KIND = "DriverRefused"
