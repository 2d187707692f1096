#!/usr/bin/env bash
# prepare_models.sh: the smoke tests' fixture. For every small example config,
# generates the PyTorch model and its reference (once, with
# tests/models/generate.sh as tools/dev and run_e2e.sh do), compiles the
# bmodel and lists it in $build/smoke/models.txt:
#   NAME BMODEL INPUT.npz REFERENCE.npz
# or, when generating or compiling failed (Smoke.EveryExampleMatchesItsReference
# reports it; the other smoke tests use the examples that compiled):
#   NAME FAILED LOG
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KILN_BUILD_DIR:-$root/build}
py=${KILN_PYTHON:-/usr/bin/python3}
kiln=$build/tools/kiln/kiln
out=$build/smoke
mkdir -p "$out"
manifest=$out/models.txt.tmp
: > "$manifest"

for config in "$root"/configs/examples/*.yaml; do
  name=$(basename "$config" .yaml)
  # Full-width models (torchvision's, DragGAN's generator) have e2e tests and
  # bench entries of their own; here they would only add minutes of
  # calibration and compilation.
  case "$name" in tv_*|*_draggan*) continue ;; esac
  # Configs of one model in several dtypes share its directory.
  model=$(sed -n 's|^model: .*/models/\([^/]*\)/model.onnx|\1|p' "$config")
  dir=$build/models/$model
  log=$out/$name.log
  if ! bash "$root/tests/models/generate.sh" "$model" "$dir" "$py" > "$log" 2>&1; then
    echo "$name FAILED $log" >> "$manifest"
    continue
  fi
  # The example configs name the models tools/dev generates under build/;
  # point them at this build's copies.
  sed "s#\.\./\.\./build/#$build/#g" "$config" > "$out/$name.yaml"
  # INT8 configs need their calibration table first.
  if grep -q "quantize: int8" "$config" && grep -q "samples:" "$config" &&
     ! "$kiln" calibrate "$out/$name.yaml" > "$log" 2>&1; then
    echo "$name FAILED $log" >> "$manifest"
    continue
  fi
  # `kiln inspect` prints the memory to provide; the smoke test checks it.
  # (The e2e tests run each config's verification; here it would only repeat.)
  if ! "$kiln" compile "$out/$name.yaml" -o "$out/$name.bmodel" --no-verify >> "$log" 2>&1 ||
     ! "$kiln" inspect "$out/$name.bmodel" > "$out/$name.inspect.txt" 2>> "$log"; then
    echo "$name FAILED $log" >> "$manifest"
    continue
  fi
  # Models whose random ops became inputs (random_ops: input) keep the noise
  # PyTorch drew next to the other inputs.
  input=$dir/input.npz
  [ -f "$dir/input_with_noise.npz" ] && input=$dir/input_with_noise.npz
  echo "$name $out/$name.bmodel $input $dir/reference.npz" >> "$manifest"
done
mv "$manifest" "$out/models.txt"
cat "$out/models.txt"
# The fixture itself fails only if no example is usable.
grep -qv " FAILED " "$out/models.txt"
