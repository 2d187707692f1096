#!/usr/bin/env bash
# run_e2e.sh MODEL MIN_COS MIN_EUCLID: generate (if needed), compile, run, compare.
set -euo pipefail
model=$1 min_cos=$2 min_euclid=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KILN_BUILD_DIR:-$root/build}
py=${KILN_PYTHON:-/usr/bin/python3}
kiln=$build/tools/kiln/kiln
dir=$build/models/$model
if [ ! -f "$dir/model.onnx" ]; then
  "$py" "$root/tests/models/$model.py" --out "$dir"
fi
"$kiln" compile "$root/configs/examples/$model.yaml" -o "$build/out/$model.bmodel"
"$kiln" inspect "$build/out/$model.bmodel" > "$build/out/$model.inspect.txt"
# The activations must not fit LMEM whole: some group is sliced.
grep -E "slices [0-9]+ \(N\) x [0-9]+ \(H\)" "$build/out/$model.inspect.txt" \
  | grep -vq "slices 1 (N) x 1 (H)" || { echo "no sliced layer group"; exit 1; }
"$kiln" run "$build/out/$model.bmodel" --input "$dir/input.npz" \
  --output "$build/out/$model.out.npz" --stats "$build/out/$model.stats.json"
"$kiln" compare "$build/out/$model.out.npz" "$dir/reference.npz" \
  --tolerance "$min_cos,$min_euclid"
