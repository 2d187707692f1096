#!/usr/bin/env bash
# tiny_models.sh KILN PYTHON OUT_DIR: generate the tiny PyTorch test models
# (tests/models/tiny_nets.py), compile each with `kiln compile`, and check it
# on the cmodel against PyTorch, leaving OUT_DIR/NAME.bmodel for the soak,
# byte-flip and fuzz tests. tiny_conv is compiled a second time with isa:
# bm1684x (BM1684X's streams in Sophgo's container): tiny_conv_sophgo.
set -euo pipefail
kiln=$1 py=$2 out=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
[ -f "$out/models/tiny_multi/model.onnx" ] || "$py" "$root/tests/models/tiny_nets.py" --out "$out/models"
for variant in tiny_conv:kiln tiny_multi:kiln tiny_conv:bm1684x; do
  model=${variant%:*} isa=${variant#*:}
  name=$model
  [ "$isa" = kiln ] || name=${model}_sophgo
  dir=$out/models/$model
  cat > "$dir/$name.yaml" <<YAML
model: $dir/model.onnx
name: $name
chip: bm1684x
isa: $isa
quantize: f32
layer_group: {enabled: true}
YAML
  "$kiln" compile "$dir/$name.yaml" -o "$out/$name.bmodel"
  "$kiln" run "$out/$name.bmodel" --input "$dir/input.npz" --output "$dir/out.npz"
  "$kiln" compare "$dir/out.npz" "$dir/reference.npz" --tolerance 0.99999,0.999
done
# Stages and several nets: tiny_conv compiled for its own input shape and a
# batch of two (one net, two stages), combined with tiny_multi; in kiln's
# container (records) and in Sophgo's (tiny_conv's streams, twice).
shape=$("$py" -c "import numpy as np; print(list(np.load('$out/models/tiny_conv/input.npz')['input'].shape))")
batch2=$("$py" -c "s = $shape; s[0] = 2; print(s)")
for isa in kiln bm1684x; do
  suffix=""
  [ "$isa" = kiln ] || suffix=_sophgo
  { sed -e "s/^name: .*/name: tiny_conv/" -e "s/^isa: .*/isa: $isa/" \
      "$out/models/tiny_conv/tiny_conv.yaml"
    echo "inputs: {input: {shapes: [$shape, $batch2]}}"; } > "$out/models/tiny_conv/stages$suffix.yaml"
  "$kiln" compile "$out/models/tiny_conv/stages$suffix.yaml" -o "$out/tiny_conv_stages$suffix.part"
done
"$kiln" combine "$out/tiny_conv_stages.part" "$out/tiny_multi.bmodel" -o "$out/tiny_stages.bmodel"
"$kiln" combine "$out/tiny_conv_stages_sophgo.part" "$out/tiny_conv_sophgo.bmodel" \
  -o "$out/tiny_stages_sophgo.bmodel"
rm "$out"/tiny_conv_stages*.part
