"""The ``gles`` backend: GLES 3 on a headless EGL context, Espryt's shape (see backend.py)."""

from .backend import GlesBackend
from .errors import DriverRefused

__all__ = ["GlesBackend", "DriverRefused"]
