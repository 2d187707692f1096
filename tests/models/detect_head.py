#!/usr/bin/python3
"""Detection-style test model (YOLOv5-like head): exports model.onnx, input.npz and reference.npz.

A small conv-BN-SiLU backbone (SiLU exports as Sigmoid and Mul) gives two
feature maps, P3 (stride 8, 32x32) and P4 (stride 16, 16x16); a neck
upsamples P4 (nearest, x2) and concatenates it with P3. Each scale has a 1x1
conv head predicting 3 anchors x (4 box + 1 objectness + 4 classes). The
head output is reshaped to [1, 3, 9, H, W], transposed to [1, 3, H, W, 9],
passed through Sigmoid and decoded as YOLOv5 does (xy = (2s - 0.5 + grid) *
stride, wh = (2s)^2 * anchor, with Slice, Mul, Add, Pow and Concat), then
reshaped to [1, 3*H*W, 9] and the scales concatenated. The reshapes use the
tensor's sizes (x.shape), so the export builds their shape operands from
Constant->Unsqueeze->Concat chains that kiln must fold at compile time.

Three outputs: detections [1, 3840, 9] (both scales decoded, concatenated
along the anchors), and the raw head outputs p3 [1, 3, 32, 32, 9] and
p4 [1, 3, 16, 16, 9]. Input 1x3x256x256; weights He-normal and BatchNorm
statistics seeded random; BatchNormalization stays in the graph
(do_constant_folding=False, TrainingMode.PRESERVE). Run with /usr/bin/python3
(Debian's torch, onnx, numpy).
"""
import os

import torch
import torch.nn.functional as F
from torch import nn

from common import format_ops, generate, require_ops, seeded_model

NUM_CLASSES = 4
ANCHORS = [  # (w, h) in pixels per anchor, YOLOv5s' P3 and P4 anchors
    [(10, 13), (16, 30), (33, 23)],
    [(30, 61), (62, 45), (59, 119)],
]
STRIDES = [8, 16]
INPUT_HW = 256


def cbs(cin: int, cout: int, kernel: int = 3, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, kernel, stride, kernel // 2, bias=False),
                         nn.BatchNorm2d(cout), nn.SiLU())


class Detect(nn.Module):
    """YOLOv5's Detect layer (inference path) for len(ANCHORS) scales."""

    def __init__(self, channels, num_classes: int = NUM_CLASSES):
        super().__init__()
        self.no = num_classes + 5
        self.na = len(ANCHORS[0])
        self.convs = nn.ModuleList(nn.Conv2d(c, self.na * self.no, 1) for c in channels)
        for i, stride in enumerate(STRIDES):
            n = INPUT_HW // stride
            ys, xs = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
            self.register_buffer("grid%d" % i, torch.stack((xs, ys), 2).view(1, 1, n, n, 2).float())
            self.register_buffer("anchor_grid%d" % i,
                                 torch.tensor(ANCHORS[i]).float().view(1, self.na, 1, 1, 2))

    def forward(self, feats):
        decoded, raw = [], []
        for i, x in enumerate(feats):
            x = self.convs[i](x)
            bs, _, ny, nx = x.shape
            x = x.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            raw.append(x)
            y = x.sigmoid()
            xy = (y[..., 0:2] * 2 - 0.5 + getattr(self, "grid%d" % i)) * STRIDES[i]
            wh = (y[..., 2:4] * 2) ** 2 * getattr(self, "anchor_grid%d" % i)
            y = torch.cat((xy, wh, y[..., 4:]), -1)
            decoded.append(y.view(bs, -1, self.no))
        return torch.cat(decoded, 1), raw[0], raw[1]


class DetectNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(cbs(3, 16, 3, 2), cbs(16, 32, 3, 2), cbs(32, 32))  # 64x64
        self.p3 = cbs(32, 64, 3, 2)                                                 # 32x32
        self.p4 = nn.Sequential(cbs(64, 128, 3, 2), cbs(128, 128))                  # 16x16
        self.lateral = cbs(128, 64, 1)
        self.fuse = cbs(128, 64)
        self.detect = Detect([64, 128])

    def forward(self, x):
        p3 = self.p3(self.stem(x))
        p4 = self.p4(p3)
        up = F.interpolate(self.lateral(p4), scale_factor=2.0, mode="nearest")
        n3 = self.fuse(torch.cat([up, p3], 1))
        return self.detect([n3, p4])


def build_model(seed: int) -> nn.Module:
    model = seeded_model(DetectNet, seed, he_normal=True)
    with torch.no_grad():  # head outputs of std ~1: the sigmoids work in
        for conv in model.detect.convs:  # their non-linear range
            conv.weight.mul_(2.0)
    return model


def main() -> None:
    args, (detections, p3, p4), graph = generate(__doc__, build_model, (1, 3, INPUT_HW, INPUT_HW),
                                                 ["detections", "p3", "p4"])
    ops = require_ops(graph, "detect_head", ("BatchNormalization", "Sigmoid", "Reshape",
                                             "Transpose", "Concat", "Slice", "Pow", "Resize"))
    print("detect_head: %s ops: %s" % (os.path.join(args.out, "model.onnx"), format_ops(ops)))
    print("detect_head: outputs detections %s, p3 %s, p4 %s" % (
        list(detections.shape), list(p3.shape), list(p4.shape)))


if __name__ == "__main__":
    main()
