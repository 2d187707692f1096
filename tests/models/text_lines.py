#!/usr/bin/python3
"""Text-line crops for PaddleOCR's recognizer: renders each text in black
DejaVu Sans on white with a little pixel noise, scales it to the crop's
height and width, and writes the batch as PaddleOCR feeds it (x = (v / 255 -
0.5) / 0.5, NCHW, 3 channels) to OUT.npz under `x`, with the texts, one per
line, in OUT.txt.

  text_lines.py --out OUT --shape N,3,48,W --text "..." [--text "..."]...
  text_lines.py --page SEED --out OUT --shape 1,3,H,W --text "..." [--text "..."]...

N texts make a batch of N. With --page, the texts are the lines of one page
for PaddleOCR's detector instead: drawn at sizes and places SEED picks, in
grey or black on a light background, normalized as the detector reads it
((v / 255 - mean) / std with ImageNet's mean and std, BGR order).
Run with /usr/bin/python3 (Debian's numpy and PIL, the font from
fonts-dejavu-core).
"""
import argparse

import numpy as np
from PIL import Image, ImageDraw, ImageFont

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def crop(text: str, height: int, width: int, seed: int) -> np.ndarray:
    scale = 2  # drawn at twice the size, then scaled down: smooth edges
    font = ImageFont.truetype(FONT, int(height * scale * 0.6))
    img = Image.new("L", (width * scale, height * scale), 255)
    ImageDraw.Draw(img).text((4 * scale, height * scale // 8), text, fill=0, font=font)
    v = np.asarray(img.resize((width, height), Image.BILINEAR), np.float32) / 255.0
    v = np.clip(v + np.random.default_rng(seed).normal(0.0, 0.02, v.shape), 0.0, 1.0)
    return ((np.stack([v, v, v]) - 0.5) / 0.5).astype(np.float32)


def page(texts: list, height: int, width: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    img = Image.new("RGB", (width, height), tuple(int(v) for v in rng.integers(215, 256, 3)))
    draw = ImageDraw.Draw(img)
    y = int(rng.integers(4, height // 10 + 5))
    for text in texts:
        size = int(rng.integers(height // 40 + 8, height // 12 + 10))
        font = ImageFont.truetype(FONT, size)
        x = int(rng.integers(4, max(5, width // 4)))
        ink = tuple(int(v) for v in rng.integers(0, 90, 3))
        draw.text((x, y), text, fill=ink, font=font)
        y += int(size * rng.uniform(1.4, 2.2))
        if y > height - size:
            break
    v = np.asarray(img, np.float32)[:, :, ::-1] / 255.0  # BGR, as cv2 reads it
    v = np.clip(v + rng.normal(0.0, 0.02, v.shape), 0.0, 1.0)
    mean, std = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])
    return ((v - mean) / std).transpose(2, 0, 1).astype(np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--shape", required=True, help="N,3,H,W")
    parser.add_argument("--text", action="append", required=True)
    parser.add_argument("--page", type=int, metavar="SEED",
                        help="one detector page of the texts' lines, laid out by SEED")
    args = parser.parse_args()
    n, c, h, w = (int(d) for d in args.shape.split(","))
    if args.page is not None:
        if c != 3 or n != 1:
            raise SystemExit("text_lines.py: --page needs --shape 1,3,H,W")
        np.savez(args.out + ".npz", x=page(args.text, h, w, args.page)[None])
        with open(args.out + ".txt", "w", encoding="utf-8") as f:
            f.write("\n".join(args.text) + "\n")
        return
    if c != 3 or n != len(args.text):
        raise SystemExit("text_lines.py: --shape needs 3 channels and one --text per batch item")
    x = np.stack([crop(t, h, w, seed=i + 1) for i, t in enumerate(args.text)])
    np.savez(args.out + ".npz", x=x)
    with open(args.out + ".txt", "w", encoding="utf-8") as f:
        f.write("\n".join(args.text) + "\n")


if __name__ == "__main__":
    main()
