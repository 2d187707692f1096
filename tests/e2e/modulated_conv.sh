#!/usr/bin/env bash
# optimize.modulated_conv on the 64 px StyleGAN2 generator: `keep` computes
# every modulated filter on the device, in LMEM in its conv's layer group (a
# dynamic-weight descriptor each, marked formed on chip, no rewrite
# reported), `rewrite` makes every one static (each reported, no descriptor
# left), `auto` reports a decision per modulated conv; all three match
# PyTorch's image and feature (f32 at cosine 0.99999; f16 and bf16, keep and
# rewrite, at 0.999), and `auto` takes at most 1 % more modelled cycles than
# the faster of the two.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KILN_BUILD_DIR:-$root/build}
py=${KILN_PYTHON:-/usr/bin/python3}
kiln=$build/tools/kiln/kiln
model=stylegan2_64
dir=$build/models/$model
out=$build/out/modulated_conv
mkdir -p "$out"
bash "$root/tests/models/generate.sh" "$model" "$dir" "$py"
# 14 modulated convs at 64 px: b4 conv1 and toRGB; b8 to b64 the up-sampling
# deconv, conv1 and toRGB each.
modulated=14
for mode in keep rewrite auto; do
  cat > "$out/$mode.yaml" <<YAML
model: $dir/model.onnx
quantize: f32
optimize: {modulated_conv: $mode}
verify: {reference: $dir/reference.npz, tolerance: [0.99999, 0.999]}
YAML
  "$kiln" compile "$out/$mode.yaml" -o "$out/$mode.bmodel" > "$out/$mode.compile.txt"
  "$kiln" inspect "$out/$mode.bmodel" > "$out/$mode.inspect.txt"
  "$kiln" run "$out/$mode.bmodel" --input "$dir/input.npz" --output "$out/$mode.npz" \
    --stats "$out/$mode.stats.json" > /dev/null
  "$kiln" compare "$out/$mode.npz" "$dir/reference.npz" --tolerance 0.99999,0.999
done
for dtype in f16 bf16; do
  for mode in keep rewrite; do
    cat > "$out/${mode}_$dtype.yaml" <<YAML
model: $dir/model.onnx
quantize: $dtype
optimize: {modulated_conv: $mode}
verify: {reference: $dir/reference.npz, tolerance: [0.999, 0.99]}
YAML
    "$kiln" compile "$out/${mode}_$dtype.yaml" -o "$out/${mode}_$dtype.bmodel" > /dev/null
    "$kiln" run "$out/${mode}_$dtype.bmodel" --input "$dir/input.npz" \
      --output "$out/${mode}_$dtype.npz" > /dev/null
    "$kiln" compare "$out/${mode}_$dtype.npz" "$dir/reference.npz" --tolerance 0.999,0.5
  done
done
count() { grep -c "$1" "$2" || true; }
[ "$(count 'modulated conv' "$out/keep.inspect.txt")" -eq 0 ] || { echo "keep rewrote"; exit 1; }
[ "$(count '^  dynamic weight' "$out/keep.inspect.txt")" -ge "$modulated" ] \
  || { echo "keep: fewer dynamic-weight descriptors than modulated convs"; exit 1; }
[ "$(count '^  dynamic weight.*"formed_on_chip":true' "$out/keep.inspect.txt")" -eq "$modulated" ] \
  || { echo "keep: not every modulated filter formed on chip"; exit 1; }
[ "$(count 'modulated conv rewritten' "$out/rewrite.inspect.txt")" -eq "$modulated" ] \
  || { echo "rewrite: not every modulated conv reported rewritten"; exit 1; }
[ "$(count '^  dynamic weight' "$out/rewrite.inspect.txt")" -eq 0 ] \
  || { echo "rewrite: a dynamic filter is left"; exit 1; }
[ "$(count 'decision: .*: modulated conv \(rewritten\|kept\)' "$out/auto.inspect.txt")" -eq "$modulated" ] \
  || { echo "auto: not one decision per modulated conv"; exit 1; }
grep -q "graph rewrites ($modulated)" "$out/auto.compile.txt" \
  || { echo "auto: compile does not report its rewrites"; exit 1; }
cycles() { "$py" -c "import json,sys; print(json.load(open(sys.argv[1]))['cycles'])" "$1"; }
keep=$(cycles "$out/keep.stats.json") rewrite=$(cycles "$out/rewrite.stats.json")
auto=$(cycles "$out/auto.stats.json")
echo "modelled cycles: keep $keep, rewrite $rewrite, auto $auto"
best=$(( keep < rewrite ? keep : rewrite ))
[ $(( auto * 100 )) -le $(( best * 101 )) ] \
  || { echo "auto is more than 1 % slower than the faster mode"; exit 1; }
