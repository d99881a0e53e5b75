#!/usr/bin/env bash
# GPU run: loaders + spirv-cross + validation layer from carried debs, wheels into /tmp/site,
# mgpipe installed from this tree; then the GLES and Vulkan scenes, compare, spawn, benches.
set -u
export PYTHONUNBUFFERED=1
for f in .gl/libvulkan1*.deb .gl/libegl1*.deb .gl/libglvnd0*.deb .gl/libopengl0*.deb .gl/libgl1*.deb .gl/libglx0*.deb .gl/libgles2*.deb .gl/vulkan-validationlayers*.deb; do dpkg -x $f /; done; ldconfig
mkdir -p /tmp/sc && for f in .gl/spirv-cross*.deb .gl/glslang-tools*.deb; do [ -f "$f" ] && dpkg -x "$f" /tmp/sc; done; export PATH=/tmp/sc/usr/bin:$PATH  # glslangValidator: the tests that compile their own shaders
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site
rm -rf /tmp/mg; python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/mg . > $OUT/install.log 2>&1 || { tail -20 $OUT/install.log; exit 1; }
export PYTHONPATH=/tmp/mg:/tmp/site PATH=/tmp/mg/bin:$PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
spirv-cross --help >/dev/null 2>&1; echo "spirv-cross rc=$?"
export MGPIPE_EGL_PLATFORM=device MGPIPE_VK_DEVICE=NVIDIA
STEP="${1:-all}"
shift || true
"$@"
