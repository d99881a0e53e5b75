R=$OUT/r; mkdir -p $R
for d in 2000 10000; do timeout 200 python3 -P benchmarks/gpu_frame.py --backend vulkan --workload MinecraftFrame --draws $d --frames 8 --json > $R/mc_vulkan_$d.json 2>&1; tail -c 1500 $R/mc_vulkan_$d.json; echo; done
timeout 120 python3 -P -m pytest -q -p no:cacheprovider tests/test_vulkan_core.py -k pool 2>&1 | tail -2
tar czf $OUT/gpu.tgz -C $OUT r
