"""The Vulkan instance, the physical device the user chose, one logical device and queue.

Choosing a device (``device=`` or ``MGPIPE_VK_DEVICE``): an integer is an index into
``vkEnumeratePhysicalDevices``; any other text picks the first device whose name contains
it (case-insensitive); nothing picks the first device. A choice that matches nothing is a
:class:`VulkanUnavailable` naming what is there.

Validation (``validation=`` or ``MGPIPE_VK_VALIDATION``):

- ``"on"`` (also ``1``/``true``): the Khronos validation layer is required; a missing
  layer is a :class:`VulkanUnavailable`, never a silent downgrade;
- ``"auto"`` (the default): on when the layer is installed, off otherwise;
- ``"off"`` (also ``0``/``false``): never.

With validation on, a ``VK_EXT_debug_utils`` messenger collects every warning and error
into :attr:`VulkanDevice.messages` (:class:`DebugMessage`); :meth:`take_messages` hands
them over and clears the list (a test fails on any it receives).
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from typing import Any

import vulkan as vk

__all__ = [
    "VALIDATION_LAYER",
    "DEVICE_ENV",
    "VALIDATION_ENV",
    "DebugMessage",
    "VulkanUnavailable",
    "VulkanDevice",
    "validation_mode",
    "layer_available",
    "list_devices",
]

VALIDATION_LAYER = "VK_LAYER_KHRONOS_validation"
DEVICE_ENV = "MGPIPE_VK_DEVICE"
VALIDATION_ENV = "MGPIPE_VK_VALIDATION"
API_VERSION = vk.VK_MAKE_VERSION(1, 1, 0)

_ON = {"1", "on", "true", "yes", "required"}
_OFF = {"0", "off", "false", "no"}

_SEVERITY = {
    vk.VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT: "warning",
    vk.VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT: "error",
}


class VulkanUnavailable(RuntimeError):
    """No usable Vulkan here (no loader, no device, the chosen device or layer missing)."""

    def __str__(self) -> str:
        return f"VULKAN: {self.args[0]}"


@dataclass(frozen=True)
class DebugMessage:
    severity: str  # "warning" | "error"
    message_id: str
    text: str

    def __str__(self) -> str:
        return f"[{self.severity}] {self.message_id}: {self.text}"


def validation_mode(value: str | bool | None = None) -> str:
    """``"on"``, ``"off"`` or ``"auto"`` from an argument, else the environment."""
    if isinstance(value, bool):
        return "on" if value else "off"
    raw = (value if value is not None else os.environ.get(VALIDATION_ENV, "auto")).strip().lower()
    if raw in _ON:
        return "on"
    if raw in _OFF:
        return "off"
    if raw == "auto":
        return "auto"
    raise VulkanUnavailable(f"{VALIDATION_ENV}={raw!r}: expected on, off or auto")


def layer_available(name: str = VALIDATION_LAYER) -> bool:
    try:
        return any(p.layerName == name for p in vk.vkEnumerateInstanceLayerProperties())
    except Exception:  # no loader at all
        return False


# The binding keeps one Python callback per process; each messenger's user data names the
# device whose list its messages go to.
_ROUTES: dict[int, "VulkanDevice"] = {}
_ROUTE_IDS = itertools.count(1)


def _on_message(severity: int, types: int, data: Any, user: Any) -> int:
    level = _SEVERITY.get(severity)
    dev = _ROUTES.get(int(vk.ffi.cast("uintptr_t", user))) if user else None
    if level is None or dev is None:
        return vk.VK_FALSE
    text = vk.ffi.string(data.pMessage).decode(errors="replace") if data.pMessage else ""
    mid = vk.ffi.string(data.pMessageIdName).decode(errors="replace") if data.pMessageIdName else ""
    dev.messages.append(DebugMessage(level, mid, text))
    return vk.VK_FALSE


def _make_instance(layers: list[str], extensions: list[str]) -> Any:
    app = vk.VkApplicationInfo(
        pApplicationName="mgpipe", applicationVersion=1, pEngineName="mgpipe",
        engineVersion=1, apiVersion=API_VERSION,
    )  # fmt: skip
    info = vk.VkInstanceCreateInfo(
        pApplicationInfo=app,
        enabledLayerCount=len(layers), ppEnabledLayerNames=layers or None,
        enabledExtensionCount=len(extensions), ppEnabledExtensionNames=extensions or None,
    )  # fmt: skip
    try:
        return vk.vkCreateInstance(info, None)
    except Exception as exc:  # the binding raises one class per VkResult
        raise VulkanUnavailable(f"vkCreateInstance failed ({type(exc).__name__})") from None


def _name(pd: Any) -> str:
    return str(vk.vkGetPhysicalDeviceProperties(pd).deviceName)


def list_devices() -> list[str]:
    """The physical devices' names, in enumeration order (no layers, no device made)."""
    inst = _make_instance([], [])
    try:
        return [_name(pd) for pd in vk.vkEnumeratePhysicalDevices(inst)]
    finally:
        vk.vkDestroyInstance(inst, None)


def _choose(pds: list[Any], choice: str | int | None) -> Any:
    names = [_name(pd) for pd in pds]
    if not pds:
        raise VulkanUnavailable("no Vulkan physical device")
    if choice is None or choice == "":
        return pds[0]
    avail = ", ".join(f"{i}: {n}" for i, n in enumerate(names))
    text = str(choice).strip()
    if text.isdigit():
        i = int(text)
        if i < len(pds):
            return pds[i]
        raise VulkanUnavailable(f"device index {i} out of range (available: {avail})")
    for pd, n in zip(pds, names):
        if text.lower() in n.lower():
            return pd
    raise VulkanUnavailable(f"no device named like {text!r} (available: {avail})")


class VulkanDevice:
    """Instance + chosen physical device + logical device with one graphics queue."""

    def __init__(self, *, device: str | int | None = None, validation: str | bool | None = None):
        mode = validation_mode(validation)
        have_layer = layer_available()
        if mode == "on" and not have_layer:
            raise VulkanUnavailable(
                f"validation required but {VALIDATION_LAYER} is not installed "
                f"(install vulkan-validationlayers, or set {VALIDATION_ENV}=off)"
            )
        self.validation = mode == "on" or (mode == "auto" and have_layer)
        self.messages: list[DebugMessage] = []
        self._route = next(_ROUTE_IDS)
        layers = [VALIDATION_LAYER] if self.validation else []
        exts = ["VK_EXT_debug_utils"] if self.validation else []
        self.instance = _make_instance(layers, exts)
        self._messenger = None
        self._destroy_messenger = None
        if self.validation:
            self._install_messenger()
        try:
            pds = list(vk.vkEnumeratePhysicalDevices(self.instance))
            self.physical = _choose(
                pds, device if device is not None else os.environ.get(DEVICE_ENV)
            )
            self.properties = vk.vkGetPhysicalDeviceProperties(self.physical)
            self.name = str(self.properties.deviceName)
            self.limits = self.properties.limits
            self.memory = vk.vkGetPhysicalDeviceMemoryProperties(self.physical)
            self.queue_family = self._graphics_family()
            self.extensions = self._device_extensions()
            self.device = self._make_device()
            self.queue = vk.vkGetDeviceQueue(self.device, self.queue_family, 0)
        except Exception:
            self._destroy_instance()
            raise

    # -- construction --------------------------------------------------------
    def _install_messenger(self) -> None:
        create = vk.vkGetInstanceProcAddr(self.instance, "vkCreateDebugUtilsMessengerEXT")
        self._destroy_messenger = vk.vkGetInstanceProcAddr(
            self.instance, "vkDestroyDebugUtilsMessengerEXT"
        )
        info = vk.VkDebugUtilsMessengerCreateInfoEXT(
            messageSeverity=vk.VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT
            | vk.VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
            messageType=vk.VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT
            | vk.VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT
            | vk.VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
            pfnUserCallback=_on_message,
            pUserData=vk.ffi.cast("void *", self._route),
        )
        _ROUTES[self._route] = self
        self._messenger = create(self.instance, info, None)

    def _graphics_family(self) -> int:
        fams = vk.vkGetPhysicalDeviceQueueFamilyProperties(self.physical)
        for i, f in enumerate(fams):
            if f.queueFlags & vk.VK_QUEUE_GRAPHICS_BIT:
                return i
        raise VulkanUnavailable(f"{self.name}: no graphics queue family")

    def _device_extensions(self) -> set[str]:
        have = {
            e.extensionName for e in vk.vkEnumerateDeviceExtensionProperties(self.physical, None)
        }
        # GL clip-space depth [-1, 1] without rewriting the SPIR-V (where the device has it).
        # Transform feedback (GL ES 3.0's capture) where the device has the extension and
        # its transformFeedback feature.
        out = {e for e in ("VK_EXT_depth_clip_control",) if e in have}
        if "VK_EXT_transform_feedback" in have:
            probe = vk.VkPhysicalDeviceTransformFeedbackFeaturesEXT()
            feats = vk.VkPhysicalDeviceFeatures2(pNext=probe)
            vk.vkGetPhysicalDeviceFeatures2(self.physical, feats)
            if probe.transformFeedback:
                out.add("VK_EXT_transform_feedback")
        return out

    def _make_device(self) -> Any:
        queue = vk.VkDeviceQueueCreateInfo(
            queueFamilyIndex=self.queue_family, queueCount=1, pQueuePriorities=[1.0]
        )
        have = vk.vkGetPhysicalDeviceFeatures(self.physical)
        # Only what the pipeline create info may ask for; each is used only when present.
        wanted = ("fillModeNonSolid", "wideLines", "sampleRateShading", "logicOp",
                  "independentBlend", "depthClamp", "depthBiasClamp", "dualSrcBlend",
                  "samplerAnisotropy", "occlusionQueryPrecise", "robustBufferAccess",
                  "multiDrawIndirect", "drawIndirectFirstInstance",  # indirect.py
                  "fragmentStoresAndAtomics", "vertexPipelineStoresAndAtomics",
                  "tessellationShader")  # fmt: skip
        self.features = {f: bool(getattr(have, f)) for f in wanted}
        feats = vk.VkPhysicalDeviceFeatures(
            **{f: vk.VK_TRUE for f, on in self.features.items() if on}
        )
        chain = None
        if "VK_EXT_depth_clip_control" in self.extensions:
            chain = vk.VkPhysicalDeviceDepthClipControlFeaturesEXT(depthClipControl=vk.VK_TRUE)
        if "VK_EXT_transform_feedback" in self.extensions:
            chain = vk.VkPhysicalDeviceTransformFeedbackFeaturesEXT(
                pNext=chain, transformFeedback=vk.VK_TRUE
            )
        exts = sorted(self.extensions)
        info = vk.VkDeviceCreateInfo(
            pNext=chain, queueCreateInfoCount=1, pQueueCreateInfos=[queue],
            enabledExtensionCount=len(exts), ppEnabledExtensionNames=exts or None,
            pEnabledFeatures=feats,
        )  # fmt: skip
        return vk.vkCreateDevice(self.physical, info, None)

    # -- queries -------------------------------------------------------------
    def memory_type(self, type_bits: int, flags: int) -> int:
        """The first memory type allowed by ``type_bits`` that has every bit of ``flags``."""
        for i in range(self.memory.memoryTypeCount):
            if type_bits >> i & 1 and (self.memory.memoryTypes[i].propertyFlags & flags) == flags:
                return i
        raise VulkanUnavailable(f"{self.name}: no memory type with flags {flags:#x}")

    def take_messages(self) -> list[DebugMessage]:
        out, self.messages = self.messages, []
        return out

    # -- teardown ------------------------------------------------------------
    def close(self) -> None:
        if self.device is not None:
            vk.vkDeviceWaitIdle(self.device)
            vk.vkDestroyDevice(self.device, None)
            self.device = None
        self._destroy_instance()

    def _destroy_instance(self) -> None:
        if self._messenger is not None:
            self._destroy_messenger(self.instance, self._messenger, None)
            self._messenger = None
        _ROUTES.pop(self._route, None)
        if self.instance is not None:
            vk.vkDestroyInstance(self.instance, None)
            self.instance = None
