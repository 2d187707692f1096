#!/usr/bin/python3
"""Calibration samples: writes COUNT npz files like a model's input.npz.

Each sample holds every array of the reference input (same names, shapes and
dtypes), drawn from a normal distribution with that array's own mean and
standard deviation: the test models' inputs are torch.randn draws, so the
samples follow the distribution the reference input came from. Seeded, so
the same call writes the same files. Run with /usr/bin/python3 (numpy).
"""
import argparse
import os

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", required=True, help="reference input.npz")
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--count", type=int, default=16)
    parser.add_argument("--seed", type=int, default=1000)
    args = parser.parse_args()
    if args.count < 1:
        raise SystemExit("calib_samples: --count must be positive")
    os.makedirs(args.out, exist_ok=True)
    with np.load(args.input) as ref:
        arrays = {name: ref[name] for name in ref.files}
    rng = np.random.default_rng(args.seed)
    for i in range(args.count):
        sample = {}
        for name, a in arrays.items():
            if np.issubdtype(a.dtype, np.floating):
                x = rng.standard_normal(a.shape) * float(a.std()) + float(a.mean())
            else:  # integer inputs (indices, masks): resample the reference's values
                x = rng.choice(a.reshape(-1), size=a.shape)
            sample[name] = x.astype(a.dtype)
        np.savez(os.path.join(args.out, "sample_%03d.npz" % i), **sample)
    print("calib_samples: %d samples of %s in %s" % (
        args.count, ", ".join("%s%s" % (n, list(a.shape)) for n, a in arrays.items()),
        args.out))


if __name__ == "__main__":
    main()
