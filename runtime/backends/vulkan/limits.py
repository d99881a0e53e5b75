"""The Vulkan backend's checks against the device's real limits and the objects' real
extents, made before a record reaches the driver (a crash in ``vkBindImageMemory``, a
validation message, or a vertex fetch past a buffer's end is a named refusal instead).

- :func:`check_texture`: a texture / renderbuffer respecify against ``maxImageDimension*``,
  ``maxImageArrayLayers`` and the mip chain of its extents;
- :func:`check_buffer`: a buffer no larger than the device's largest host-visible heap;
- :func:`readback_box`: a ``ReadPixels`` rectangle clipped to the read target (GL leaves
  the pixels outside undefined; ``vkCmdCopyImageToBuffer`` never sees a region outside it);
- :class:`VertexRanges`: every per-vertex attribute a draw fetches lies inside its buffer
  (``DrawVbo.VertexRange``, as the GLES backend refuses it; indices are read from the
  index buffer, ``DrawVbo.IndexRange`` when the indices pass its end). Per-instance
  attributes are left to robust buffer access (enabled where the device offers it), as
  are formats outside :data:`VERTEX_FORMAT_BYTES`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import vulkan as vk

from ..limits import check_image, clip_box
from .errors import VulkanRefused
from .vk_enums import _VERTEX_FORMATS, GL

__all__ = ["check_texture", "check_buffer", "readback_box", "VertexRanges",
           "VERTEX_FORMAT_BYTES"]  # fmt: skip

_COMPONENT_BYTES = {GL.FLOAT: 4, GL.UNSIGNED_BYTE: 1, GL.BYTE: 1, GL.SHORT: 2,
                    GL.UNSIGNED_SHORT: 2, GL.INT: 4, GL.UNSIGNED_INT: 4, GL.HALF_FLOAT: 2}  # fmt: skip

#: VkFormat of a vertex attribute -> the bytes one element fetches (from the GL type and
#: component count each format stands for).
VERTEX_FORMAT_BYTES: dict[int, int] = {
    fmt: (n + 1) * _COMPONENT_BYTES[gl_type]
    for (gl_type, _norm), formats in _VERTEX_FORMATS.items()
    for n, fmt in enumerate(formats)
}
_INDEX_DTYPES = {1: np.uint8, 2: np.uint16, 4: np.uint32}


def check_texture(dev: Any, p: Any, target: str, what: str = "ResourceRespecify") -> None:
    """A respecify's extents, levels and layers within the device's image limits (a record
    with no extent defines no storage and passes)."""
    w, h = int(p.Width), int(p.Height)
    if not w or not h:
        return
    lim = dev.limits
    three_d, cube = target == "Tex3D", target in ("TexCube", "TexCubeArray")
    top = int(lim.maxImageDimension3D if three_d else
              lim.maxImageDimensionCube if cube else lim.maxImageDimension2D)  # fmt: skip
    if target == "Renderbuffer":
        top = min(top, int(lim.maxFramebufferWidth), int(lim.maxFramebufferHeight))
    layers = 6 if target == "TexCube" else int(p.ArrayLayers)
    check_image(what, width=w, height=h, depth=int(p.Depth), layers=layers,
                levels=int(p.Levels), max_dim=top, max_layers=int(lim.maxImageArrayLayers),
                three_d=three_d, cube=cube)  # fmt: skip


def _largest_heap(dev: Any) -> int:
    size = getattr(dev, "_largest_host_heap", None)
    if size is None:
        mem = dev.memory
        host = vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT
        heaps = {int(mem.memoryTypes[i].heapIndex) for i in range(mem.memoryTypeCount)
                 if mem.memoryTypes[i].propertyFlags & host}  # fmt: skip
        size = max((int(mem.memoryHeaps[i].size) for i in heaps), default=0)
        dev._largest_host_heap = size
    return size


def check_buffer(dev: Any, size: int, what: str = "ResourceRespecify") -> None:
    heap = _largest_heap(dev)
    if size > heap:
        raise VulkanRefused(f"{what}.Width", f"a {size}-byte buffer > the device's largest "
                            f"host-visible heap, {heap} bytes")  # fmt: skip


def readback_box(x: int, y: int, w: int, h: int, width: int, height: int
                 ) -> tuple[int, int, int, int] | None:  # fmt: skip
    """The part of a readback rectangle inside a ``width`` x ``height`` target, or None."""
    return clip_box(x, y, w, h, width, height)


class VertexRanges:
    """Per-draw range checks with a memo: a draw no larger than one already proven under
    the same layout and the same buffers (identity, size, offset) passes at once."""

    def __init__(self) -> None:
        self._proven: tuple[Any, int] = (None, -1)
        self._index_memo: dict[tuple, int] = {}

    def max_index(self, ib: Any, size: int, start: int, count: int, restart: bool) -> int:
        """The largest index ``[start, start + count)`` of ``ib`` holds (restart excluded)."""
        end = (start + count) * size
        if end > ib.size or ib.gpu is None:
            raise VulkanRefused("DrawVbo.IndexRange", f"indices [{start}, {start + count}) of "
                                f"{size} bytes need {end} bytes; the buffer has {ib.size}")  # fmt: skip
        # a shader's write moves ``gpu_written`` (the host bytes changed under the memo)
        key = (id(ib.gpu), ib.writes, getattr(ib, "gpu_written", 0), size, start, count, restart)
        hit = self._index_memo.get(key)
        if hit is not None:
            return hit
        idx = np.frombuffer(ib.gpu.read(start * size, count * size), _INDEX_DTYPES[size])
        if restart:
            idx = idx[idx != (1 << (8 * size)) - 1]
        top = int(idx.max()) if len(idx) else -1
        if len(self._index_memo) > 256:
            self._index_memo.clear()
        self._index_memo[key] = top
        return top

    def check_draw(self, vertex: Any, inputs: Any, vbufs: list[tuple[int, Any, int]],
                   ranges: list[tuple[int, int, int]], ib: Any, size: int, restart: bool,
                   defaults_binding: int | None) -> None:  # fmt: skip
        """:meth:`check` for a draw's ranges (indexed: the largest index each range reads
        plus its bias)."""
        last = -1
        for start, count, bias in ranges:
            if count <= 0:
                continue
            if size:
                top = self.max_index(ib, size, int(start), int(count), restart)
                last = max(last, top + int(bias) if top >= 0 else -1)
            else:
                last = max(last, int(start) + int(count) - 1)
        if last >= 0:
            self.check(vertex.for_shader(inputs, defaults_binding), vbufs, last,
                       defaults_binding)  # fmt: skip

    def check(self, layout: Any, vbufs: list[tuple[int, Any, int]], last_vertex: int,
              defaults_binding: int | None) -> None:  # fmt: skip
        """Every per-vertex attribute of ``layout`` (the shader's view of the vertex
        elements) fetches element ``last_vertex`` inside its bound buffer."""
        if last_vertex < 0:
            return
        bound = {i: (res, off) for i, res, off in vbufs}
        key = (layout, tuple((i, id(res), res.size, off) for i, res, off in vbufs))
        if self._proven[0] == key and last_vertex <= self._proven[1]:
            return
        strides = {b: (stride, inst) for b, stride, inst in layout.bindings}
        for loc, b, fmt, offset in layout.attributes:
            if b == defaults_binding:
                continue  # the backend's own current-value binding
            stride, per_instance = strides.get(b, (0, False))
            nbytes = VERTEX_FORMAT_BYTES.get(fmt)
            if per_instance or nbytes is None:
                continue  # robust buffer access bounds these fetches
            if b not in bound:
                raise VulkanRefused("DrawVbo.VertexBuffers", f"attribute {loc} reads binding "
                                    f"{b}, which has no buffer")  # fmt: skip
            res, off = bound[b]
            need = int(off) + offset + last_vertex * stride + nbytes
            if need > res.size:
                raise VulkanRefused("DrawVbo.VertexRange", f"attribute {loc} fetches element "
                                    f"{last_vertex}: {need} bytes of a {res.size}-byte "
                                    "buffer")  # fmt: skip
        if self._proven[0] == key:
            last_vertex = max(last_vertex, self._proven[1])
        self._proven = (key, last_vertex)


def check_framebuffer(dev: Any, p: Any, sources: list[Any] | None = None) -> None:
    """A framebuffer's extent in ``[1, maxFramebufferWidth / Height]`` and, for a named
    one (``sources``: its attachments), at least one attachment (GL:
    ``GL_FRAMEBUFFER_INCOMPLETE_MISSING_ATTACHMENT``), each image at least that large
    (``vkCreateFramebuffer`` takes no larger)."""
    if sources is not None and not sources:
        raise VulkanRefused("SetFramebufferState.Complete", "no attachment "
                            "(GL_FRAMEBUFFER_INCOMPLETE_MISSING_ATTACHMENT)")  # fmt: skip
    lim = dev.limits
    w, h = int(p.Width), int(p.Height)
    top_w, top_h = int(lim.maxFramebufferWidth), int(lim.maxFramebufferHeight)
    if not (1 <= w <= top_w and 1 <= h <= top_h):
        raise VulkanRefused("SetFramebufferState.Width", f"{w}x{h}: a framebuffer is 1x1 .. "
                            f"{top_w}x{top_h} on this device")  # fmt: skip
    for i, src in enumerate(sources or ()):
        img = getattr(src, "image", None)
        if img is None:
            raise VulkanRefused("SetFramebufferState.Res", f"attachment {i} has no storage")
        if img.image_type == vk.VK_IMAGE_TYPE_3D:  # VUID-VkFramebufferCreateInfo-flags-04113
            raise VulkanRefused("SetFramebufferState.Res", f"attachment {i} is a 3-D texture "
                                "(this backend attaches 2-D images and layers of arrays)")  # fmt: skip
        if w > img.width or h > img.height:
            raise VulkanRefused("SetFramebufferState.Width", f"{w}x{h} exceeds attachment {i}'s "
                                f"{img.width}x{img.height} image")  # fmt: skip


def check_vertex_elements(p: Any, raw: bytes, attr_size: int, bind_size: int) -> None:
    """A vertex-elements blob that holds the counts it states, whose enabled attributes
    name bindings it describes."""
    na, nb = int(p.AttributeCount), int(p.BindingPointCount)
    if len(raw) < na * attr_size + nb * bind_size:
        raise VulkanRefused("CreateVertexElements.Blob", f"{len(raw)} bytes for {na} attributes "
                            f"and {nb} binding points")  # fmt: skip


def check_binding(loc: int, binding: int, count: int) -> None:
    if not 0 <= binding < count:
        raise VulkanRefused("CreateVertexElements.BindingIndex", f"attribute {loc} names "
                            f"binding {binding} of {count}")  # fmt: skip


def check_sub_data(res: Any, offset: int, width: int, blob: int) -> None:
    """A buffer write inside the buffer, with the bytes it names (as the GLES backend
    refuses it: ``ResourceSubData.UnionBox``)."""
    if offset < 0 or width < 0 or offset + width > res.size or width > blob:
        raise VulkanRefused("ResourceSubData.UnionBox", f"[{offset}, {offset + width}) outside a "
                            f"buffer of {res.size} bytes ({blob} bytes sent)")  # fmt: skip


def check_upload(img: Any, level: int, regions: list[tuple]) -> None:
    """An upload's level inside the image's mip chain and each ``(x, y, z, w, h, d, ...)``
    region inside that level (its depth slices for a 3-D image, else its layers), as the
    GLES backend refuses them (``ResourceSubData.Level`` / ``.Region``)."""
    if not 0 <= level < img.levels:
        raise VulkanRefused("ResourceSubData.Level", f"level {level} of {img.levels}")
    w0, h0 = max(img.width >> level, 1), max(img.height >> level, 1)
    d0 = max(img.depth >> level, 1) if img.image_type == vk.VK_IMAGE_TYPE_3D else img.layers
    for x, y, z, w, h, d, *_ in regions:
        if min(x, y, z, w, h, d) < 0 or x + w > w0 or y + h > h0 or z + d > d0:
            raise VulkanRefused("ResourceSubData.Region", f"{w}x{h}x{d}+{x}+{y}+{z} outside "
                                f"level {level}'s {w0}x{h0}x{d0}")  # fmt: skip
