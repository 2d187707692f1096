#!/usr/bin/env python3
"""tools/dev bench: per model, compile and cmodel wall time, modelled cycles
against the roofline, and DDR bytes against the minimum, all from one run."""
import json, os, subprocess, sys, time

build = sys.argv[1]
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
kiln = os.path.join(build, "tools", "kiln", "kiln")
MACS_PER_CYCLE_F32 = 1024          # firmware-abi/include/kiln/abi/chip.h
DDR_BYTES_PER_CYCLE = 62.277       # DDR->LMEM, 58 GiB/s at 1 GHz

def bench(name):
    out = os.path.join(build, "out")
    bm = os.path.join(out, name + ".bench.bmodel")
    t0 = time.time()
    subprocess.run([kiln, "compile", os.path.join(root, "configs", "examples", name + ".yaml"),
                    "-o", bm], check=True, stdout=subprocess.DEVNULL)
    t1 = time.time()
    stats = os.path.join(out, name + ".bench.json")
    subprocess.run([kiln, "run", bm, "--input", os.path.join(build, "models", name, "input.npz"),
                    "--output", os.path.join(out, name + ".bench.npz"), "--stats", stats],
                   check=True, stdout=subprocess.DEVNULL)
    t2 = time.time()
    s = json.load(open(stats))
    info = json.loads(subprocess.run([kiln, "inspect", bm, "--json"], check=True,
                                     capture_output=True, text=True).stdout)
    net = info["nets"][0]
    roof = max(net["macs"] / MACS_PER_CYCLE_F32, net["min_ddr_bytes"] / DDR_BYTES_PER_CYCLE)
    print(f"{name} (f32):")
    print(f"  compile time        {1000 * (t1 - t0):10.0f} ms")
    print(f"  cmodel wall time    {1000 * (t2 - t1):10.0f} ms (run {s['wall_ms']:.0f} ms)")
    print(f"  modelled cycles     {s['cycles']:10d}")
    print(f"  roofline cycles     {roof:10.0f}  -> modelled/roofline {s['cycles'] / roof:.2f}x")
    print(f"  DDR bytes           {s['ddr_bytes']:10d}")
    print(f"  minimum DDR bytes   {net['min_ddr_bytes']:10d}  -> ratio {s['ddr_bytes'] / net['min_ddr_bytes']:.2f}x")

for model in ["resnet_style"]:
    bench(model)
