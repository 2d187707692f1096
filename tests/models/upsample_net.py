#!/usr/bin/python3
"""The ways a decoder grows a feature map: transposed convs (2x2 stride 2;
3x3 stride 2 with output padding; 4x4 stride 2 pad 1 to 70 channels, more
than the 64 lanes; stride 1 dilated) and resizes (bilinear half-pixel and
align-corners, nearest, by 2 and by 4), as PyTorch exports them. Writes
OUT/model.onnx, input.npz and reference.npz (PyTorch's outputs). Run with
/usr/bin/python3 (Debian's torch and onnx).
"""
import os

import onnx
import torch
from torch import nn
from torch.nn import functional as F

from common import format_ops, generate, op_counts, require_ops


class UpsampleNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.ConvTranspose2d(8, 16, 2, stride=2)
        self.b = nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1, output_padding=1)
        self.c = nn.ConvTranspose2d(8, 70, 4, stride=2, padding=1)
        self.d = nn.ConvTranspose2d(70, 4, 3, stride=1, padding=2, dilation=2)
        self.e = nn.Conv2d(8, 4, 1)

    def forward(self, x):
        y = self.d(torch.relu(self.c(self.b(torch.relu(self.a(x))))))  # 4 x 48 x 40
        up = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
        up = F.interpolate(up, scale_factor=4, mode="bilinear", align_corners=False)
        corners = F.interpolate(self.e(x), scale_factor=2, mode="bilinear", align_corners=True)
        near = F.interpolate(corners, scale_factor=4, mode="nearest")
        return y, up, near


def build_model(seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return UpsampleNet().eval()


def main() -> None:
    args, _, _ = generate(__doc__, build_model, (1, 8, 6, 5), ["deconvs", "bilinear", "nearest"])
    path = os.path.join(args.out, "model.onnx")
    ops = require_ops(onnx.load(path), "upsample_net", ["ConvTranspose", "Resize"])
    print("upsample_net: %s ops: %s" % (path, format_ops(ops)))


if __name__ == "__main__":
    main()
