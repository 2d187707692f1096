#!/usr/bin/env bash
# stages.sh: one bmodel, many input shapes (docs/DESIGN.md section 9,
# `inputs: {x: {shapes: [...]}}`), and several nets in one file (kiln combine).
#   - PP-OCRv4's recognizer as PaddleOCR exports it (dynamic batch and width)
#     compiled for 1x3x48x320, 1x3x48x640 and 4x3x48x320 in one bmodel: the
#     coefficients are stored once (<= 1.02x one single-shape compile's), and
#     each stage's outputs are byte-identical to the single-shape bmodel of
#     its shape and match PyTorch; `kiln run` picks the stage from the input's
#     shape and names the stages for a shape none has.
#   - `kiln combine` of the three single-shape files writes the very same
#     file; of det + cls + rec it runs each net by name, byte-identical to
#     the net's own file.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KILN_BUILD_DIR:-$root/build}
py=${KILN_PYTHON:-/usr/bin/python3}
kiln=$build/tools/kiln/kiln
out=$build/out/stages
mkdir -p "$out"
rec=$build/models/ppocr_v4_rec_dynamic
bash "$root/tests/models/generate.sh" ppocr_v4_rec_dynamic "$rec" "$py"
same_bytes() {  # same_bytes A.npz B.npz: every array byte-identical
  "$py" - "$@" <<'PY'
import sys
import numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
assert sorted(a.files) == sorted(b.files), (a.files, b.files)
for k in a.files:
    assert a[k].shape == b[k].shape and a[k].tobytes() == b[k].tobytes(), k
print(f"{sys.argv[1].split('/')[-1]} and {sys.argv[2].split('/')[-1]}: byte-identical")
PY
}

cfg=$root/configs/examples/ppocr_v4_rec_stages.yaml
"$kiln" compile "$cfg" -o "$out/rec_stages.bmodel" | tee "$out/compile.txt"
grep -q "verify: PASS" "$out/compile.txt"
grep "3 stages over one coefficient region" "$out/compile.txt"

# The same model, one compile per shape.
shapes=(1x320 1x640 4x320)
for s in "${shapes[@]}"; do
  n=${s%x*} w=${s#*x}
  sed -e "s|^model: \(.*\)|model: $(dirname "$cfg")/\1|" -e '/^verify:/d' -e '/^output:/d' \
    -e "s|  x: {shapes: .*|  x: {shape: [$n, 3, 48, $w]}|" "$cfg" > "$out/rec_$s.yaml"
  "$kiln" compile "$out/rec_$s.yaml" -o "$out/rec_$s.bmodel" > /dev/null
done
for f in rec_stages rec_1x320 rec_1x640 rec_4x320; do
  "$kiln" inspect --json "$out/$f.bmodel" > "$out/$f.json"
done
"$py" - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
meta = {f: json.load(open(f"{out}/{f}.json"))["nets"] for f in
        ("rec_stages", "rec_1x320", "rec_1x640", "rec_4x320")}
staged = meta.pop("rec_stages")
assert len(staged) == 1 and len(staged[0]["stages"]) == 2, "one net, stages 1 and 2"
shapes = [staged[0]["inputs"][0]["shape"]] + [s["inputs"][0]["shape"] for s in staged[0]["stages"]]
assert shapes == [[1, 3, 48, 320], [1, 3, 48, 640], [4, 3, 48, 320]], shapes
single = max(n[0]["coeff_size"] for n in meta.values())
ratio = staged[0]["memory"]["coeff_bytes"] / single
sizes = {f: os.path.getsize(f"{out}/{f}.bmodel") for f in
         ("rec_stages", "rec_1x320", "rec_1x640", "rec_4x320")}
three = sum(v for k, v in sizes.items() if k != "rec_stages")
print(f"coefficients: {staged[0]['memory']['coeff_bytes']} bytes in the staged file, "
      f"{single} in one single-shape file ({ratio:.4f}x)")
print(f"files: three single-shape bmodels {three} bytes, one staged bmodel "
      f"{sizes['rec_stages']} bytes")
assert ratio <= 1.02, ratio
PY

# Each stage runs as its own file does, chosen by the input's shape.
for i in 0 1 2; do
  s=${shapes[$i]}
  in=$rec/input.npz ref=$rec/reference.npz
  [ "$s" = 1x320 ] || in=$rec/shape_$s/input.npz ref=$rec/shape_$s/reference.npz
  "$kiln" run "$out/rec_stages.bmodel" --input "$in" --output "$out/staged_$s.npz" \
    | tee "$out/run_$s.txt"
  grep -q "ran stage $i of 3" "$out/run_$s.txt"
  "$kiln" run "$out/rec_$s.bmodel" --input "$in" --output "$out/single_$s.npz" > /dev/null
  same_bytes "$out/staged_$s.npz" "$out/single_$s.npz"
  "$kiln" compare "$out/staged_$s.npz" "$ref" --tolerance 0.99999,0.999
done
"$py" -c "import numpy as np; np.savez('$out/bad.npz', x=np.zeros((2, 3, 48, 320), np.float32))"
if "$kiln" run "$out/rec_stages.bmodel" --input "$out/bad.npz" --output "$out/bad.out.npz" \
    2> "$out/bad.txt"; then
  echo "a shape no stage has ran"; exit 1
fi
cat "$out/bad.txt"
grep -q "no stage of the net takes inputs of these shapes (x \[2, 3, 48, 320\]); its stages: 0: x \[1, 3, 48, 320\]; 1: x \[1, 3, 48, 640\]; 2: x \[4, 3, 48, 320\]" "$out/bad.txt"

# kiln combine: the single-shape files become the staged file, byte for byte.
"$kiln" combine "$out/rec_1x320.bmodel" "$out/rec_1x640.bmodel" "$out/rec_4x320.bmodel" \
  -o "$out/rec_combined.bmodel"
cmp "$out/rec_combined.bmodel" "$out/rec_stages.bmodel"
echo "combine of the three single-shape files: byte-identical to the staged compile"

# det + cls + rec in one file, each run by name.
for m in ppocr_v4_det ppocr_v4_cls; do
  bash "$root/tests/models/generate.sh" $m "$build/models/$m" "$py"
  { echo "model: $build/models/$m/model.onnx"; echo "name: ${m#ppocr_v4_}"
    echo "quantize: f32"; } > "$out/$m.yaml"
  "$kiln" compile "$out/$m.yaml" -o "$out/$m.bmodel" > /dev/null
done
"$kiln" combine "$out/ppocr_v4_det.bmodel" "$out/ppocr_v4_cls.bmodel" "$out/rec_stages.bmodel" \
  -o "$out/ocr.bmodel" | tee "$out/combine.txt"
"$kiln" inspect "$out/ocr.bmodel" | grep "^net" | tee "$out/ocr.nets.txt"
[ "$(grep -c '^net' "$out/ocr.nets.txt")" = 5 ]  # det, cls, rec and rec's stages 1 and 2
for m in det cls; do
  "$kiln" run "$out/ocr.bmodel" --net $m --input "$build/models/ppocr_v4_$m/input.npz" \
    --output "$out/ocr_$m.npz" > /dev/null
  "$kiln" run "$out/ppocr_v4_$m.bmodel" --input "$build/models/ppocr_v4_$m/input.npz" \
    --output "$out/own_$m.npz" > /dev/null
  same_bytes "$out/ocr_$m.npz" "$out/own_$m.npz"
  "$kiln" compare "$out/ocr_$m.npz" "$build/models/ppocr_v4_$m/reference.npz" \
    --tolerance 0.99999,0.999
done
"$kiln" run "$out/ocr.bmodel" --net ppocr_v4_rec --input "$rec/shape_1x640/input.npz" \
  --output "$out/ocr_rec.npz" | grep "ran stage 1 of 3"
same_bytes "$out/ocr_rec.npz" "$out/single_1x640.npz"
if "$kiln" run "$out/ocr.bmodel" --net layout --input "$rec/input.npz" \
    --output "$out/x.npz" 2> "$out/nonet.txt"; then
  echo "a net the file does not have ran"; exit 1
fi
grep "no net named 'layout' (the file has 'det', 'cls', 'ppocr_v4_rec')" "$out/nonet.txt"
echo "stages.sh: PASS"
