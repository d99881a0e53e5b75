#!/usr/bin/env bash
# Steps run on the GPU machine after run.sh's setup (cwd = repo root).
set -u
R=$OUT/r; mkdir -p $R
pack() { tar czf $OUT/gpu.tgz -C $OUT r; }
PYT="python3 -P -m pytest -q -p no:cacheprovider"
t0=$(date +%s)
echo "== gles scenes (pytest)"; timeout 150 $PYT tests/test_gles_scenes.py 2>&1 | tail -15
pack
echo "== gles run all"; timeout 120 mgpipe run all --backend gles --out $R/gles 2>&1 | tail -20
pack
echo "== vulkan tests"; timeout 200 $PYT tests/test_vulkan_core.py tests/test_vulkan_backend.py tests/test_vulkan_scenes.py -k "not fresh" 2>&1 | tail -15
pack
echo "== vulkan run all"; timeout 120 mgpipe run all --backend vulkan --out $R/vk 2>&1 | tail -20
pack
echo "== compare all"; timeout 120 mgpipe compare all --out $R/compare 2>&1 | tail -22
pack
echo "== spawn gles"; timeout 60 mgpipe run all --backend gles --transport spawn --out $R/gles-spawn 2>&1 | tail -3
pack
echo "== spawn vk"; timeout 60 mgpipe run all --backend vulkan --transport spawn --out $R/vk-spawn 2>&1 | tail -3
pack
for d in gles vk; do for f in $R/$d/*.png; do b=$(basename $f); cmp -s $f $R/$d-spawn/$b || echo "spawn differs: $d $b"; done; done
pack
echo "== vulkan_frame"; timeout 60 python3 -P benchmarks/vulkan_frame.py --device NVIDIA --frames 60 --json > $R/vulkan_frame.json 2>&1; tail -5 $R/vulkan_frame.json
pack
echo "== gpu_frame"; for b in vulkan gles; do timeout 120 python3 -P benchmarks/gpu_frame.py --backend $b --frames 12 --json > $R/gpu_frame_$b.json 2>&1; tail -c 1500 $R/gpu_frame_$b.json; done
pack
echo "== bench"; timeout 300 mgpipe bench ${BENCH_ARGS:---workload MixedFrame --workload BlendToggle --transport monolith --transport spawn --backend gles --backend vulkan --backend recorder} --out $R/bench-gpu 2>&1 | grep -v "^\[" | tail -40
pack
echo "elapsed $(( $(date +%s) - t0 )) s"
pack; rm -rf $R
