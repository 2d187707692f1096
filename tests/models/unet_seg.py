#!/usr/bin/python3
"""U-Net-style segmentation test model: exports model.onnx, input.npz and reference.npz.

Encoder: a conv3x3-BN-ReLU at full resolution, then three stages that each
halve the resolution with a strided conv3x3 (stride 2) followed by a conv3x3,
all conv-BN-ReLU. Decoder, with skip concatenations from the encoder at every
scale, using both kinds of upsampling:
  * ConvTranspose2d kernel 2 stride 2 (16 -> 32),
  * bilinear F.interpolate(scale_factor=2, align_corners=False) (32 -> 64),
  * ConvTranspose2d kernel 3 stride 2 pad 1 output_padding 1 (64 -> 128),
then a 1x1 conv to per-pixel class logits [1, 6, 128, 128]. An auxiliary
head (PSPNet-style deep supervision) predicts logits from the 32x32 decoder
features and upsamples them with F.interpolate(size=input.shape[-2:],
bilinear): the size comes from a Shape->Gather->... chain that kiln must
fold at compile time. Two outputs: logits and aux_logits. At 1x3x128x128,
weights He-normal and BatchNorm statistics seeded random; the
BatchNormalization nodes stay in the graph (do_constant_folding=False,
TrainingMode.PRESERVE). Run with /usr/bin/python3 (Debian's torch, onnx,
numpy).
"""
import os

import onnx
import torch
import torch.nn.functional as F
from torch import nn

from common import format_ops, generate, require_ops, seeded_model

NUM_CLASSES = 6


def cbr(cin: int, cout: int, kernel: int = 3, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, kernel, stride, kernel // 2, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU())


class UNetSeg(nn.Module):
    def __init__(self, num_classes: int = NUM_CLASSES):
        super().__init__()
        self.enc0 = cbr(3, 16)                                   # 128
        self.enc1 = nn.Sequential(cbr(16, 32, stride=2), cbr(32, 32))    # 64
        self.enc2 = nn.Sequential(cbr(32, 64, stride=2), cbr(64, 64))    # 32
        self.bottom = nn.Sequential(cbr(64, 128, stride=2), cbr(128, 128))  # 16
        self.up2 = nn.ConvTranspose2d(128, 64, 2, stride=2)      # 16 -> 32
        self.dec2 = cbr(128, 64)
        self.reduce1 = cbr(64, 32, kernel=1)                     # after bilinear 32 -> 64
        self.dec1 = cbr(64, 32)
        self.up0 = nn.ConvTranspose2d(32, 16, 3, stride=2, padding=1, output_padding=1)
        self.dec0 = nn.Sequential(cbr(32, 16), cbr(16, 16))      # 128
        self.head = nn.Conv2d(16, num_classes, 1)
        self.aux_head = nn.Conv2d(64, num_classes, 1)

    def forward(self, x):
        s0 = self.enc0(x)
        s1 = self.enc1(s0)
        s2 = self.enc2(s1)
        b = self.bottom(s2)
        d2 = self.dec2(torch.cat([self.up2(b), s2], dim=1))
        u1 = F.interpolate(d2, scale_factor=2.0, mode="bilinear", align_corners=False)
        d1 = self.dec1(torch.cat([self.reduce1(u1), s1], dim=1))
        d0 = self.dec0(torch.cat([self.up0(d1), s0], dim=1))
        logits = self.head(d0)
        aux = F.interpolate(self.aux_head(d2), size=x.shape[-2:], mode="bilinear",
                            align_corners=False)
        return logits, aux


def build_model(seed: int) -> nn.Module:
    return seeded_model(UNetSeg, seed, he_normal=True)


def main() -> None:
    args, _, graph = generate(__doc__, build_model, (1, 3, 128, 128), ["logits", "aux_logits"])
    ops = require_ops(graph, "unet_seg", ("BatchNormalization", "ConvTranspose", "Resize",
                                          "Concat"))
    for n in graph.graph.node:
        if n.op_type == "Resize":
            attrs = {a.name: a.s.decode() for a in n.attribute if a.type == onnx.AttributeProto.STRING}
            if attrs.get("mode") != "linear":
                raise SystemExit("unet_seg: Resize %s is not linear: %s" % (n.name, attrs))
    print("unet_seg: %s ops: %s" % (os.path.join(args.out, "model.onnx"), format_ops(ops)))


if __name__ == "__main__":
    main()
