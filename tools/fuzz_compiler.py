#!/usr/bin/python3
"""Differential fuzzer of the kiln compiler (issue 15).

    tools/fuzz_compiler.py --kiln build/tools/kiln/kiln --work DIR -n N [--seed S]
    tools/fuzz_compiler.py --kiln ... --work DIR --replay tests/fuzz_compiler/regressions.txt

Generates random small ONNX graphs over kiln's op set (fuzz_graphs.py: random
shapes and attributes, numpy broadcasting, chains and branches, the export
forms of the real world), computes each graph's reference with PyTorch in
float64, and compiles it with `kiln compile` at f32, f16, bf16 and int8 (int8
calibrated with `kiln calibrate` on a few random samples). Every compile has
a `verify:` section, so kiln itself checks the four levels (reference -> Top
interpreter -> Tpu interpreter -> cmodel, tools/kiln/Verify.cpp) at each
dtype's tolerance (docs/DESIGN.md section 8). All kiln commands run in one
`kiln batch` process (restarted after a crash), so a graph costs a few
compiles, not a few process starts.

Outcome of one (graph, dtype):
  pass        every level within tolerance
  precision   Top -> Tpu out of tolerance at f16/bf16/int8, but no worse
              (SLACK times) than an ideal chip at that dtype on this graph
              (the reference evaluated with every stored value rounded to
              the dtype, int8 with calibrated per-tensor scales): the cost
              of the dtype, counted, not a finding
  limit       a documented limit: a clear error naming the node and its op
              ("node 'NAME' (Op): ... not supported ..."); counted, not a finding
  FINDING     anything else: a compile or calibrate error on a supported op,
              an internal error, a verify failure at some level (which level
              is part of the finding), a crash (signal) or a hang
Each finding is shrunk (greedy: keep one output, bypass nodes, cut the graph
at a node's input, halve spatial sizes, while the same failure persists) and
written to WORK/findings/<id>/ (model.onnx, graph.json, input.npz,
reference.npz, calib/, the kiln log, a README line). Exit status 1 iff there
was a finding.

--replay FILE compiles the graphs a test list names (lines `SEED INDEX` for
a generated graph, or `path/to/graph.json` for a shrunk one, `#` comments)
and fails on any finding: the regression tests of fixed findings.

Run with /usr/bin/python3 (numpy, onnx, torch).
"""
import argparse
import json
import os
import re
import select
import shutil
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fuzz_graphs as fg  # noqa: E402

DTYPES = ("f32", "f16", "bf16", "int8")
CALIB_SAMPLES = 3
REF_TOLERANCE = (0.9999, 0.99)  # Top interpreter (f32 semantics) vs PyTorch float64
LIMIT = re.compile(r"node '[^']*' \([A-Za-z]+\):.*(not supported|unsupported operator)"
                   # docs/DESIGN.md, LayerGroup: rows that ops read whole.
                   r"|does not fit local memory even when sliced along N, C, H and W where it allows")
VERIFY_FAIL = re.compile(r"verify: FAIL at the (\w+) level")
STATUS = re.compile(rb"\n@@kiln-batch rc=(-?\d+)\n")


class Kiln:
    """A `kiln batch` process: one command line in, its output and status out."""

    def __init__(self, kiln, timeout):
        self.kiln, self.timeout, self.proc = kiln, timeout, None

    def start(self):
        env = dict(os.environ, KILN_CMODEL_THREADS="1")
        self.proc = subprocess.Popen([self.kiln, "batch"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     env=env, bufsize=0)
        self.buf = b""

    def stop(self):
        if self.proc:
            self.proc.stdin.close()
            self.proc.wait()
            self.proc = None

    def kill(self):
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def run(self, line):
        """(rc, output): rc is kiln's status, or 'crash:SIGNAL' / 'hang'."""
        if self.proc is None:
            self.start()
        try:
            self.proc.stdin.write((line + "\n").encode())
        except BrokenPipeError:
            pass
        deadline = time.monotonic() + self.timeout
        fd = self.proc.stdout.fileno()
        while True:
            m = STATUS.search(self.buf)
            if m:
                out = self.buf[:m.start()].decode(errors="replace")
                self.buf = self.buf[m.end():]
                return int(m.group(1)), out
            left = deadline - time.monotonic()
            if left <= 0:
                out = self.buf.decode(errors="replace")
                self.kill()
                return "hang", out
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                out = self.buf.decode(errors="replace")
                rc = self.proc.wait()
                self.proc = None
                return "crash:%d" % rc, out
            self.buf += chunk


def classify(rc, out):
    """(outcome, detail): outcome is pass | limit | a finding kind."""
    if rc == 0:
        return "pass", ""
    if isinstance(rc, str):
        return rc.split(":")[0], rc
    m = VERIFY_FAIL.search(out)
    if m:
        return "mismatch-" + m.group(1), m.group(0)
    if "internal error" in out:
        line = next(l for l in out.splitlines() if "internal error" in l)
        return "internal-error", signature(line)
    errs = [l for l in out.splitlines() if "error" in l]
    if errs and all(LIMIT.search(l) for l in errs):
        return "limit", signature(errs[0])
    return "error", signature(errs[0] if errs else out.strip().splitlines()[-1:] and
                              out.strip().splitlines()[-1] or "no output")


def signature(line):
    """An error line without names and numbers: what shrinking must keep."""
    line = re.sub(r"loc\([^)]*\)", "loc", line)
    line = re.sub(r"'[^']*'", "'_'", line)
    line = re.sub(r"-?\d+(\.\d+)?(e-?\d+)?", "N", line)
    return line.strip()[:200]


class Case:
    """One graph on disk: model, input, reference, calibration samples, configs."""

    def __init__(self, graph, directory):
        self.graph, self.dir = graph, directory

    def write(self):
        os.makedirs(os.path.join(self.dir, "calib"), exist_ok=True)
        g = self.graph
        feeds = g.inputs_values(0)
        ref = fg.evaluate(g, feeds)
        fg.save_model(g, os.path.join(self.dir, "model.onnx"))
        np.savez(os.path.join(self.dir, "input.npz"), **feeds)
        np.savez(os.path.join(self.dir, "reference.npz"),
                 **{k: v.astype(np.float32) for k, v in ref.items()})
        # The verify input is one sample: calibration sees what is checked.
        for i in range(CALIB_SAMPLES):
            np.savez(os.path.join(self.dir, "calib", "s%d.npz" % i), **g.inputs_values(i))
        for dt in DTYPES:
            with open(os.path.join(self.dir, "%s.yaml" % dt), "w") as f:
                f.write("model: model.onnx\nname: fuzz_%s\nchip: bm1684x\nquantize: %s\n"
                        "calibration: {samples: calib/*.npz, method: minmax, table: g.calib}\n"
                        "verify: {reference: reference.npz, tolerance: [%g, %g]}\n"
                        "output: %s.bmodel\n" % (dt, dt, REF_TOLERANCE[0], REF_TOLERANCE[1], dt))


def check(kiln, case, dtypes=DTYPES):
    """{dtype: (outcome, detail, log)} for one written case."""
    results = {}
    d = case.dir
    calib = None
    for dt in dtypes:
        if dt == "int8" and calib is None:
            rc, out = kiln.run("calibrate %s/int8.yaml" % d)
            calib = classify(rc, out) + (out,)
            if calib[0] != "pass":
                results[dt] = ("calibrate-" + calib[0], calib[1], out)
                continue
        rc, out = kiln.run("compile %s/%s.yaml" % (d, dt))
        outcome, detail = classify(rc, out)
        if outcome == "mismatch-tpu" and dt != "f32" and \
                within_dtype_rounding(case.graph, dt, out):
            outcome = "precision"
        results[dt] = (outcome, detail, out)
    return results


ROW = re.compile(r"^\s+tpu\s+vs top\s+(\S+)\s+(-?[\d.]+|nan)\s+(-?[\d.]+|nan)\s+FAIL", re.M)
SLACK = 4.0  # kiln's error may be this many times an ideal chip's


def similarity(a, b):
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    cos = 1.0 if na == 0 and nb == 0 else float(a @ b / (na * nb)) if na and nb else 0.0
    mid = np.linalg.norm((a + b) / 2)
    euc = 1.0 if mid == 0 and np.linalg.norm(a - b) == 0 else \
        1 - float(np.linalg.norm(a - b) / mid) if mid else 0.0
    return cos, euc


def within_dtype_rounding(graph, dtype, log):
    """A Top -> Tpu failure at a narrow dtype that an ideal chip at that
    dtype (fuzz_graphs.evaluate with emulate) shows as well, within SLACK
    times its error: the cost of the dtype on this graph (cancellation, a
    near-zero output, a softmax of large logits), not a compiler bug."""
    rows = ROW.findall(log)
    if not rows:
        return False
    feeds = graph.inputs_values(0)
    ranges = None
    if dtype == "int8":
        ranges = {}
        for k in range(CALIB_SAMPLES):
            env = fg.evaluate(graph, graph.inputs_values(k), want_all=True)
            for name, t in env.items():
                if t.is_floating_point() and t.numel():
                    ranges[name] = max(ranges.get(name, 0.0), float(t.abs().max()))
    ref = fg.evaluate(graph, feeds)
    emu = fg.evaluate(graph, feeds, emulate=dtype, ranges=ranges)
    for name, cos, euc in rows:
        if name not in ref or "nan" in (cos, euc):
            return False
        ecos, eeuc = similarity(emu[name], ref[name])
        if 1 - float(cos) > SLACK * max(1 - ecos, 1e-7) or \
                1 - float(euc) > SLACK * max(1 - eeuc, 1e-5):
            return False
    return True


def is_finding(outcome):
    return outcome not in ("pass", "limit", "calibrate-limit", "precision")


def shrink(kiln, graph, dtype, key, work, budget_s=120):
    """Greedy reduction of `graph` while (outcome, detail) of `dtype` stays `key`."""
    start = time.monotonic()
    tries = [0]

    def fails(g):
        if time.monotonic() - start > budget_s:
            return False
        tries[0] += 1
        try:
            g.validate()
        except Exception:
            return False
        d = os.path.join(work, "shrink")
        shutil.rmtree(d, ignore_errors=True)
        try:
            Case(g, d).write()
        except Exception:
            return False
        r = check(kiln, Case(g, d), (dtype,))[dtype]
        return (r[0], r[1]) == key

    best = graph
    changed = True
    while changed and time.monotonic() - start < budget_s:
        changed = False
        for cand in fg.reductions(best):
            if fails(cand):
                best, changed = cand, True
                break
    return best, tries[0]


def write_finding(kiln, work, graph, dtype, key, log, origin):
    # A replayed graph's origin is its path: keep the name only, so the
    # finding lands in WORK/findings, not next to the replayed file.
    name = os.path.basename(origin)
    if name.endswith(".json"):
        name = name[:-5]
    fid = "%s-%s-%s" % (name.replace(" ", "_"), dtype, key[0])
    d = os.path.join(work, "findings", fid)
    shutil.rmtree(d, ignore_errors=True)
    Case(graph, d).write()
    r = check(kiln, Case(graph, d), (dtype,))[dtype]
    with open(os.path.join(d, "graph.json"), "w") as f:
        json.dump(graph.to_json(), f, indent=1)
    with open(os.path.join(d, "kiln.log"), "w") as f:
        f.write(r[2])
    with open(os.path.join(d, "README"), "w") as f:
        f.write("origin %s dtype %s outcome %s\n%s\nnodes: %s\n" % (
            origin, dtype, key[0], key[1], " ".join(n.op for n in graph.nodes)))
    return d


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("-n", type=int, default=100, help="graphs to generate")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=int, default=0, help="first graph index")
    ap.add_argument("--replay", help="test list: `SEED INDEX` or graph.json lines")
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--timeout", type=float, default=120, help="per kiln command, seconds")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()

    kiln = Kiln(os.path.abspath(args.kiln), args.timeout)
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    jobs = []  # (origin, graph thunk)
    if args.replay:
        base = os.path.dirname(os.path.abspath(args.replay))
        for line in open(args.replay):
            line = line.split("#")[0].strip()
            if not line:
                continue
            if line.endswith(".json"):
                path = os.path.join(base, line)
                jobs.append((line, lambda p=path: fg.Graph.from_json(json.load(open(p)))))
            else:
                s, i = map(int, line.split())
                jobs.append(("seed%d_%d" % (s, i), lambda s=s, i=i: fg.generate(s, i)))
    else:
        for i in range(args.start, args.start + args.n):
            jobs.append(("seed%d_%d" % (args.seed, i),
                         lambda i=i: fg.generate(args.seed, i)))

    counts = {}
    findings = []
    t0 = time.monotonic()
    graphs = 0
    for origin, make in jobs:
        graph = make()
        case = Case(graph, os.path.join(work, "case"))
        shutil.rmtree(case.dir, ignore_errors=True)
        case.write()
        results = check(kiln, case)
        graphs += 1
        shrunk = {}  # (outcome, detail) -> finding dir: one shrink per failure
        for dt, (outcome, detail, log) in results.items():
            counts[(dt, outcome)] = counts.get((dt, outcome), 0) + 1
            if not is_finding(outcome):
                continue
            key = (outcome, detail)
            print("FINDING %s %s: %s %s" % (origin, dt, outcome, detail), flush=True)
            if key in shrunk:
                findings.append((origin, dt, outcome, detail, shrunk[key], -1))
                print("  as at the dtype before: %s" % shrunk[key], flush=True)
                continue
            small, tries = (graph, 0) if args.no_shrink or args.replay else \
                shrink(kiln, graph, dt, key, work)
            d = write_finding(kiln, work, small, dt, key, log, origin)
            findings.append((origin, dt, outcome, detail, d, len(small.nodes)))
            shrunk[key] = d
            print("  shrunk %d -> %d nodes in %d tries: %s" % (
                len(graph.nodes), len(small.nodes), tries, d), flush=True)
        if not args.quiet and graphs % 50 == 0:
            el = time.monotonic() - t0
            print("%d graphs, %.1f s, %.2f graphs/s, %d findings" % (
                graphs, el, graphs / el, len(findings)), flush=True)
    kiln.stop()
    el = time.monotonic() - t0
    print("\n%d graphs x %d dtypes in %.1f s: %.2f graphs/s (%.2f compiles/s)" % (
        graphs, len(DTYPES), el, graphs / max(el, 1e-9), graphs * len(DTYPES) / max(el, 1e-9)))
    for dt in DTYPES:
        row = {o: c for (d, o), c in counts.items() if d == dt}
        print("  %-5s %s" % (dt, ", ".join("%s %d" % kv for kv in sorted(row.items()))))
    print("%d findings" % len(findings))
    for f in findings:
        print("  %s %s %s (%s) -> %s (%d nodes)" % f)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
