#!/usr/bin/env bash
# Steps for the render-coverage scenes and the Minecraft-like frame on the GPU machine,
# after setup.sh (cwd = repo root): `bash bench/gpu/setup.sh all bash bench/gpu/steps_render.sh`.
set -u
R=$OUT/r; mkdir -p $R
pack() { tar czf $OUT/gpu.tgz -C $OUT r; }
PYT="python3 -P -m pytest -q -p no:cacheprovider"
t0=$(date +%s)
echo "== render coverage (28 scenes x gles/vulkan x monolith/inproc/spawn, validation on)"
timeout 240 $PYT tests/test_render_coverage.py 2>&1 | tail -12
pack
echo "== render scenes: compare gles vs vulkan, monolith and spawn PNGs"
for s in $(python3 -P -c "from mgpipe.runtime.harness.scenes import RENDER_SCENES; print(' '.join(RENDER_SCENES))"); do
  timeout 60 mgpipe compare $s --json > $R/cmp-$s.json 2>&1 || echo "compare $s rc=$?: $(tail -c 300 $R/cmp-$s.json)"
  for b in gles vulkan; do
    timeout 60 mgpipe run $s --backend $b --out $R/$b-mono >/dev/null 2>&1 || echo "run $s $b rc=$?"
    timeout 60 mgpipe run $s --backend $b --transport spawn --out $R/$b-spawn >/dev/null 2>&1 || echo "spawn $s $b rc=$?"
  done
done
python3 -P - "$R" <<'PY'
import json, pathlib, sys
r = pathlib.Path(sys.argv[1]); bad = 0; n = 0
for f in sorted(r.glob("cmp-*.json")):
    try:
        d = json.loads(f.read_text())
    except ValueError:
        print("unreadable", f.name); bad += 1; continue
    for res in d.get("results", [d]):
        n += 1
        ok = res.get("ok", res.get("match"))
        if not ok:
            bad += 1; print("mismatch", f.name, str(res)[:200])
print(f"compare: {n} results, {bad} not ok")
for b in ("gles", "vulkan"):
    m = {p.name: p.read_bytes() for p in (r / f"{b}-mono").glob("*.png")}
    s = {p.name: p.read_bytes() for p in (r / f"{b}-spawn").glob("*.png")}
    diff = [k for k in m if s.get(k) != m[k]]
    print(f"{b}: {len(m)} monolith PNGs, {len(s)} spawn, {len(diff)} differ {diff[:5]}")
PY
pack
echo "== Minecraft-like frame: gpu_frame at 2,000 and 10,000 draws"
for b in vulkan gles; do for d in 2000 10000; do
  timeout 150 python3 -P benchmarks/gpu_frame.py --backend $b --workload MinecraftFrame --draws $d --frames 8 --json > $R/mc_${b}_${d}.json 2>&1
  tail -c 900 $R/mc_${b}_${d}.json; echo
done; done
pack
echo "elapsed $(( $(date +%s) - t0 )) s"
pack; rm -rf $R
