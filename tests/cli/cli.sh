#!/usr/bin/env bash
# cli.sh: the kiln command line explains itself. --version and `kiln version`
# name the compiler, the bmodel format and the firmware ABI (as
# firmware-abi's version.h says); `kiln --help` lists every subcommand; each
# subcommand answers --help (exit 0) with its options; an unknown option or
# command exits 2 naming it; `kiln batch` parses each line from the options'
# defaults (a line's options do not leak into the next).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KILN_BUILD_DIR:-$root/build}
py=${KILN_PYTHON:-/usr/bin/python3}
kiln=$build/tools/kiln/kiln
work=$build/out/cli
rm -rf "$work"
mkdir -p "$work"
failures=0

check() { # NAME EXIT_CODE TEXT COMMAND...: COMMAND exits EXIT_CODE, prints TEXT
  local name=$1 want=$2 text=$3 rc=0
  shift 3
  "$@" > "$work/out.txt" 2>&1 || rc=$?
  if [ $rc -ne "$want" ]; then
    echo "FAIL $name: exit code $rc, expected $want"; cat "$work/out.txt"
    failures=$((failures + 1)); return
  fi
  if ! grep -qF -- "$text" "$work/out.txt"; then
    echo "FAIL $name: no '$text' in:"; cat "$work/out.txt"
    failures=$((failures + 1)); return
  fi
  echo "ok   $name"
}

version_h=$root/firmware-abi/include/kiln/abi/version.h
define() { sed -n "s/^#define $1 \([0-9]*\)$/\1/p" "$version_h"; }
format="bmodel format $(define KILN_BMODEL_FORMAT_MAJOR).$(define KILN_BMODEL_FORMAT_MINOR)"
abi="firmware ABI $(define KILN_ABI_VERSION_MAJOR).$(define KILN_ABI_VERSION_MINOR)"
project=$(sed -n 's/^project(kiln VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
for spelling in --version version; do
  check "version($spelling) compiler" 0 "kiln $project" "$kiln" $spelling
  check "version($spelling) format" 0 "$format" "$kiln" $spelling
  check "version($spelling) abi" 0 "$abi" "$kiln" $spelling
done

for sub in compile run inspect compare calibrate cut batch version; do
  check "help lists $sub" 0 "  $sub " "$kiln" --help
done
# Each subcommand with one option its --help must list.
for sub_option in compile:--emit-top compile:--no-verify compile:-o run:--input run:--stats \
    run:--trace run:--device run:--isa inspect:--json inspect:--profile inspect:--commands \
    compare:--tolerance calibrate:--samples \
    calibrate:--search cut:--from cut:--values batch:--help version:--help; do
  sub=${sub_option%%:*} option=${sub_option#*:}
  check "$sub --help lists $option" 0 "  $option" "$kiln" "$sub" --help
  check "$sub --help describes it" 0 "SUBCOMMAND '$sub': " "$kiln" "$sub" --help
done

for sub in compile run inspect compare calibrate cut batch version; do
  check "$sub rejects an unknown option" 2 "Unknown command line argument '--no-such-option'" \
    "$kiln" "$sub" --no-such-option
done
check "run names an unknown option among good ones" 2 "'--no-such-option'" \
  "$kiln" run m.bmodel --input in.npz --output out.npz --no-such-option
check "a bad option value" 2 "--repeat option: 'many' value invalid" \
  "$kiln" run m.bmodel --input in.npz --output out.npz --repeat many
check "a missing option" 2 "--output option: must be specified" \
  "$kiln" run m.bmodel --input in.npz
check "no command" 2 "expected a command" "$kiln"
check "an unknown command" 2 "Unknown subcommand 'frobnicate'" "$kiln" frobnicate

# kiln batch: the tolerance of the first compare must not hold for the second
# (b is a at cosine about 0.95); an unknown option fails its line only.
"$py" - "$work" <<'PY'
import sys
import numpy as np
rng = np.random.default_rng(0)
a = rng.standard_normal(1000).astype(np.float32)
b = a + 0.3 * rng.standard_normal(1000).astype(np.float32)
np.savez(sys.argv[1] + "/a.npz", x=a)
np.savez(sys.argv[1] + "/b.npz", x=b)
PY
printf '%s\n' "compare $work/a.npz $work/b.npz --tolerance 0.5,0.1" \
  "compare $work/a.npz $work/b.npz" \
  "compare $work/a.npz $work/b.npz --no-such-option" \
  "compare $work/a.npz $work/a.npz" | "$kiln" batch > "$work/batch.txt" 2>&1
rcs=$(sed -n 's/^@@kiln-batch rc=//p' "$work/batch.txt" | tr '\n' ' ')
if [ "$rcs" = "0 1 2 0 " ]; then
  echo "ok   batch resets options between lines"
else
  echo "FAIL batch: exit codes '$rcs', expected '0 1 2 0 '"; cat "$work/batch.txt"
  failures=$((failures + 1))
fi

[ $failures -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "cli: PASS"
