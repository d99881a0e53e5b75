"""Copies on the device: buffer to buffer, image to image, framebuffer to texture.

- ``ResourceCopyRegion`` between two buffers (``glCopyBufferSubData``: ``SrcBox.X`` the
  source offset, ``SrcBox.W`` the size, ``DstX`` the destination offset) is
  ``vkCmdCopyBuffer`` in command order; between two textures (``glCopyImageSubData``:
  ``SrcBox`` of ``SrcLevel`` -- ``Z`` / ``D`` the layers or slices -- to ``DstX/Y/Z`` of
  ``DstLevel``) it is ``vkCmdCopyImage`` of texel-size-compatible formats (GL's rule),
  rows moved one by one where the two images store their rows in opposite orders. A
  buffer and a texture together is refused by name (GL has no such copy).
- ``CopyFramebufferToTexture`` (``glCopyTexImage2D`` / ``glCopyTexSubImage2D``): the read
  framebuffer's read colour buffer, ``X, Y, Width, Height`` (clipped to it), into the
  texture level at ``XOffset, YOffset`` (``SubImage`` 0: the level is (re)specified with
  ``InternalFormat`` first) by a 1:1 ``vkCmdBlitImage`` (the formats may differ in
  precision, not in value class) whose offsets put GL's rows where GL puts them.
- A device write into a buffer marks it (``gpu_written``): a host write or read of that
  buffer first waits for the submission that writes it (:meth:`~.answers.AnswerEntries.settle_buffer`),
  so the host never renames or reads the bytes from before the copy.

A GL rule the record breaks (ranges outside the objects, overlapping ranges of one buffer,
incompatible formats) is the ordered ``OnGlError`` event; what Vulkan cannot do (a format
the device cannot blit) is a named refusal.
"""

from __future__ import annotations

from typing import Any

import vulkan as vk

from .errors import GL_ERR, GlError, VulkanRefused
from .formats import vk_info
from .resources import VkBufferResource, VkTextureResource, _has
from .targets import full_barrier, init_general, with_layout

__all__ = ["CopyEntries", "gl_rows_of"]

_SRC, _DST = vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL
_CUBE_POSITIVE_X = 0x8515  # GL_TEXTURE_CUBE_MAP_POSITIVE_X: a face's target is + face


def gl_rows_of(img: Any, level: int, y0: int, y1: int) -> tuple[int, int]:
    """Image row offsets of GL rows [y0, y1) of ``level`` (a blit offset pair): a top-down
    image (``flipped``) holds GL row y at row hgt-1-y, so the pair runs backwards."""
    if not img.flipped:
        return y0, y1
    hgt = max(img.height >> level, 1)
    return hgt - y0, hgt - y1


def _value_class(img: Any) -> str:
    info = vk_info(img.format)
    return info.value if info is not None else "float"


def _extent(img: Any, level: int) -> tuple[int, int, int]:
    three_d = img.image_type == vk.VK_IMAGE_TYPE_3D
    return (max(img.width >> level, 1), max(img.height >> level, 1),
            max(img.depth >> level, 1) if three_d else img.layers)  # fmt: skip


class CopyEntries:
    """Copy entries of :class:`~.backend.VulkanBackend` (a mixin over ``self.r``)."""

    r: Any
    copies = 0

    def ResourceCopyRegion(self, ctx: Any, d: Any) -> None:
        self._fire(ctx, lambda: self._copy_region(ctx, d.payload))  # type: ignore[attr-defined]

    def _copy_region(self, ctx: Any, p: Any) -> None:
        src = getattr(ctx.resolved["Src"], "backend", None)
        dst = getattr(ctx.resolved["Dst"], "backend", None)
        if isinstance(src, VkBufferResource) and isinstance(dst, VkBufferResource):
            return self._copy_buffers(src, dst, int(p.SrcBox.X), int(p.DstX), int(p.SrcBox.W))
        if isinstance(src, VkTextureResource) and isinstance(dst, VkTextureResource):
            return self._copy_images(src, dst, p)
        raise VulkanRefused("ResourceCopyRegion.Dst", f"{type(src).__name__} to "
                            f"{type(dst).__name__}: copies are buffer to buffer or texture "
                            "to texture")  # fmt: skip

    def copy_buffers(self, src: VkBufferResource, dst: VkBufferResource, src_off: int,
                     dst_off: int, size: int) -> None:  # fmt: skip
        self._copy_buffers(src, dst, src_off, dst_off, size)

    def _copy_buffers(self, src: VkBufferResource, dst: VkBufferResource, src_off: int,
                      dst_off: int, size: int) -> None:  # fmt: skip
        if src.gpu is None or dst.gpu is None:
            raise GlError(GL_ERR.INVALID_OPERATION, "ResourceCopyRegion: a buffer without storage")
        if src_off < 0 or dst_off < 0 or src_off + size > src.size or dst_off + size > dst.size:
            raise GlError(GL_ERR.INVALID_VALUE, f"ResourceCopyRegion: [{src_off}, +{size}) of "
                          f"{src.size} to [{dst_off}, +{size}) of {dst.size} bytes")  # fmt: skip
        if src is dst and src_off < dst_off + size and dst_off < src_off + size:
            raise GlError(GL_ERR.INVALID_VALUE, "ResourceCopyRegion: overlapping ranges of one "
                          "buffer")  # fmt: skip
        if not size:
            return
        cmd = self.r.cmd_outside_pass()
        serial = self.r.ring.serial
        a, b = src.use(serial), dst.use(serial)
        full_barrier(cmd)
        vk.vkCmdCopyBuffer(cmd, a, b, 1, [vk.VkBufferCopy(srcOffset=src_off, dstOffset=dst_off,
                                                          size=size)])  # fmt: skip
        full_barrier(cmd)
        dst.gpu_written = serial  # type: ignore[attr-defined]
        self.copies += 1

    def _copy_images(self, src_t: VkTextureResource, dst_t: VkTextureResource, p: Any) -> None:
        src, dst = src_t.image, dst_t.image
        if src is None or dst is None:
            raise GlError(GL_ERR.INVALID_OPERATION, "ResourceCopyRegion: a texture without storage")
        sl, dl = int(p.SrcLevel), int(p.DstLevel)
        b = p.SrcBox
        x, y, z, w, h, dd = int(b.X), int(b.Y), int(b.Z), int(b.W), int(b.H), max(int(b.D), 1)
        dx, dy, dz = int(p.DstX), int(p.DstY), int(p.DstZ)
        if sl >= src.levels or dl >= dst.levels:
            raise GlError(GL_ERR.INVALID_VALUE, f"ResourceCopyRegion: level {sl} / {dl}")
        sw, sh, sd = _extent(src, sl)
        tw, th, td = _extent(dst, dl)
        if min(x, y, z, dx, dy, dz) < 0 or x + w > sw or y + h > sh or z + dd > sd or (
                dx + w > tw or dy + h > th or dz + dd > td):  # fmt: skip
            raise GlError(GL_ERR.INVALID_VALUE, f"ResourceCopyRegion: {w}x{h}x{dd} from ({x}, {y}, "
                          f"{z}) of {sw}x{sh}x{sd} to ({dx}, {dy}, {dz}) of {tw}x{th}x{td}")  # fmt: skip
        si, di = vk_info(src.format), vk_info(dst.format)
        if si is None or di is None or si.texel != di.texel or src.aspect != dst.aspect or (
                src.aspect != vk.VK_IMAGE_ASPECT_COLOR_BIT and src.format != dst.format):  # fmt: skip
            raise GlError(GL_ERR.INVALID_OPERATION, "ResourceCopyRegion: formats "
                          f"{si.name if si else src.format} and {di.name if di else dst.format} "
                          "are not copy-compatible (GL: equal texel sizes, equal depth formats)")  # fmt: skip
        if src.samples != dst.samples:
            raise GlError(GL_ERR.INVALID_OPERATION, "ResourceCopyRegion: sample counts differ")
        if not w or not h:
            return
        regions = []
        s3, d3 = src.image_type == vk.VK_IMAGE_TYPE_3D, dst.image_type == vk.VK_IMAGE_TYPE_3D

        def sub(img: Any, level: int, layer: int, three: bool) -> Any:
            return vk.VkImageSubresourceLayers(aspectMask=img.aspect, mipLevel=level,
                                               baseArrayLayer=0 if three else layer,
                                               layerCount=1 if three else dd)  # fmt: skip

        same = src.flipped == dst.flipped
        rows = [(0, h)] if same else [(r, 1) for r in range(h)]
        for r0, n in rows:
            # GL rows [y + r0, +n) -> [dy + r0, +n) (or mirrored when the orders differ)
            gy = y + r0
            gdy = dy + r0
            sy = (sh - gy - n) if src.flipped else gy
            ty = (th - gdy - n) if dst.flipped else gdy
            regions.append(vk.VkImageCopy(
                srcSubresource=sub(src, sl, z, s3),
                srcOffset=vk.VkOffset3D(x=x, y=sy, z=z if s3 else 0),
                dstSubresource=sub(dst, dl, dz, d3),
                dstOffset=vk.VkOffset3D(x=dx, y=ty, z=dz if d3 else 0),
                extent=vk.VkExtent3D(width=w, height=n, depth=dd if (s3 and d3) else 1)))  # fmt: skip
        cmd = self.r.cmd_outside_pass()
        init_general(cmd, [src, dst])
        full_barrier(cmd)
        if src is dst:
            vk.vkCmdCopyImage(cmd, src.image, vk.VK_IMAGE_LAYOUT_GENERAL, dst.image,
                              vk.VK_IMAGE_LAYOUT_GENERAL, len(regions), regions)  # fmt: skip
        else:
            with_layout(cmd, src, _SRC, lambda a: with_layout(cmd, dst, _DST, lambda b_: (
                vk.vkCmdCopyImage(cmd, src.image, a, dst.image, b_, len(regions), regions))))  # fmt: skip
        full_barrier(cmd)
        self.copies += 1

    # -- glCopyTex(Sub)Image2D ------------------------------------------------------------
    def CopyFramebufferToTexture(self, ctx: Any, d: Any) -> None:
        self._fire(ctx, lambda: self._copy_fb(ctx, d.payload))  # type: ignore[attr-defined]

    def _copy_fb(self, ctx: Any, p: Any) -> None:
        tex = getattr(ctx.resolved["Dst"], "backend", None)
        where = "CopyFramebufferToTexture"
        if not isinstance(tex, VkTextureResource):
            raise GlError(GL_ERR.INVALID_OPERATION, f"{where}.Dst: not a texture")
        t = self._read()  # type: ignore[attr-defined]
        if not t.colors:
            raise GlError(GL_ERR.INVALID_OPERATION, f"{where}: the read framebuffer has no colour")
        src = t.colors[t.read_index]
        if src.samples > 1:
            raise GlError(GL_ERR.INVALID_OPERATION, f"{where}: a multisampled read buffer")
        level, w, h = int(p.Level), int(p.Width), int(p.Height)
        face = int(p.Target) - _CUBE_POSITIVE_X
        layer = face if 0 <= face < 6 else 0
        if not int(p.SubImage):  # glCopyTexImage2D: the level takes the copy's size and format
            img = tex.image
            fits = (img is not None and tex.internal_format == int(p.InternalFormat)
                    and max(img.width >> level, 1) == w and max(img.height >> level, 1) == h)  # fmt: skip
            if not fits:
                if level:
                    raise VulkanRefused(f"{where}.Level", f"level {level} of a texture whose "
                                        "storage differs: respecify level 0 first")  # fmt: skip
                tex.respecify(int(p.InternalFormat), w, h, 1, target=tex.target)
                self._bind_serial += 1  # type: ignore[attr-defined]
        dst = tex.image
        if dst is None:
            raise GlError(GL_ERR.INVALID_OPERATION, f"{where}: the texture has no storage")
        xo, yo = (int(p.XOffset), int(p.YOffset)) if int(p.SubImage) else (0, 0)
        tw, th, _ = _extent(dst, level)
        if xo < 0 or yo < 0 or xo + w > tw or yo + h > th or level >= dst.levels:
            raise GlError(GL_ERR.INVALID_VALUE, f"{where}: {w}x{h} at ({xo}, {yo}) of level "
                          f"{level} ({tw}x{th})")  # fmt: skip
        if _value_class(src) != _value_class(dst):
            raise GlError(GL_ERR.INVALID_OPERATION, f"{where}: a {_value_class(src)} read buffer "
                          f"into a {_value_class(dst)} texture")  # fmt: skip
        # pixels outside the read framebuffer are undefined in GL: copy the part inside
        x, y = int(p.X), int(p.Y)
        cx0, cy0 = max(x, 0), max(y, 0)
        cx1, cy1 = min(x + w, t.width), min(y + h, t.height)
        if cx1 <= cx0 or cy1 <= cy0:
            return
        need_src, need_dst = vk.VK_FORMAT_FEATURE_BLIT_SRC_BIT, vk.VK_FORMAT_FEATURE_BLIT_DST_BIT
        if not (_has(self.r.dev, src.format, need_src) and _has(self.r.dev, dst.format, need_dst)):
            raise VulkanRefused(f"{where}.InternalFormat", f"{self.r.dev.name} cannot blit "
                                f"{vk_info(src.format).name if vk_info(src.format) else src.format} "
                                f"into {tex.info.name if tex.info else dst.format}")  # fmt: skip
        sy = gl_rows_of(src, 0, cy0, cy1)
        ty = gl_rows_of(dst, level, yo + cy0 - y, yo + cy1 - y)
        tx0 = xo + cx0 - x
        sub_s = vk.VkImageSubresourceLayers(aspectMask=src.aspect, mipLevel=0, baseArrayLayer=0,
                                            layerCount=1)  # fmt: skip
        sub_d = vk.VkImageSubresourceLayers(aspectMask=dst.aspect, mipLevel=level,
                                            baseArrayLayer=layer, layerCount=1)  # fmt: skip
        blit = vk.VkImageBlit(
            srcSubresource=sub_s, dstSubresource=sub_d,
            srcOffsets=[vk.VkOffset3D(x=cx0, y=sy[0], z=0), vk.VkOffset3D(x=cx1, y=sy[1], z=1)],
            dstOffsets=[vk.VkOffset3D(x=tx0, y=ty[0], z=0),
                        vk.VkOffset3D(x=tx0 + cx1 - cx0, y=ty[1], z=1)])  # fmt: skip
        cmd = self.r.cmd_outside_pass()
        init_general(cmd, [src, dst])
        full_barrier(cmd)
        with_layout(cmd, src, _SRC, lambda a: with_layout(cmd, dst, _DST, lambda b: (
            vk.vkCmdBlitImage(cmd, src.image, a, dst.image, b, 1, [blit], vk.VK_FILTER_NEAREST))))  # fmt: skip
        full_barrier(cmd)
        self.copies += 1

    # -- Blit's checks ------------------------------------------------------------------------
    def blit_checks(self, s_img: Any, d_img: Any, aspect: int, linear: bool) -> None:
        """What GL forbids in a blit (an ordered GL error) and what this device cannot blit
        (a named refusal), before anything is recorded."""
        if aspect == vk.VK_IMAGE_ASPECT_COLOR_BIT:
            sc, dc = _value_class(s_img), _value_class(d_img)
            if (sc == "float") != (dc == "float"):
                raise GlError(GL_ERR.INVALID_OPERATION, f"Blit: a {sc} read buffer into a {dc} "
                              "draw buffer")  # fmt: skip
            if linear and sc != "float":
                raise GlError(GL_ERR.INVALID_OPERATION, "Blit: GL_LINEAR of an integer buffer")
        if s_img.samples > 1 or d_img.samples > 1:
            return  # a resolve: vkCmdResolveImage (its own rules in Blit)
        dev = self.r.dev
        for img, need, side in ((s_img, vk.VK_FORMAT_FEATURE_BLIT_SRC_BIT, "ReadFbo"),
                                (d_img, vk.VK_FORMAT_FEATURE_BLIT_DST_BIT, "DrawFbo")):  # fmt: skip
            if not _has(dev, img.format, need):
                info = vk_info(img.format)
                raise VulkanRefused(f"Blit.{side}", f"{dev.name} cannot blit "
                                    f"{'from' if side == 'ReadFbo' else 'into'} "
                                    f"{info.name if info else img.format}")  # fmt: skip
        if linear and not _has(
            dev, s_img.format, vk.VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT
        ):
            raise VulkanRefused("Blit.Filter", "GL_LINEAR: the device does not filter this format")


def scissored_blit(coords: tuple[int, ...], block: Any) -> tuple[int, ...] | None:
    """GL's scissor test applied to a blit (``glBlitFramebuffer`` is scissored; a
    ``vkCmdBlitImage`` is not): the destination rectangle cut to the scissor box and the
    source rectangle cut in proportion, in GL window coordinates, directions kept. None:
    nothing is left to write. A cut that falls between source texels (a scaled blit cut
    at a fractional source position) is refused by name rather than sampled elsewhere."""
    from .dynamic_tail import vector

    if block is None or not int(block["ScissorTestEnabledMask"]) & 1:  # None: no state pushed
        return coords
    bx, by, bw, bh = (int(v) for v in vector(block["ScissorBoxes"][0]))
    sx0, sy0, sx1, sy1, dx0, dy0, dx1, dy1 = coords
    out_s, out_d = [], []
    for s0, s1, d0, d1, lo, hi in (
        (sx0, sx1, dx0, dx1, bx, bx + bw),
        (sy0, sy1, dy0, dy1, by, by + bh),
    ):
        a, b = sorted((d0, d1))
        c0, c1 = max(a, lo), min(b, hi)
        if c1 <= c0:
            return None
        if (c0, c1) == (a, b):
            out_s.append((s0, s1))
            out_d.append((d0, d1))
            continue
        nd0, nd1 = (c0, c1) if d0 <= d1 else (c1, c0)  # the destination's direction kept
        span = d1 - d0
        n0, n1 = s0 * span + (nd0 - d0) * (s1 - s0), s0 * span + (nd1 - d0) * (s1 - s0)
        if n0 % span or n1 % span:
            raise VulkanRefused("Blit.Scissor", f"the scissor box cuts the scaled blit between "
                                f"source texels (destination {nd0}..{nd1} of {d0}..{d1})")  # fmt: skip
        out_s.append((n0 // span, n1 // span))
        out_d.append((nd0, nd1))
    (sx0, sx1), (sy0, sy1) = out_s
    (dx0, dx1), (dy0, dy1) = out_d
    return sx0, sy0, sx1, sy1, dx0, dy0, dx1, dy1
