#!/usr/bin/env bash
# kiln run --trace: the trace is valid JSON (Chrome trace event format) with a
# TIU and a GDMA track, names every group's commands by the group's ONNX ops
# and tensors, ends at the modelled cycles, and counts DDR bytes upwards; it
# is the same with N threads and one (run_threads.sh); the cycles it says bank
# conflicts added sum to `kiln inspect --profile`'s.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KILN_BUILD_DIR:-$root/build}
py=${KILN_PYTHON:-/usr/bin/python3}
kiln=$build/tools/kiln/kiln
dir=$build/models/resnet_style
out=$build/out/trace
mkdir -p "$out"
bash "$root/tests/models/generate.sh" resnet_style "$dir" "$py"
"$kiln" compile "$root/configs/examples/resnet_style.yaml" -o "$out/net.bmodel" > /dev/null
"$kiln" inspect "$out/net.bmodel" --json > "$out/inspect.json"
bash "$root/tests/e2e/run_threads.sh" "$out/net.bmodel" "$dir/input.npz" "$out/out.npz" \
  --stats "$out/stats.json" --trace "$out/trace.json"
"$kiln" inspect "$out/net.bmodel" --profile > "$out/profile.txt"
"$py" - "$out/trace.json" "$out/inspect.json" "$out/stats.json" "$out/profile.txt" <<'PY'
import json, sys
trace = json.load(open(sys.argv[1]))
net = json.load(open(sys.argv[2]))["nets"][0]
stats = json.load(open(sys.argv[3]))
events = trace["traceEvents"]
slices = [e for e in events if e["ph"] == "X"]
threads = {e["tid"]: e["args"]["name"] for e in events if e.get("name") == "thread_name"}
assert threads == {0: "TIU", 1: "GDMA"}, threads
assert {e["tid"] for e in slices} == {0, 1}, "both engine tracks have commands"
groups = net["groups"]
seen = {e["args"]["group"] for e in slices}
assert seen == set(range(len(groups))), f"groups traced {sorted(seen)} of {len(groups)}"
for g, group in enumerate(groups):
    mine = [e for e in slices if e["args"]["group"] == g]
    tiu = [e for e in mine if e["tid"] == 0]
    gdma = [e for e in mine if e["tid"] == 1]
    assert len(tiu) == group["tiu_count"] and len(gdma) == group["gdma_count"], g
    for e in tiu:
        assert e["name"] in group["ops"], (g, e["name"])
    for e in gdma:
        assert e["name"].split(" ")[0] in ("load", "store", "copy", "move") and \
            len(e["name"].split(" ", 1)[1]) > 0, (g, e["name"])
end = max(e["ts"] + e["dur"] for e in slices)
assert abs(end * 1000 - stats["cycles"]) < 1, (end, stats["cycles"])
# The cycles bank conflicts added, per command, sum to the profile's per
# group (its conf_cyc column) and in all.
profile = [line.split() for line in open(sys.argv[4])]
per_group = {int(f[0]): int(f[9]) for f in profile if len(f) > 10 and f[0].isdigit()}
assert sorted(per_group) == list(range(len(groups))), per_group
for g, cycles in per_group.items():
    mine = sum(e["args"].get("bank_conflict_cycles", 0) for e in slices if e["args"]["group"] == g)
    assert mine == cycles, (g, mine, cycles)
conflicts = sum(e["args"].get("bank_conflict_cycles", 0) for e in slices)
total = [int(f[-1]) for f in profile if f and f[0] == "total"]
assert total == [conflicts] and conflicts > 0, (total, conflicts)
counter = [e["args"]["bytes"] for e in events if e["ph"] == "C"]
assert counter and counter == sorted(counter), "DDR bytes grow"
print(f"trace: {len(slices)} commands in {len(groups)} groups over {end:.1f} us, "
      f"{counter[-1]} DDR bytes, {conflicts} cycles of bank conflicts")
PY
