#!/usr/bin/python3
"""ResNet-style test model: exports model.onnx, input.npz and reference.npz.

A conv7x7/2-BN-ReLU stem, 3x3/2 max pool, four basic residual blocks (the
strided ones with 1x1 conv-BN downsample skips), global average pool and a
linear classifier, at 1x3x224x224. Weights and BatchNorm statistics are
seeded random values, so the BatchNormalization nodes (kept in the graph by
do_constant_folding=False) do real work. Run with /usr/bin/python3, which
sees Debian's torch, onnx and numpy.
"""
import os

import torch
from torch import nn

from common import format_ops, generate, require_ops, seeded_model


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        skip = x if self.downsample is None else self.downsample(x)
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.relu(y + skip)


class ResNetStyle(nn.Module):
    # At most 128 channels: the largest 3x3 conv holds 128*128*9 f32 weights
    # (576 KiB, 9 KiB per lane over 64 lanes), well inside 256 KiB of LMEM per lane.
    STAGES = [(32, 32, 1), (32, 64, 2), (64, 128, 2), (128, 128, 2)]

    def __init__(self, num_classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 32, 7, 2, 3, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
            nn.MaxPool2d(3, 2, 1))
        self.blocks = nn.Sequential(*[BasicBlock(*s) for s in self.STAGES])
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(self.STAGES[-1][1], num_classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(torch.flatten(self.pool(x), 1))


def build_model(seed: int) -> nn.Module:
    return seeded_model(ResNetStyle, seed)


def main() -> None:
    args, _, graph = generate(__doc__, build_model, (1, 3, 224, 224), ["logits"])
    ops = require_ops(graph, "resnet_style", ["BatchNormalization"])
    print("resnet_style: %s ops: %s" % (os.path.join(args.out, "model.onnx"), format_ops(ops)))


if __name__ == "__main__":
    main()
