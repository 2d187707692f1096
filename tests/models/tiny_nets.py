#!/usr/bin/python3
"""Tiny test models for the runtime's soak, byte-flip and fuzz tests.

Writes OUT/tiny_conv and OUT/tiny_multi, each with model.onnx, input.npz and
reference.npz (PyTorch's outputs). Both are small enough that one inference
on the cmodel takes well under a millisecond:
  tiny_conv   one layer group: conv-BN-ReLU, conv-BN, a 1x1 conv skip, add,
              ReLU, max pool; its filters and biases stay resident in LMEM
              between inferences.
  tiny_multi  several groups (convs and pools, a concat copied by GDMA, a
              linear layer) whose LMEM overlaps, so every inference reloads.
Run with /usr/bin/python3, which sees Debian's torch, onnx and numpy.
"""
import os

import torch
from torch import nn

from common import deterministic, export, parse_args, randomize_batchnorm, seeded_input


class TinyConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.skip = nn.Conv2d(3, 8, 1)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.pool(torch.relu(y + self.skip(x)))


class TinyMulti(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_a = nn.Conv2d(3, 8, 3, 1, 1)
        self.conv_b = nn.Conv2d(3, 8, 1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        a = self.pool(torch.relu(self.conv_a(x)))
        b = self.pool(self.conv_b(x))
        return self.fc(torch.flatten(torch.cat([a, b], dim=1), 1))


def export_tiny(name: str, model: nn.Module, out: str, seed: int) -> None:
    directory = os.path.join(out, name)
    randomize_batchnorm(model, torch.Generator().manual_seed(seed + 1))
    x = seeded_input((1, 3, 8, 8), seed + 2)
    (y,), _ = export(model.eval(), x, directory, ["output"])
    print("%s: %s, output %s" % (name, os.path.join(directory, "model.onnx"), tuple(y.shape)))


def main() -> None:
    args = parse_args(__doc__)
    deterministic()
    torch.manual_seed(args.seed)
    export_tiny("tiny_conv", TinyConv(), args.out, args.seed)
    export_tiny("tiny_multi", TinyMulti(), args.out, args.seed + 10)


if __name__ == "__main__":
    main()
