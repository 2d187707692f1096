#!/usr/bin/python3
"""Writes an image array from an npz file as an 8-bit PNG.

Usage: npz_to_png.py IN.npz KEY OUT.png [--scale N]

The array must be [1, C, H, W], [C, H, W] or [H, W] with C = 3 (RGB) or 1
(grayscale), float in StyleGAN's [-1, 1] range, mapped to 8 bits as StyleGAN
does: (x * 127.5 + 128).clip(0, 255) (NaN becomes 0). --scale N repeats
every pixel N x N times (nearest neighbour, for viewing small images). The PNG
is written with zlib and struct only (no PIL). Run with /usr/bin/python3,
which has numpy.
"""
import argparse
import struct
import sys
import zlib

import numpy as np


def to_uint8(x: np.ndarray) -> np.ndarray:
    """[-1, 1] floats -> uint8 as StyleGAN's generate.py does."""
    x = np.nan_to_num(np.asarray(x, dtype=np.float64), nan=0.0)
    return (x * 127.5 + 128).clip(0, 255).astype(np.uint8)


def to_hwc(a: np.ndarray, what: str) -> np.ndarray:
    """[1, C, H, W] / [C, H, W] / [H, W] -> [H, W, C] with C in {1, 3}."""
    if a.ndim == 4:
        if a.shape[0] != 1:
            raise ValueError("%s: batch of %d images, expected 1" % (what, a.shape[0]))
        a = a[0]
    if a.ndim == 2:
        a = a[None]
    if a.ndim != 3 or a.shape[0] not in (1, 3):
        raise ValueError("%s: shape %s is not [1, C, H, W], [C, H, W] or [H, W] with C = 1 or 3"
                         % (what, list(a.shape)))
    if a.shape[1] == 0 or a.shape[2] == 0:
        raise ValueError("%s: empty image %s" % (what, list(a.shape)))
    return np.transpose(a, (1, 2, 0))


def png_bytes(pixels: np.ndarray) -> bytes:
    """[H, W, C] uint8 (C = 1 gray, 3 RGB) -> PNG file bytes."""
    h, w, c = pixels.shape
    color_type = {1: 0, 3: 2}[c]

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    # Every scanline starts with filter type 0 (None).
    raw = np.concatenate([np.zeros((h, 1), np.uint8), pixels.reshape(h, w * c)], axis=1)
    ihdr = struct.pack(">IIBBBBB", w, h, 8, color_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
            + chunk(b"IDAT", zlib.compress(raw.tobytes(), 9)) + chunk(b"IEND", b""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("npz", help="input .npz file")
    parser.add_argument("key", help="array name in the npz (e.g. image)")
    parser.add_argument("png", help="output .png file")
    parser.add_argument("--scale", type=int, default=1, help="nearest-neighbour upscale factor")
    args = parser.parse_args()
    if args.scale < 1:
        parser.error("--scale must be at least 1")
    try:
        with np.load(args.npz) as data:
            if args.key not in data.files:
                print("npz_to_png: %s has no array '%s' (it has: %s)"
                      % (args.npz, args.key, ", ".join(data.files) or "none"), file=sys.stderr)
                return 2
            a = data[args.key]
        pixels = to_uint8(to_hwc(a, "%s[%s]" % (args.npz, args.key)))
    except (OSError, ValueError) as e:
        print("npz_to_png: %s" % e, file=sys.stderr)
        return 2
    if args.scale > 1:
        pixels = pixels.repeat(args.scale, axis=0).repeat(args.scale, axis=1)
    with open(args.png, "wb") as f:
        f.write(png_bytes(pixels))
    print("npz_to_png: %s[%s] %s -> %s (%dx%d)" % (
        args.npz, args.key, list(a.shape), args.png, pixels.shape[1], pixels.shape[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
