#!/usr/bin/env bash
# run_e2e.sh MODEL MIN_COS MIN_EUCLID [sliced|any-groups]: generate (if needed),
# compile, run, compare every output. With `sliced` (the default) some layer
# group must be sliced (the activations do not fit LMEM whole); `any-groups`
# drops that requirement for models that need not slice.
set -euo pipefail
model=$1 min_cos=$2 min_euclid=$3 groups=${4:-sliced}
case "$groups" in
  sliced|any-groups) ;;
  *) echo "run_e2e.sh: 4th argument must be 'sliced' or 'any-groups', got '$groups'" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KILN_BUILD_DIR:-$root/build}
py=${KILN_PYTHON:-/usr/bin/python3}
kiln=$build/tools/kiln/kiln
dir=$build/models/$model
bash "$root/tests/models/generate.sh" "$model" "$dir" "$py"
# Models with random ops compiled with `random_ops: input` take the noise the
# reference used as extra inputs.
input=$dir/input.npz
[ -f "$dir/input_with_noise.npz" ] && input=$dir/input_with_noise.npz
"$kiln" compile "$root/configs/examples/$model.yaml" -o "$build/out/$model.bmodel"
"$kiln" inspect "$build/out/$model.bmodel" > "$build/out/$model.inspect.txt"
# The activations must not fit LMEM whole: some group is sliced.
if [ "$groups" = sliced ]; then
  grep -E "slices [0-9]+ \(N\) x [0-9]+ \(C\) x [0-9]+ \(H\)" "$build/out/$model.inspect.txt" \
    | grep -vq "slices 1 (N) x 1 (C) x 1 (H)" || { echo "no sliced layer group"; exit 1; }
fi
# With N threads and one: the same bits (run_threads.sh).
bash "$root/tests/e2e/run_threads.sh" "$build/out/$model.bmodel" "$input" \
  "$build/out/$model.out.npz" --stats "$build/out/$model.stats.json"
"$kiln" compare "$build/out/$model.out.npz" "$dir/reference.npz" \
  --tolerance "$min_cos,$min_euclid"
