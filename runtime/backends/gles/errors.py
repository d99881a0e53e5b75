"""The GLES backend's named refusal (:class:`~mgpipe.runtime.backends.refusal.DriverRefused`):
``log`` carries the GL error or the driver's info log::

    Fatal{DriverRefused, "ResourceRespecify.Width"}: 20000 > GL_MAX_TEXTURE_SIZE 16384
"""

from __future__ import annotations

from ..refusal import DriverRefused

__all__ = ["DriverRefused"]
