#!/usr/bin/env bash
# run_precision.sh CONFIG MIN_COS [EXPECT]: a model in a narrower dtype.
# Generates the model (and, for INT8 configs with calibration samples, the
# samples and the calibration table), compiles with the config's `verify`
# (reference, Top, Tpu interpreter and cmodel levels must each pass), runs on
# the cmodel, checks every output against the PyTorch F32 reference with
# cosine >= MIN_COS (with N threads and one alike: run_threads.sh) and that
# no tensor of the run holds Inf or NaN. EXPECT, if given, must appear in the
# compile output (e.g. a precision decision).
set -euo pipefail
config=$1 min_cos=$2 expect=${3:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KILN_BUILD_DIR:-$root/build}
py=${KILN_PYTHON:-/usr/bin/python3}
kiln=$build/tools/kiln/kiln
cfg=$root/configs/examples/$config.yaml
# The model directory the config reads (build/models/NAME/model.onnx).
model=$(sed -n 's|^model: .*/models/\([^/]*\)/model.onnx|\1|p' "$cfg")
dir=$build/models/$model
bash "$root/tests/models/generate.sh" "$model" "$dir" "$py"
if grep -q "quantize: int8" "$cfg" && grep -q "samples:" "$cfg"; then
  "$kiln" calibrate "$cfg"
fi
out=$build/out/$config
"$kiln" compile "$cfg" -o "$out.bmodel" | tee "$out.compile.txt"
if [ -n "$expect" ] && ! grep -qF -- "$expect" "$out.compile.txt"; then
  echo "compile output lacks '$expect'"; exit 1
fi
"$kiln" inspect "$out.bmodel" > "$out.inspect.txt"
bash "$root/tests/e2e/run_threads.sh" "$out.bmodel" "$dir/input.npz" "$out.out.npz"
"$kiln" compare "$out.out.npz" "$dir/reference.npz" --tolerance "$min_cos,0.5"
"$kiln" run "$out.bmodel" --input "$dir/input.npz" --output "$out.all.npz" --all-tensors > /dev/null
"$py" - "$out.all.npz" <<'PY'
import sys
import numpy as np
z = np.load(sys.argv[1])
bad = [k for k in z.files if not np.all(np.isfinite(z[k]))]
print(f"{len(z.files)} tensors checked for Inf/NaN: {len(bad)} bad {bad[:5]}")
sys.exit(1 if bad else 0)
PY
