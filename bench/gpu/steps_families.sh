#!/usr/bin/env bash
# Steps for every scene family on the GPU machine, after setup.sh (cwd = repo root):
#   bash bench/gpu/setup.sh all bash bench/gpu/steps_families.sh PART
# PART "tests": the coverage suites (render, compute / storage / transform feedback /
# tessellation, indirect and client-memory draws, the reverse channel's answers) on the
# device, validation layer on; PART "frame": mgpipe compare all, the answers measured on the
# hardware (occlusion of a known quad, timestamps), present credit, the Minecraft-like frame.
set -u
R=$OUT/r; mkdir -p $R
pack() { tar czf $OUT/gpu.tgz -C $OUT r; }
PYT="python3 -P -m pytest -q -p no:cacheprovider -rs"
PART="${1:-tests}"
t0=$(date +%s)
vulkaninfo --summary 2>/dev/null | grep -i -E "driverVersion|deviceName" | head -4
if [ "$PART" = tests ]; then
  for f in test_render_coverage test_compute_coverage test_vulkan_compute_scenes test_draw_forms \
           test_answers_scenes test_vulkan_answers test_vulkan_answers_transports; do
    [ -f tests/$f.py ] || { echo "== $f: absent"; continue; }
    echo "== $f"
    timeout 280 $PYT tests/$f.py > $R/$f.log 2>&1; echo "rc=$?"; tail -4 $R/$f.log
    pack
  done
fi
if [ "$PART" = frame ]; then
  echo "== the reverse channel on the hardware: timestamps, occlusion, fences (values printed)"
  for b in gles vulkan; do
  timeout 60 python3 -P - $b <<'PY' 2>&1 | tail -12
import sys
from mgpipe.runtime.client.api import Client
from mgpipe.runtime.harness.runner import run_scene
seen = []
for name in ("get_timestamp", "query_result"):
    orig = getattr(Client, name)
    def wrap(self, *a, _orig=orig, _name=name, **k):
        v = _orig(self, *a, **k); seen.append((_name, v)); return v
    setattr(Client, name, wrap)
for scene in ("answers-timestamp", "answers-occlusion-samples", "answers-occlusion-any", "answers-fence"):
    seen.clear()
    try:
        r = run_scene(scene, sys.argv[1], "monolith")
        checks = getattr(r.client, "answer_checks", [])
        print(sys.argv[1], scene, "values", seen[:6], "checks", [(n, w == g) for n, w, g in checks])
    except Exception as exc:
        print(sys.argv[1], scene, "raised", type(exc).__name__, str(exc)[:200])
PY
  done
  echo "== mgpipe compare all"
  timeout 200 mgpipe compare all --json > $R/compare-all.json 2>&1; echo "rc=$?"
  python3 -P - "$R/compare-all.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError:
    print(open(sys.argv[1]).read()[-600:]); raise SystemExit
res = d.get("results", [d])
bad = [r for r in res if not r.get("ok", r.get("match"))]
print(f"compare all: {len(res)} scenes, {len(bad)} not ok", [str(b)[:160] for b in bad[:4]])
PY
  pack
  echo "== present credit: frames in flight, client stall (bench)"
  timeout 120 mgpipe bench --quick --out $R/bench > $R/bench.log 2>&1; echo "rc=$?"; grep -i -E "credit|in flight|stall" $R/bench.log | head -12
  pack
  echo "== Minecraft-like frame: gpu_frame at 2,000 and 10,000 draws"
  for b in vulkan gles; do for d in 2000 10000; do
    timeout 120 python3 -P benchmarks/gpu_frame.py --backend $b --workload MinecraftFrame --draws $d --frames 8 --json > $R/mc_${b}_${d}.json 2>&1
    tail -c 700 $R/mc_${b}_${d}.json; echo
  done; done
  pack
fi
echo "elapsed $(( $(date +%s) - t0 )) s"
pack
