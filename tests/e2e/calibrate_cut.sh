#!/usr/bin/env bash
# calibrate_cut.sh: `kiln calibrate` and `kiln cut` end to end on resnet_style.
#  1. Calibrates on 16 samples with kl, minmax and auto: one table line per
#     tensor the compiled net has, kl threshold <= max(|min|, |max|)
#     everywhere and below it somewhere, the same min/max as minmax, each
#     line naming the method that gave its threshold; auto picks per tensor
#     among the methods' thresholds and says how many each got, and its
#     table compiles to an INT8 net that matches f32.
#  2. Cuts blocks 1-2 out of the model, with the values of an f32 cmodel run
#     (`kiln run --all-tensors`), compiles the cut (f32), runs it on the
#     cut's inputs and compares with the cut's outputs (cosine >= 0.9999).
#     Compiling an INT8 config without its table calibrates first.
#  3. Bad tensor names, missing graph inputs and bad samples get clear errors.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KILN_BUILD_DIR:-$root/build}
py=${KILN_PYTHON:-/usr/bin/python3}
kiln=$build/tools/kiln/kiln
dir=$build/models/resnet_style_int8
work=$build/out/calibrate_cut
rm -rf "$work"
mkdir -p "$work"
failures=0

# resnet_style with 16 calibration samples drawn like its input.
bash "$root/tests/models/generate.sh" resnet_style_int8 "$dir" "$py"

# --- 1. calibration -------------------------------------------------------
for method in kl minmax auto; do
  cat > "$work/calib_$method.yaml" <<EOF
model: $dir/model.onnx
name: resnet_style
quantize: int8
calibration: {samples: "$dir/calib/*.npz", method: $method, table: $method.calib}
EOF
  "$kiln" calibrate "$work/calib_$method.yaml" --samples 16 2> "$work/calibrate_$method.err" \
    | tee "$work/calibrate_$method.out"
  grep -q "16 samples, method $method -> $work/$method.calib" "$work/calibrate_$method.out"
  # Not a terminal: only the final progress line.
  grep -q "calibrate \[#*\] 16/16 samples" "$work/calibrate_$method.err"
  [ "$(grep -c "calibrate \[" "$work/calibrate_$method.err")" -eq 1 ]
done
# An INT8 config whose table does not exist yet: compile calibrates first
# (saying so), then compiles with the table it wrote.
sed 's/table: kl.calib/table: oncompile.calib/; s/method: kl/method: minmax/' \
  "$work/calib_kl.yaml" > "$work/oncompile.yaml"
"$kiln" compile "$work/oncompile.yaml" -o "$work/oncompile.bmodel" > "$work/oncompile.out" 2> "$work/oncompile.err"
grep -q "no calibration table $work/oncompile.calib yet: calibrating on the config's 16 samples" \
  "$work/oncompile.out"
grep -q "16 samples, method minmax -> $work/oncompile.calib" "$work/oncompile.out"
grep -q "^compiled resnet_style -> $work/oncompile.bmodel" "$work/oncompile.out"
grep -q "calibrate \[#*\] 16/16 samples" "$work/oncompile.err"
# The same table as `kiln calibrate` wrote.
diff <(grep -v '^#' "$work/oncompile.calib") <(grep -v '^#' "$work/minmax.calib")

# The f32 net without layer groups (every op's result goes through DDR) and a
# dump of all its tensors.
cat > "$work/f32.yaml" <<EOF
model: $dir/model.onnx
name: resnet_style_f32
quantize: f32
layer_group: {enabled: false}
EOF
"$kiln" compile "$work/f32.yaml" -o "$work/f32.bmodel" > /dev/null
"$kiln" run "$work/f32.bmodel" --input "$dir/input.npz" --output "$work/run.npz" \
  --all-tensors > /dev/null

"$py" - "$work/kl.calib" "$work/minmax.calib" "$work/run.npz" "$dir/model.onnx" \
  "$work/auto.calib" "$work/calibrate_auto.out" <<'PY'
import sys
import numpy as np
import onnx

def read(path):
    lines = open(path).read().splitlines()
    assert lines[0] == "# kiln calibration table v2", lines[0]
    assert lines[1].startswith("# model: ") and "samples: 16" in lines[1], lines[1]
    assert lines[2] == "# tensor threshold min max method", lines[2]
    table, methods = {}, {}
    for line in lines[3:]:
        if line.startswith("#!mean "):
            # A conv's input: its channel means (bias correction).
            fields = line.split(None, 1)[1].split(" ")
            count, values = int(fields[0]), fields[1:]
            name = " ".join(values[count:])
            assert name in table, line
            means[path, name] = [float(v) for v in values[:count]]
            continue
        name, th, lo, hi, method = line.rsplit(None, 4)
        assert name not in table, name
        assert method in ("minmax", "kl", "percentile", "mse"), line
        table[name] = (float(th), float(lo), float(hi))
        methods[name] = method
    return table, methods

means = {}
(kl, kl_methods), (mm, mm_methods) = read(sys.argv[1]), read(sys.argv[2])
(auto, auto_methods) = read(sys.argv[5])
assert set(mm_methods.values()) == {"minmax"}, set(mm_methods.values())
# The net input feeds the stem conv: its 3 channel means, the same in every
# table (the samples are the same), inside the channel's range.
stem = means[sys.argv[2], "input"]
assert len(stem) == 3 and stem == means[sys.argv[1], "input"], stem
assert all(mm["input"][1] <= m <= mm["input"][2] for m in stem), stem
assert len(means) >= 3 * 4, len(means)  # several convs' inputs per table
# kl's table says where a sparse histogram (the logits) left minmax's.
assert set(kl_methods.values()) == {"kl", "minmax"}, set(kl_methods.values())
assert auto.keys() == mm.keys()
for name, (th, lo, hi) in auto.items():
    assert (lo, hi) == mm[name][1:], name
    if auto_methods[name] == "kl":
        assert th == kl[name][0], (name, th, kl[name])
    if auto_methods[name] == "minmax":
        assert th == mm[name][0], (name, th, mm[name])
    else:
        assert th < mm[name][0], (name, auto_methods[name], th, mm[name])
chosen = {m: list(auto_methods.values()).count(m) for m in set(auto_methods.values())}
assert len(chosen) > 1, chosen
summary = open(sys.argv[6]).read()
for m, n in chosen.items():
    assert " %s %d" % (m, n) in summary, (m, n, summary)
assert kl.keys() == mm.keys(), set(kl) ^ set(mm)
with np.load(sys.argv[3]) as run:
    dumped = {n[len("tensor:"):] if n.startswith("tensor:") else n for n in run.files}
missing = sorted(dumped - kl.keys())
assert not missing, "tensors of the compiled net missing from the table: %s" % missing
# The table also has the Top tensors lowering folded away: a reshape between
# two ops of the same layout (the classifier's Flatten) leaves no tensor.
views = {o for node in onnx.load(sys.argv[4]).graph.node
         if node.op_type in ("Flatten", "Reshape", "Squeeze", "Unsqueeze") for o in node.output}
extra = sorted(kl.keys() - dumped)
assert set(extra) <= views, ("table tensors the net lacks that are not views", extra)
assert "input" in kl and "logits" in kl
clipped = 0
for name, (th, lo, hi) in kl.items():
    absmax = max(abs(lo), abs(hi))
    assert 0 <= th <= absmax * (1 + 1e-6), (name, th, lo, hi)
    assert (lo, hi) == mm[name][1:], (name, lo, hi, mm[name])
    assert mm[name][0] == absmax or abs(mm[name][0] - absmax) <= 1e-6 * absmax, name
    clipped += th < absmax * 0.999
assert clipped > 0, "kl clipped no tensor"
ratios = sorted(kl[n][0] / max(abs(kl[n][1]), abs(kl[n][2])) for n in kl
                if max(abs(kl[n][1]), abs(kl[n][2])) > 0)
print("calibration: %d tensors (%d in the compiled net), kl clips %d; "
      "kl/minmax threshold ratio min %.3f median %.3f; input kl %.4g minmax %.4g; "
      "logits kl %.4g minmax %.4g; auto chose %s" % (
          len(kl), len(dumped), clipped, ratios[0], ratios[len(ratios) // 2],
          kl["input"][0], mm["input"][0], kl["logits"][0], mm["logits"][0],
          " ".join("%s %d" % kv for kv in sorted(chosen.items()))))
PY
grep -q "^auto thresholds: [0-9]* of [0-9]* tensors measured" "$work/calibrate_auto.out"

# auto's table compiled: the INT8 net against the f32 one.
sed 's/name: resnet_style/name: resnet_style_auto/' "$work/calib_auto.yaml" > "$work/int8_auto.yaml"
"$kiln" compile "$work/int8_auto.yaml" -o "$work/int8_auto.bmodel" > /dev/null
"$kiln" run "$work/int8_auto.bmodel" --input "$dir/input.npz" --output "$work/int8_auto.npz" \
  > /dev/null
"$kiln" run "$work/f32.bmodel" --input "$dir/input.npz" --output "$work/f32_out.npz" > /dev/null
"$kiln" compare "$work/int8_auto.npz" "$work/f32_out.npz" --tolerance 0.99,0.9 | tee "$work/auto_compare.out"

# --- 2. cut ---------------------------------------------------------------
from=/blocks/blocks.0/relu_1/Relu_output_0
to=/blocks/blocks.2/relu_1/Relu_output_0
"$kiln" cut "$dir/model.onnx" --from "$from" --to "$to" -o "$work/sub.onnx" \
  --values "$work/run.npz" | tee "$work/cut.out"
grep -q "input  $from float\[1,32,56,56\]" "$work/cut.out"
grep -q "output $to float\[1,128,14,14\]" "$work/cut.out"
"$py" - "$work/sub.onnx" "$from" "$to" <<'PY'
import sys, collections, onnx
m = onnx.load(sys.argv[1])
onnx.checker.check_model(m, full_check=True)
g = m.graph
assert [i.name for i in g.input] == [sys.argv[2]], g.input
assert [o.name for o in g.output] == [sys.argv[3]], g.output
ops = collections.Counter(n.op_type for n in g.node)
# Blocks 1 and 2: 3 convs (one a downsample) + 3 BNs + 2 Relus + Add + Relu each.
assert ops == {"Conv": 6, "BatchNormalization": 6, "Relu": 4, "Add": 2}, ops
print("cut: %d nodes (%s), %d initializers" % (
    len(g.node), " ".join("%s=%d" % kv for kv in sorted(ops.items())), len(g.initializer)))
PY
cat > "$work/sub.yaml" <<EOF
model: sub.onnx
name: sub
quantize: f32
EOF
"$kiln" compile "$work/sub.yaml" -o "$work/sub.bmodel"
"$kiln" run "$work/sub.bmodel" --input "$work/sub.inputs.npz" --output "$work/sub.out.npz"
"$kiln" compare "$work/sub.out.npz" "$work/sub.outputs.npz" --tolerance 0.9999,0.99 \
  | tee "$work/compare.out"

# --- 3. errors ------------------------------------------------------------
# expect_error NAME PATTERN CMD...: CMD must exit 1..127 and print PATTERN.
expect_error() {
  local name=$1 pattern=$2; shift 2
  local rc=0
  "$@" > "$work/err.txt" 2>&1 || rc=$?
  if [ $rc -eq 0 ] || [ $rc -ge 128 ]; then
    echo "FAIL $name: exit code $rc"; cat "$work/err.txt"; failures=$((failures + 1)); return
  fi
  if ! grep -qF -- "$pattern" "$work/err.txt"; then
    echo "FAIL $name: no '$pattern' in:"; cat "$work/err.txt"; failures=$((failures + 1)); return
  fi
  echo "ok   $name: $(head -n 1 "$work/err.txt")"
}
m=$dir/model.onnx
expect_error cut_unknown_from "--from tensor 'no_such_tensor' does not exist" \
  "$kiln" cut "$m" --from no_such_tensor --to "$to" -o "$work/bad.onnx"
expect_error cut_unknown_to "--to tensor '/blocks/blocks.9/Add_output_0' does not exist" \
  "$kiln" cut "$m" --from "$from" --to /blocks/blocks.9/Add_output_0 -o "$work/bad.onnx"
# Block 1's skip path starts at block 0's output, upstream of --from.
expect_error cut_needs_graph_input \
  "--to tensor '/blocks/blocks.1/relu_1/Relu_output_0' needs graph input 'input', which is not in --from" \
  "$kiln" cut "$m" --from /blocks/blocks.1/relu/Relu_output_0 \
  --to /blocks/blocks.1/relu_1/Relu_output_0 -o "$work/bad.onnx"
expect_error cut_from_and_to "is in both --from and --to" \
  "$kiln" cut "$m" --from "$from" --to "$from" -o "$work/bad.onnx"
[ ! -e "$work/bad.onnx" ] || { echo "FAIL: a failed cut wrote bad.onnx"; failures=$((failures + 1)); }

mkdir -p "$work/badsamples" "$work/shapesamples"
"$py" - "$work" <<'PY'
import sys, numpy as np
np.savez(sys.argv[1] + "/badsamples/s0.npz", image=np.zeros((1, 3, 224, 224), np.float32))
np.savez(sys.argv[1] + "/shapesamples/s0.npz", input=np.zeros((1, 3, 112, 112), np.float32))
PY
printf 'model: %s\ncalibration: {samples: "badsamples/*.npz", method: kl}\n' "$m" > "$work/bad1.yaml"
expect_error calibrate_missing_input "badsamples/s0.npz: no array named 'input'" \
  "$kiln" calibrate "$work/bad1.yaml" -o "$work/bad.calib"
printf 'model: %s\ncalibration: {samples: "shapesamples/*.npz"}\n' "$m" > "$work/bad2.yaml"
expect_error calibrate_shape "has shape [1, 3, 112, 112], the model input needs [1, 3, 224, 224]" \
  "$kiln" calibrate "$work/bad2.yaml" -o "$work/bad.calib"
printf 'model: %s\ncalibration: {samples: "nothing/*.npz"}\n' "$m" > "$work/bad3.yaml"
expect_error calibrate_no_samples "no calibration samples match '$work/nothing/*.npz'" \
  "$kiln" calibrate "$work/bad3.yaml"
printf 'model: %s\ncalibration: {samples: "badsamples/*.npz", asymmetric: maybe}\n' "$m" > "$work/bad4.yaml"
expect_error config_asymmetric "bad4.yaml:2:56: error: expected true or false for 'calibration.asymmetric'" \
  "$kiln" calibrate "$work/bad4.yaml"
expect_error calibrate_too_many "--samples 17 but only 16 files match" \
  "$kiln" calibrate "$work/calib_kl.yaml" --samples 17

[ $failures -eq 0 ] || { echo "$failures error check(s) failed"; exit 1; }
echo "calibrate_cut: PASS"
