#!/usr/bin/env bash
# stages_oracle.sh: stages in Sophgo's container, picked by Sophgo's runtime.
# PP-LCNet's blocks (paddle_se_net, BM1684X's own commands) compiled for
# 1x3x32x32 and 2x3x48x48 in one file: libbmrt (bmrt_smoke, as an
# application on a board) runs the stage whose input shape it is given, and
# each stage's outputs are byte-identical to kiln's runtime on Sophgo's
# simulator, to kiln's cmodel and to the single-shape file of that shape;
# stage 0 matches PyTorch. model_tool --info lists both stages. Without the
# simulator: SKIPPED, with the reason.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KILN_BUILD_DIR:-$root/build}
py=${KILN_PYTHON:-/usr/bin/python3}
kiln=$build/tools/kiln/kiln
out=$build/out/stages_oracle
mkdir -p "$out"
dir=$build/models/paddle_se_net
bash "$root/tests/models/generate.sh" paddle_se_net "$dir" "$py"
if [ ! -f "${KILN_SOPHGO_SIM:-}" ]; then
  echo "SKIPPED: Sophgo's simulator is not available (KILN_SOPHGO_SIM='${KILN_SOPHGO_SIM:-}'; tools/dev oracle fetches it)"
  exit 0
fi
cfg=$root/configs/examples/paddle_se_net_bm1684x.yaml
base() { sed -e "s|^model: \(.*\)|model: $(dirname "$cfg")/\1|" -e '/^verify:/d' -e '/^output:/d' "$cfg"; }
{ base; echo "inputs: {x: {shapes: [[1, 3, 32, 32], [2, 3, 48, 48]]}}"; } > "$out/stages.yaml"
"$kiln" compile "$out/stages.yaml" -o "$out/stages.bmodel" | grep "stages over one coefficient"
{ base; echo "inputs: {x: {shape: [2, 3, 48, 48]}}"; } > "$out/single.yaml"
"$kiln" compile "$out/single.yaml" -o "$out/single_2x48.bmodel" > /dev/null
"$py" -c "
import numpy as np
np.savez('$out/input_2x48.npz', x=np.random.default_rng(7).standard_normal((2, 3, 48, 48)).astype(np.float32) * 0.5)"

same_bytes() {  # same_bytes A.npz B.npz LABEL
  "$py" - "$@" <<'PY'
import sys
import numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
assert sorted(a.files) == sorted(b.files), (a.files, b.files)
for k in a.files:
    assert a[k].shape == b[k].shape and a[k].tobytes() == b[k].tobytes(), (k, sys.argv[3])
print(f"{', '.join(a.files)}: {sys.argv[3]}: byte-identical")
PY
}
for s in 1x32 2x48; do
  in=$dir/input.npz
  [ "$s" = 1x32 ] || in=$out/input_2x48.npz
  "$kiln" run "$out/stages.bmodel" --input "$in" --output "$out/sim_$s.npz" --device sophgo-sim \
    | grep "ran stage"
  "$kiln" run "$out/stages.bmodel" --input "$in" --output "$out/cmodel_$s.npz" > /dev/null
  "$build/tests/oracle/bmrt_smoke" "$out/stages.bmodel" "$in" "$out/bmrt_$s.npz" \
    > "$out/bmrt_$s.txt" 2>&1 || { cat "$out/bmrt_$s.txt"; exit 1; }
  cat "$out/bmrt_$s.txt"
  grep -q "libbmrt loaded net .* 2 stage(s)" "$out/bmrt_$s.txt"
  same_bytes "$out/bmrt_$s.npz" "$out/sim_$s.npz" "stage $s: libbmrt vs kiln's runtime, both on Sophgo's simulator"
  same_bytes "$out/cmodel_$s.npz" "$out/sim_$s.npz" "stage $s: kiln's cmodel vs Sophgo's simulator"
done
"$kiln" compare "$out/bmrt_1x32.npz" "$dir/reference.npz" --tolerance 0.99999,0.999
"$kiln" run "$out/single_2x48.bmodel" --input "$out/input_2x48.npz" --output "$out/single_2x48.npz" \
  --device sophgo-sim > /dev/null
same_bytes "$out/single_2x48.npz" "$out/bmrt_2x48.npz" "stage 1 vs the single-shape file"
oracle_lib=$(dirname "$KILN_SOPHGO_SIM")
LD_LIBRARY_PATH=$oracle_lib "$oracle_lib/../bin/model_tool" --info "$out/stages.bmodel" \
  > "$out/info.txt"
cat "$out/info.txt"
grep -q "^stage 0" "$out/info.txt"
grep -q "^stage 1" "$out/info.txt"
echo "stages_oracle.sh: PASS"
