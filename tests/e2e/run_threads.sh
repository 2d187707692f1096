#!/usr/bin/env bash
# run_threads.sh BMODEL INPUT OUT.npz [kiln run options]: `kiln run` twice,
# with the cmodel's threads (at least 2: the TIU and GDMA queues run
# concurrently, large records split over the pool) and with one thread (every
# command in start order). Both under KILN_CMODEL_STRICT_SYNC: commands the
# sync ids let run together must not touch the same LMEM bytes. The outputs,
# the stats (all but wall_ms) and the trace (with --stats, --trace) must be
# the same bits. OUT.npz and the other files are the threaded run's.
set -euo pipefail
bmodel=$1 input=$2 out=$3
shift 3
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KILN_BUILD_DIR:-$root/build}
kiln=$build/tools/kiln/kiln
threads=$(nproc)
[ "$threads" -ge 2 ] || threads=2
export KILN_CMODEL_STRICT_SYNC=1
KILN_CMODEL_THREADS=$threads "$kiln" run "$bmodel" --input "$input" --output "$out" "$@"
# The one-thread run writes every file beside the threaded run's (suffix .1t).
args=() files=()
while [ $# -gt 0 ]; do
  case "$1" in
    --stats|--trace) args+=("$1" "$2.1t"); files+=("$2"); shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
KILN_CMODEL_THREADS=1 "$kiln" run "$bmodel" --input "$input" --output "$out.1t" "${args[@]}" \
  > /dev/null
cmp "$out" "$out.1t" || { echo "outputs differ between $threads threads and 1"; exit 1; }
for f in "${files[@]}"; do
  cmp <(sed -E 's/"wall_ms": ?[0-9.e+-]*,? ?//' "$f") <(sed -E 's/"wall_ms": ?[0-9.e+-]*,? ?//' "$f.1t") ||
    { echo "$f differs between $threads threads and 1"; exit 1; }
done
echo "same bits with $threads threads and 1"
