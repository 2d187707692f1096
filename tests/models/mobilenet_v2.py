#!/usr/bin/python3
"""MobileNetV2-style test model: exports model.onnx, input.npz and reference.npz.

A conv3x3/2-BN-ReLU6 stem, inverted residual blocks (1x1 expansion conv-BN-
ReLU6, 3x3 depthwise conv-BN-ReLU6 (stride 1 or 2), 1x1 linear projection
conv-BN, an identity skip where stride is 1 and the widths match), a 1x1
conv-BN-ReLU6 head, global average pool and a linear classifier, at
1x3x224x224. ReLU6 exports as Clip(0, 6); the He-normal conv weights make
its upper bound clip in every layer. Weights and BatchNorm statistics
are seeded random values; the BatchNormalization nodes are kept in the graph
(do_constant_folding=False, TrainingMode.PRESERVE) so they do real work. Run
with /usr/bin/python3, which sees Debian's torch, onnx and numpy.
"""
import os

import torch
from torch import nn

from common import format_ops, generate, require_ops, seeded_model


def conv_bn(cin: int, cout: int, kernel: int, stride: int = 1, groups: int = 1,
            relu6: bool = True) -> nn.Sequential:
    layers = [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False),
              nn.BatchNorm2d(cout)]
    if relu6:
        layers.append(nn.ReLU6())
    return nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, expand: int):
        super().__init__()
        hidden = cin * expand
        layers = []
        if expand != 1:
            layers.append(conv_bn(cin, hidden, 1))                      # expansion
        layers.append(conv_bn(hidden, hidden, 3, stride, groups=hidden))  # depthwise
        layers.append(conv_bn(hidden, cout, 1, relu6=False))             # linear projection
        self.body = nn.Sequential(*layers)
        self.use_skip = stride == 1 and cin == cout

    def forward(self, x):
        y = self.body(x)
        return x + y if self.use_skip else y


class MobileNetV2Style(nn.Module):
    # (expansion t, output channels c, repeats n, first stride s), as in the
    # MobileNetV2 paper's table 2, cut to five stages and at most 64 block
    # channels (384 expanded): 1x1 weights stay small next to LMEM.
    STAGES = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 2, 2), (6, 96, 2, 1)]

    def __init__(self, num_classes: int = 10):
        super().__init__()
        self.stem = conv_bn(3, 32, 3, 2)
        blocks, cin = [], 32
        for t, c, n, s in self.STAGES:
            for i in range(n):
                blocks.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        self.blocks = nn.Sequential(*blocks)
        self.head = conv_bn(cin, 256, 1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(256, num_classes)

    def forward(self, x):
        x = self.head(self.blocks(self.stem(x)))
        return self.fc(torch.flatten(self.pool(x), 1))


def build_model(seed: int) -> nn.Module:
    # He-normal convs: activations keep their scale through the blocks, so
    # ReLU6's upper bound clips a few percent of every layer's values
    # (PyTorch's default init would leave Clip's max unused).
    return seeded_model(MobileNetV2Style, seed, he_normal=True)


def main() -> None:
    args, _, graph = generate(__doc__, build_model, (1, 3, 224, 224), ["logits"])
    ops = require_ops(graph, "mobilenet_v2", ("BatchNormalization", "Clip", "Conv"))
    depthwise = sum(1 for n in graph.graph.node if n.op_type == "Conv" and any(
        a.name == "group" and a.i > 1 for a in n.attribute))
    if not depthwise:
        raise SystemExit("mobilenet_v2: the export has no depthwise Conv")
    print("mobilenet_v2: %s ops: %s (depthwise convs %d)" % (
        os.path.join(args.out, "model.onnx"), format_ops(ops), depthwise))


if __name__ == "__main__":
    main()
