#!/usr/bin/env bash
# bm1684x_isa.sh MODEL DTYPE MIN_COS DEVICE: a model compiled with `isa:
# bm1684x` (configs/examples/MODEL_bm1684x.yaml for f32, else
# MODEL_DTYPE_bm1684x.yaml): its layer groups as BM1684X's own TIU/GDMA
# streams.
#   DEVICE=cmodel: compile with verify (its cmodel level runs the streams on
#     kiln's model of the chip's commands), run the streams and the kiln
#     records of the same file on the cmodel, each against PyTorch at MIN_COS.
#   DEVICE=sophgo-sim: run the streams on Sophgo's own simulator, against
#     PyTorch at MIN_COS, and require kiln's cmodel to give the very same
#     bytes for every output. Then the board smoke test: the same file (in
#     Sophgo's container, isa: bm1684x's default) through Sophgo's own
#     runtime, libbmrt, as an application on a board runs it (bmrt_smoke),
#     against PyTorch and byte-identical to kiln's runtime on the simulator;
#     kiln's runtime launching each group through bmlib and the firmware's
#     sg_api_multi_fullnet (--device bmlib, a board's launch path; f32 models)
#     gives the same bytes; and Sophgo's model_tool --info lists its net, stage,
#     inputs and outputs. Without the simulator: SKIPPED, with the reason.
set -euo pipefail
model=$1 dtype=$2 min_cos=$3 device=$4
config=$model
[ "$dtype" = f32 ] || config=${model}_$dtype
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KILN_BUILD_DIR:-$root/build}
py=${KILN_PYTHON:-/usr/bin/python3}
kiln=$build/tools/kiln/kiln
out=$build/out/${config}_bm1684x.$device
cfg=$root/configs/examples/${config}_bm1684x.yaml
# The model directory the config reads (INT8 models have calibration samples).
dir=$build/models/$(sed -n 's|^model: .*/models/\([^/]*\)/model.onnx|\1|p' "$cfg")
bash "$root/tests/models/generate.sh" "$(basename "$dir")" "$dir" "$py"
if [ "$device" = cmodel ]; then
  "$kiln" compile "$cfg" -o "$out.bmodel" | tee "$out.compile.txt"
  grep -q "verify: PASS" "$out.compile.txt"
  # isa: bm1684x writes Sophgo's container; kiln's runtime reads it too, and
  # inspect shows the same net as in kiln's container (container: kiln).
  "$kiln" inspect "$out.bmodel" | grep -A1 "Sophgo's container" | grep "agrees with kiln's"
  # Sophgo's index must describe kiln's net: each field that holds the activation
  # size (Model.neuron_size, NetParameter.ctx_size, a tensor of that size), off by one, is
  # caught by inspect.
  "$kiln" inspect "$out.bmodel" --json > "$out.inspect.json"
  "$py" - "$out.bmodel" "$out.inspect.json" "$kiln" <<'PY'
import json, struct, subprocess, sys
path, meta, kiln = sys.argv[1:]
data = open(path, "rb").read()
end = 64 + struct.unpack_from("<I", data, 8)[0]
size = struct.pack("<Q", json.load(open(meta))["nets"][0]["neuron_size"])
hits = [i for i in range(64, end - 8) if data[i:i + 8] == size]
assert len(hits) >= 2, hits  # neuron_size and ctx_size (a tensor may match too)
for i in hits:
    bad = bytearray(data)
    bad[i] ^= 1
    open(path + ".bad", "wb").write(bad)
    r = subprocess.run([kiln, "inspect", path + ".bad"], capture_output=True, text=True)
    assert r.returncode != 0 and "Sophgo's index" in r.stderr, (i, r.returncode, r.stderr)
print(f"inspect: Sophgo's index checked against kiln's ({len(hits)} corruptions caught)")
PY
  { sed -e "s|^model: \(.*\)|model: $(dirname "$cfg")/\1|" -e '/^verify:/d' -e '/^output:/d' "$cfg"
    echo "container: kiln"; } > "$out.kiln.yaml"
  "$kiln" compile "$out.kiln.yaml" -o "$out.kiln.bmodel" > /dev/null
  "$kiln" inspect "$out.kiln.bmodel" --json > "$out.kiln.inspect.json"
  "$py" - "$out.inspect.json" "$out.kiln.inspect.json" <<'PY'
import json, sys
sophgo, kiln = (json.load(open(p)) for p in sys.argv[1:])
assert (sophgo.pop("container"), kiln.pop("container")) == ("sophgo", "kiln")
assert sophgo == kiln, "the containers show different nets"
g = sophgo["nets"][0]["groups"]
print(f"inspect: both containers show the same net ({len(g)} groups, slice tables, plan)")
PY
  "$kiln" run "$out.bmodel" --input "$dir/input.npz" --output "$out.streams.npz" | tee "$out.run.txt"
  grep -q "BM1684X commands" "$out.run.txt"
  "$kiln" compare "$out.streams.npz" "$dir/reference.npz" --tolerance "$min_cos,0.5"
  "$kiln" run "$out.bmodel" --input "$dir/input.npz" --output "$out.records.npz" --isa kiln \
    | grep "kiln records"
  "$kiln" compare "$out.records.npz" "$dir/reference.npz" --tolerance "$min_cos,0.5"
  # The disassembly lists every command of every stream, each ending with its end.
  "$kiln" inspect "$out.bmodel" --commands > "$out.commands.txt"
  "$py" - "$out.commands.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
groups = re.findall(r"BM1684X streams: (\d+) TIU commands .*?, (\d+) GDMA commands", text)
tiu = len(re.findall(r"^\s+tiu\[\d+\] ", text, re.M))
gdma = len(re.findall(r"^\s+gdma\[\d+\] ", text, re.M))
want_tiu, want_gdma = (sum(int(g[i]) for g in groups) for i in (0, 1))
ends = len(re.findall(r"\] sysid ", text)), len(re.findall(r"\] dma_sys ", text))
print(f"{len(groups)} groups: {tiu} TIU and {gdma} GDMA commands listed, ends {ends}")
assert groups and (tiu, gdma) == (want_tiu, want_gdma), (tiu, gdma, want_tiu, want_gdma)
assert ends == (len(groups), len(groups)), ends
assert "sconv" in text and "dma_tensor" in text
PY
  exit 0
fi
"$kiln" compile "$cfg" -o "$out.bmodel" --no-verify > /dev/null
if ! "$kiln" run "$out.bmodel" --input "$dir/input.npz" --output "$out.sim.npz" \
    --device sophgo-sim > "$out.sim.txt" 2>&1; then
  cat "$out.sim.txt"
  if grep -q "simulator is not available" "$out.sim.txt"; then
    echo "SKIPPED: $(grep -o "simulator is not available.*" "$out.sim.txt")"
    exit 0
  fi
  exit 1
fi
grep "Sophgo's simulator" "$out.sim.txt"
"$kiln" compare "$out.sim.npz" "$dir/reference.npz" --tolerance "$min_cos,0.5"
"$kiln" run "$out.bmodel" --input "$dir/input.npz" --output "$out.cmodel.npz"
same_bytes() {  # same_bytes A.npz B.npz LABEL: every output byte-identical
  "$py" - "$@" <<'PY'
import sys
import numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
assert sorted(a.files) == sorted(b.files), (a.files, b.files)
bad = 0
for k in a.files:
    x, y = a[k], b[k]
    same = x.shape == y.shape and x.dtype == y.dtype and x.tobytes() == y.tobytes()
    diff = float(np.max(np.abs(x.astype(np.float64) - y))) if x.shape == y.shape else float("inf")
    print(f"{k}: {x.size} values, {sys.argv[3]}: "
          f"{'byte-identical' if same else f'DIFFERENT (max |diff| {diff:.3g})'}")
    bad += not same
sys.exit(1 if bad else 0)
PY
}
same_bytes "$out.sim.npz" "$out.cmodel.npz" "kiln's cmodel vs Sophgo's simulator"

# The board smoke test: Sophgo's runtime loads and runs kiln's file.
"$build/tests/oracle/bmrt_smoke" "$out.bmodel" "$dir/input.npz" "$out.bmrt.npz" \
  > "$out.bmrt.txt" 2>&1 || { cat "$out.bmrt.txt"; exit 1; }
grep -E "^(libbmrt loaded|output)" "$out.bmrt.txt"
"$kiln" compare "$out.bmrt.npz" "$dir/reference.npz" --tolerance "$min_cos,0.5"
same_bytes "$out.bmrt.npz" "$out.sim.npz" "libbmrt vs kiln's runtime, both on Sophgo's simulator"
oracle_lib=$(dirname "$KILN_SOPHGO_SIM")
# The launch path does not depend on the dtype: f32, the simulator's
# fastest, shows it (a 16-bit ResNet-50 would add minutes).
if [ "$dtype" = f32 ]; then
  KILN_BMLIB=$oracle_lib/libbmlib.so.0 TPUKERNEL_FIRMWARE_PATH=$KILN_SOPHGO_SIM \
    "$kiln" run "$out.bmodel" --input "$dir/input.npz" --output "$out.bmlib.npz" --device bmlib \
    > "$out.bmlib.txt" 2>&1 || { cat "$out.bmlib.txt"; exit 1; }
  grep "^ran .* on bmlib and the chip's firmware" "$out.bmlib.txt"
  same_bytes "$out.bmlib.npz" "$out.bmrt.npz" "kiln's runtime through bmlib vs libbmrt"
fi
LD_LIBRARY_PATH=$oracle_lib "$oracle_lib/../bin/model_tool" --info "$out.bmodel" > "$out.info.txt"
cat "$out.info.txt"
name=$(sed -n 's/^name: //p' "$cfg")
grep -q "^net 0: \[$name\]  static" "$out.info.txt"
grep -q "^stage 0" "$out.info.txt"
grep -q "^input: " "$out.info.txt"
grep -q "^output: " "$out.info.txt"
