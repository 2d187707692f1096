#!/usr/bin/env bash
# RandomNormalLike (StyleGAN2's noise): rejected by default with an error that
# names the node and both config options; `const` freezes a reproducible
# seeded sample. (`input` is e2e_stylegan2_64_random.)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KILN_BUILD_DIR:-$root/build}
py=${KILN_PYTHON:-/usr/bin/python3}
kiln=$build/tools/kiln/kiln
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dir=$build/models/stylegan2_64_random
bash "$root/tests/models/generate.sh" stylegan2_64_random "$dir" "$py" || exit 1
failures=0
fail() { echo "FAIL $1"; failures=$((failures + 1)); }

config() {  # config MODE SEED
  printf 'model: %s\nrandom_ops: %s\nrandom_seed: %s\n' "$dir/model.onnx" "$1" "$2" > "$work/c.yaml"
}

config reject 0
"$kiln" compile "$work/c.yaml" -o "$work/r.bmodel" > "$work/out.txt" 2>&1
rc=$?
{ [ $rc -ne 0 ] && [ $rc -lt 128 ]; } || fail "reject: exit code $rc"
grep -q "node '/b4/conv1/RandomNormalLike' (RandomNormalLike): draws random numbers" "$work/out.txt" || fail "reject: node not named"
grep -q 'random_ops: const' "$work/out.txt" || fail "reject: no hint to random_ops: const"
grep -q 'random_ops: input' "$work/out.txt" || fail "reject: no hint to random_ops: input"
[ -e "$work/r.bmodel" ] && fail "reject: wrote a bmodel"
head -n 1 "$work/out.txt"

config const 7
"$kiln" compile "$work/c.yaml" -o "$work/a.bmodel" > /dev/null || fail "const: compile"
"$kiln" compile "$work/c.yaml" -o "$work/b.bmodel" > /dev/null || fail "const: compile again"
cmp -s "$work/a.bmodel" "$work/b.bmodel" || fail "const: same seed gave different bmodels"
config const 8
"$kiln" compile "$work/c.yaml" -o "$work/c.bmodel" > /dev/null || fail "const: compile seed 8"
cmp -s "$work/a.bmodel" "$work/c.bmodel" && fail "const: another seed gave the same sample"

[ $failures -eq 0 ] || { echo "$failures random-op checks failed"; exit 1; }
echo "random-op checks passed"
