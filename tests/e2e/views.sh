#!/usr/bin/env bash
# views.sh: reshape chains (Reshape, Flatten, Squeeze, Unsqueeze, Identity), a
# channel split and concats of convs (tests/models/views_net.py) run no
# command of their own: every layer group of the bmodel is TIU work and none
# is named after a data-movement op. Every layer of the planned bmodel, read
# right after the group that computes it, matches the Tpu interpreter (kiln
# compile --compare-all); the outputs match PyTorch; the cmodel allocates the
# DDR the bmodel's memory query reports.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KILN_BUILD_DIR:-$root/build}
py=${KILN_PYTHON:-/usr/bin/python3}
kiln=$build/tools/kiln/kiln
dir=$build/models/views_net
out=$build/out/views_net
bash "$root/tests/models/generate.sh" views_net "$dir" "$py"
"$kiln" compile "$root/configs/examples/views_net.yaml" -o "$out.bmodel" --compare-all > "$out.compile.txt"
if grep -q FAIL "$out.compile.txt"; then cat "$out.compile.txt"; exit 1; fi
grep -q "layers, cmodel vs tpu" "$out.compile.txt" || { echo "no per-layer comparison"; exit 1; }
"$kiln" inspect "$out.bmodel" --json > "$out.inspect.json"
"$py" - "$out.inspect.json" <<'PY'
import json, re, sys
net = json.load(open(sys.argv[1]))["nets"][0]
moving = re.compile(r"(Reshape|Flatten|Squeeze|Unsqueeze|Identity|Split|Slice|Concat)")
bad = [g for g in net["groups"] if g["tiu_count"] == 0 or any(moving.search(o) for o in g["ops"])]
for g in bad:
    print("group %d copies data: ops %s, %d TIU commands" % (g["id"], g["ops"], g["tiu_count"]))
print("views_net: %d groups, %d of them data movement" % (len(net["groups"]), len(bad)))
sys.exit(1 if bad or not net["groups"] else 0)
PY
"$kiln" run "$out.bmodel" --input "$dir/input.npz" --output "$out.out.npz" | tee "$out.run.txt"
# The cmodel's DDR is what the bmodel's memory query asks for, no more.
"$py" - "$out.inspect.json" "$out.run.txt" <<'PY'
import json, re, sys
need = json.load(open(sys.argv[1]))["nets"][0]["memory"]["device_bytes"]
got = int(re.search(r"device DDR (\d+) bytes", open(sys.argv[2]).read()).group(1))
print("cmodel DDR %d bytes, memory query %d bytes" % (got, need))
sys.exit(0 if got == need else 1)
PY
"$kiln" compare "$out.out.npz" "$dir/reference.npz" --tolerance 0.99999,0.999

# In place: with layer groups off, the SiLU's multiply and the add are sliced
# groups that write over the value they read for the last time (a tensor
# written into the bytes of one written earlier), and the cmodel still
# matches the Tpu interpreter and PyTorch.
dir=$build/models/inplace_net
out=$build/out/inplace_net
bash "$root/tests/models/generate.sh" inplace_net "$dir" "$py"
"$kiln" compile "$root/configs/examples/inplace_net.yaml" -o "$out.bmodel" > "$out.compile.txt" ||
  { cat "$out.compile.txt"; exit 1; }
grep -q "verify: PASS at every level" "$out.compile.txt" || { cat "$out.compile.txt"; exit 1; }
"$kiln" inspect "$out.bmodel" --json > "$out.inspect.json"
"$py" - "$out.inspect.json" <<'PY'
import json, sys
net = json.load(open(sys.argv[1]))["nets"][0]
ts = net["tensors"]
# Same bytes, written by a later group (a reshape view is written with its source).
pairs = [(a["name"], b["name"]) for a in ts for b in ts
         if a["buffer"] == b["buffer"] and a["ddr_offset"] == b["ddr_offset"]
         and a["size"] == b["size"] and a["first_group"] < b["first_group"]]
print("in place: %s" % pairs)
sys.exit(0 if len(pairs) >= 2 else 1)
PY
"$kiln" run "$out.bmodel" --input "$dir/input.npz" --output "$out.out.npz" > /dev/null
"$kiln" compare "$out.out.npz" "$dir/reference.npz" --tolerance 0.99999,0.999
