#!/usr/bin/env bash
# Bad input gets a clear error and a non-zero exit, never a crash (exit >= 128).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KILN_BUILD_DIR:-$root/build}
py=${KILN_PYTHON:-/usr/bin/python3}
kiln=$build/tools/kiln/kiln
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# expect_error NAME PATTERN CMD...: CMD must exit 1..127 and print PATTERN.
expect_error() {
  local name=$1 pattern=$2; shift 2
  "$@" > "$work/out.txt" 2>&1
  local rc=$?
  if [ $rc -eq 0 ] || [ $rc -ge 128 ]; then
    echo "FAIL $name: exit code $rc"; cat "$work/out.txt"; failures=$((failures + 1)); return
  fi
  if ! grep -qE "$pattern" "$work/out.txt"; then
    echo "FAIL $name: no '$pattern' in:"; cat "$work/out.txt"; failures=$((failures + 1)); return
  fi
  echo "ok   $name: $(head -n 1 "$work/out.txt")"
}

# An unsupported operator names the node and the op type.
"$py" - "$work/celu.onnx" <<'PY'
import sys, onnx
from onnx import helper, TensorProto
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
g = helper.make_graph([helper.make_node("Celu", ["x"], ["y"], name="my_celu")], "g", [x], [y])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
PY
printf 'model: celu.onnx\n' > "$work/celu.yaml"
expect_error unsupported_op "my_celu.*Celu|Celu.*my_celu" "$kiln" compile "$work/celu.yaml"

# A truncated ONNX file.
head -c 300 "$build/models/resnet_style/model.onnx" > "$work/trunc.onnx"
printf 'model: trunc.onnx\n' > "$work/trunc.yaml"
expect_error truncated_onnx "trunc.onnx" "$kiln" compile "$work/trunc.yaml"

# An unknown YAML key, reported at file:line:col.
printf 'model: celu.onnx\nquantise: f32\n' > "$work/key.yaml"
expect_error yaml_unknown_key "key.yaml:2:1: error: unknown key 'quantise'" "$kiln" compile "$work/key.yaml"

# Corrupt bmodels: truncated, and single bytes flipped across the file.
bm=$build/out/resnet_style.bmodel
size=$(stat -c %s "$bm")
for len in 0 10 63 64 200 $((size / 2)) $((size - 1)); do
  head -c "$len" "$bm" > "$work/t.bmodel"
  expect_error "truncated_bmodel_$len" "cannot load bmodel|error" \
    "$kiln" run "$work/t.bmodel" --input "$build/models/resnet_style/input.npz" --output "$work/o.npz"
done
for off in 0 8 12 20 40 56 64 100 1000 $((size / 3)) $((size - 10)); do
  cp "$bm" "$work/f.bmodel"
  printf '\xff' | dd of="$work/f.bmodel" bs=1 seek="$off" conv=notrunc status=none
  cmp -s "$bm" "$work/f.bmodel" || expect_error "flipped_byte_$off" "cannot load bmodel" \
    "$kiln" run "$work/f.bmodel" --input "$build/models/resnet_style/input.npz" --output "$work/o.npz"
done

# A command the verifier refuses is named with its group and index: the last
# GDMA command of the last group, its destination moved far outside.
"$py" - "$bm" "$work/g.bmodel" "$kiln" > "$work/where.txt" <<'PY'
import json, struct, subprocess, sys, zlib
src, dst, kiln = sys.argv[1:4]
data = bytearray(open(src, "rb").read())
groups = json.loads(subprocess.check_output([kiln, "inspect", "--json", src]))["nets"][0]["groups"]
g, count = len(groups) - 1, groups[-1]["gdma_count"]
header_size = struct.unpack_from("<I", data, 8)[0]
blob_offset, blob_size = struct.unpack_from("<QQ", data, 32)
# The group's GDMA queue: count 96-byte records with ids 1..count (the last such run).
at = None
for off in range(blob_offset, blob_offset + blob_size - 96 * count + 1, 8):
    if all(struct.unpack_from("<I", data, off + 96 * i)[0] == i + 1 and data[off + 96 * i + 8] < 4
           for i in range(count)):
        at = off
record = at + 96 * (count - 1)
struct.pack_into("<Q", data, record + 40, 1 << 40)  # dst_addr
end = blob_offset + blob_size
struct.pack_into("<I", data, 48, zlib.crc32(bytes(data[header_size:end])) & 0xffffffff)
open(dst, "wb").write(data)
print(f"group {g}, GDMA command {count - 1}: destination outside")
PY
expect_error gdma_outside "KILN_ERR_OUT_OF_RANGE in net 0, $(cat "$work/where.txt")" \
  "$kiln" run "$work/g.bmodel" --input "$build/models/resnet_style/input.npz" --output "$work/o.npz"
# A byte under the checksum: the header is named.
cp "$bm" "$work/c.bmodel"
printf '\x5a' | dd of="$work/c.bmodel" bs=1 seek=$((size - 10)) conv=notrunc status=none
cmp -s "$bm" "$work/c.bmodel" || expect_error checksum_detail "KILN_ERR_BAD_CHECKSUM in header: checksum" \
  "$kiln" run "$work/c.bmodel" --input "$build/models/resnet_style/input.npz" --output "$work/o.npz"

[ $failures -eq 0 ] || { echo "$failures bad-input checks failed"; exit 1; }
echo "all bad-input checks passed"
