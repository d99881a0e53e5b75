"""GL registry values of the tokens the render block's ``GLenum`` members start at.

``RenderStateParameters`` carries a few members as raw GL enums (the catalogue types them
``GLenum``, not a catalogue enum: ``ClipOrigin``, the hints, ``PolygonModeFront`` ...); their
initial values are GL tokens, which no generated table holds. These are the values of the
Khronos GL registry (``gl.xml``), what ``glHint`` / ``glClipControl`` / ``glPolygonMode``
take; tests/test_gl_initial_state.py checks them against an independent binding's values.
"""

from __future__ import annotations

__all__ = ["GLToken"]


class GLToken:
    DONT_CARE = 0x1100  # every hint target's initial mode
    LOWER_LEFT = 0x8CA1  # CLIP_ORIGIN
    UPPER_LEFT = 0x8CA2  # POINT_SPRITE_COORD_ORIGIN
    NEGATIVE_ONE_TO_ONE = 0x935E  # CLIP_DEPTH_MODE
    FIXED_ONLY = 0x891D  # CLAMP_READ_COLOR
    FILL = 0x1B02  # POLYGON_MODE (front and back)
