"""The descriptor allocator's cost as pools fill (issue 20's cliff: every full pool was asked
again before a new one opened, so allocation cost grew with the pools already full).

The driver is answered as NVIDIA answers past a pool's ``maxSets`` (lavapipe hands sets out
past it): out-of-pool memory, through the binding's own exception table."""

from __future__ import annotations

import pytest
import vulkan as vk

from _vk_support import assert_clean  # noqa: F401  (sets MGPIPE_VK_VALIDATION=on)
from mgpipe.runtime.backends.vulkan.descriptors import DescriptorAllocator
from mgpipe.runtime.backends.vulkan.device import VulkanDevice

P = 4  # sets per pool in these tests


@pytest.fixture(scope="module")
def dev():
    d = VulkanDevice()
    yield d
    d.close()


@pytest.fixture
def layout(dev, monkeypatch):
    row = vk.VkDescriptorSetLayoutBinding(binding=0, descriptorType=vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER,
                                          descriptorCount=1, stageFlags=vk.VK_SHADER_STAGE_VERTEX_BIT)  # fmt: skip
    lay = vk.vkCreateDescriptorSetLayout(
        dev.device, vk.VkDescriptorSetLayoutCreateInfo(bindingCount=1, pBindings=[row]), None
    )
    monkeypatch.setattr(DescriptorAllocator, "POOL_SETS", P)
    real, live = vk.vkAllocateDescriptorSets, {}

    def like_nvidia(device, info):
        pool = info.descriptorPool
        if live.get(pool, 0) >= P:
            raise vk._vulkan.exception_codes[-abs(vk.VK_ERROR_OUT_OF_POOL_MEMORY)](-1)
        live[pool] = live.get(pool, 0) + 1
        return real(device, info)

    real_free, real_reset = vk.vkFreeDescriptorSets, vk.vkResetDescriptorPool

    def free(device, pool, n, sets):
        live[pool] -= n
        return real_free(device, pool, n, sets)

    def reset(device, pool, flags):
        live[pool] = 0
        return real_reset(device, pool, flags)

    monkeypatch.setattr(vk, "vkAllocateDescriptorSets", like_nvidia)
    monkeypatch.setattr(vk, "vkFreeDescriptorSets", free)
    monkeypatch.setattr(vk, "vkResetDescriptorPool", reset)
    yield lay
    vk.vkDestroyDescriptorSetLayout(dev.device, lay, None)
    assert_clean(dev)


class ScanEveryPool(DescriptorAllocator):
    """The planted defect: the old allocator, asking every pool (newest first) each time."""

    def allocate(self, layout):
        for pool in reversed(self.pools):
            dset = self._try(pool, layout)
            if dset is not None:
                self._live[pool] += 1
                self.allocated += 1
                return pool, dset
        pool = self._pool()
        dset = self._try(pool, layout)
        self._live[pool] += 1
        self.allocated += 1
        return pool, dset


def attempts_per_set(alloc: DescriptorAllocator, layout, n: int) -> list[int]:
    """Driver calls spent on each of ``n`` sets taken without freeing any."""
    out = []
    for _ in range(n):
        before = alloc.attempts
        alloc.allocate(layout)
        out.append(alloc.attempts - before)
    return out


def check_o1(per_set: list[int]) -> None:
    """One driver call per set, two on the set that finds its pool full; nothing more."""
    n = len(per_set)
    fills = (n - 1) // P  # sets P+1, 2P+1, ... each find the current pool full
    if max(per_set) > 2 or sum(per_set) != n + fills:
        raise AssertionError(f"allocation attempts grow as pools fill: {per_set}")


def test_attempts_per_set_stay_flat_as_pools_fill(dev, layout):
    alloc = DescriptorAllocator(dev, lambda fn: fn())
    try:
        per_set = attempts_per_set(alloc, layout, 10 * P)
        check_o1(per_set)
        # sets 1..P from pool 1 at one call each; set P+1 pays one refused call, then opens pool 2
        assert per_set[: P + 2] == [1] * P + [2, 1]
        assert len(alloc.pools) == 10 and alloc.allocated == 10 * P
    finally:
        alloc.destroy()


def test_negative_control_the_pool_scan_fails_the_check(dev, layout):
    alloc = ScanEveryPool(dev, lambda fn: fn())
    try:
        per_set = attempts_per_set(alloc, layout, 10 * P)
        # from first principles: the newest pool answers until it is full; then the j full
        # pools are all asked again before pool j + 1 opens (set jP + 1 pays j + 1 calls)
        assert per_set == [(i // P + 1) if i and i % P == 0 else 1 for i in range(10 * P)]
        with pytest.raises(AssertionError, match="allocation attempts grow as pools fill"):
            check_o1(per_set)
    finally:
        alloc.destroy()


def test_full_pools_are_recycled_once_their_sets_retire(dev, layout):
    """Frames of 3P sets each, every set freed when its frame retires (the deferred queue
    run a frame later, as the fence ring does): the pools stop growing; reused pools are
    reset, not re-created, and each set still costs at most two driver calls."""
    queue: list = []
    alloc = DescriptorAllocator(dev, queue.append)
    try:
        frames = []
        for frame in range(8):
            got = []
            per = []
            for _ in range(3 * P):
                before = alloc.attempts
                got.append(alloc.allocate(layout))
                per.append(alloc.attempts - before)
            assert max(per) <= 2, (frame, per)
            for pool, dset in got:
                alloc.free(pool, dset)
            frames.append(len(queue))
            if frame:  # the previous frame's fence has signalled: its frees run
                run, queue[:] = queue[: 3 * P], queue[3 * P :]
                for fn in run:
                    fn()
            frames[-1] = len(alloc.pools)
        # two frames in flight of 3P sets each: at most 6 pools (+1 current), never 8 x 3
        assert frames[-1] <= 7 and frames[-1] == frames[-3], frames
        assert alloc.recycled > 0
    finally:
        for fn in queue:
            fn()
        alloc.destroy()


def test_negative_control_without_recycling_the_pools_grow(dev, layout, monkeypatch):
    queue: list = []
    alloc = DescriptorAllocator(dev, queue.append)
    monkeypatch.setattr(alloc, "_release", lambda pool, dset: None)  # the planted defect
    try:
        for _frame in range(8):
            got = [alloc.allocate(layout) for _ in range(3 * P)]
            for pool, dset in got:
                alloc.free(pool, dset)
            for fn in queue:
                fn()
            queue.clear()
        assert len(alloc.pools) >= 8 * 3 and alloc.recycled == 0
    finally:
        alloc.destroy()


# -- the Minecraft-like frame: unit 0 alternates between two atlases every draw -------------
def _minecraft(draws: int, frames: int):
    from _vk_support import vk_client
    from mgpipe.runtime.harness.bench.workloads import WORKLOADS

    with vk_client(width=64, height=64) as (c, be):
        wl = WORKLOADS["MinecraftFrame"](draws, 1)
        wl.setup(c)
        for i in range(frames):
            wl.frame(c, i)
            c.present()
        c.read_pixels(0, 0, 1, 1)
        d = be.descriptors
        return d.allocated, d.updates, d.reused, be.r.draws


def test_alternating_bindings_reuse_their_sets_no_allocation_per_draw():
    """Two distinct bindings (atlas A or B at unit 0) over 3 frames of 200 draws: two sets
    allocated and written, every other draw answered from the program's set cache."""
    allocated, updates, reused, draws = _minecraft(200, 3)
    assert draws == 600
    assert (allocated, updates) == (2, 2)
    assert reused == draws - 2


def test_negative_control_a_one_entry_cache_allocates_every_draw(monkeypatch):
    from mgpipe.runtime.backends.vulkan import backend

    monkeypatch.setattr(backend, "SET_CACHE", 1)  # the planted defect: the old single memo
    allocated, updates, reused, draws = _minecraft(200, 3)
    assert allocated == updates == draws and reused == 0
