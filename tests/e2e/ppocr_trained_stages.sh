#!/usr/bin/env bash
# ppocr_trained_stages.sh: PaddleOCR's trained PP-OCRv4 recognizer, the ONNX
# export OCR applications ship (batch and width dynamic), compiled for three
# crop shapes in one bmodel (f32). Each stage, picked by the input's shape,
# reads rendered text lines: the CTC decoding of kiln's output is the text
# drawn, and the output matches ONNX Runtime's (cosine >= 0.99999).
# Needs the models (tools/dev fetches them: KILN_PPOCR_MODELS) and ONNX
# Runtime (onnxruntime-node: KILN_ORT_NODE_PATH); without them: SKIPPED, why.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KILN_BUILD_DIR:-$root/build}
py=${KILN_PYTHON:-/usr/bin/python3}
kiln=$build/tools/kiln/kiln
models=${KILN_PPOCR_MODELS:-}
onnx=$models/ch_PP-OCRv4_rec_infer.onnx
source "$root/tests/e2e/ppocr_prereqs.sh"
ppocr_prereqs ch_PP-OCRv4_rec_infer.onnx
out=$build/out/ppocr_trained_stages
mkdir -p "$out"
cat > "$out/rec.yaml" <<YAML
model: $onnx
name: ppocr_v4_rec
chip: bm1684x
quantize: f32
inputs:
  x: {shapes: [[1, 3, 48, 320], [1, 3, 48, 640], [4, 3, 48, 320]]}
YAML
"$kiln" compile "$out/rec.yaml" -o "$out/rec.bmodel" | grep "stages over one coefficient"
"$py" "$root/tests/models/text_lines.py" --out "$out/1x320" --shape 1,3,48,320 \
  --text "Hello kiln 2026"
"$py" "$root/tests/models/text_lines.py" --out "$out/1x640" --shape 1,3,48,640 \
  --text "The quick brown fox jumps over the lazy dog"
"$py" "$root/tests/models/text_lines.py" --out "$out/4x320" --shape 4,3,48,320 \
  --text "BM1684X" --text "PaddleOCR v4" --text "stage two" --text "batch of four"
stage=0
for s in 1x320 1x640 4x320; do
  "$kiln" run "$out/rec.bmodel" --input "$out/$s.npz" --output "$out/$s.kiln.npz" \
    | grep "ran stage $stage of 3"
  NODE_PATH=$KILN_ORT_NODE_PATH node "$root/tools/ort_bench.js" "$onnx" "$out/$s.npz" --runs 1 \
    --reference "$out/$s.kiln.npz" > "$out/$s.ort.json"
  "$py" - "$out/$s" "$models/ppocr_keys_v1.txt" <<'PY'
import json, sys
import numpy as np
base, keys_path = sys.argv[1:]
keys = ["blank"] + [l.rstrip("\n") for l in open(keys_path, encoding="utf-8")] + [" "]
probs = np.load(base + ".kiln.npz")
probs = probs[probs.files[0]]
want = open(base + ".txt", encoding="utf-8").read().splitlines()
for b, text in enumerate(want):
    best, prev, read = probs[b].argmax(-1), 0, []
    for i in best:
        if i != prev and i != 0:
            read.append(keys[i])
        prev = i
    got = "".join(read).strip()
    print(f"{base.split('/')[-1]}[{b}]: read '{got}'")
    assert got == text, (got, text)
cosine = json.load(open(base + ".ort.json"))["cosine"]
print(f"against ONNX Runtime: cosine {cosine}")
assert all(c >= 0.99999 for c in cosine.values()), cosine
PY
  stage=$((stage + 1))
done
echo "ppocr_trained_stages.sh: PASS"
