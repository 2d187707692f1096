"""Helpers shared by the test model scripts (tests/models/*.py).

Import with the scripts' directory on sys.path (it is when a script in this
directory runs: `python3 tests/models/NAME.py`). Run with /usr/bin/python3,
which sees Debian's torch, onnx and numpy.

A script's main() is, in short,
    args, outputs, graph = generate(__doc__, build_model, (1, 3, 64, 64), ["logits"])
    ops = require_ops(graph, "net", ["Conv"])
    print("net: ... ops: %s" % format_ops(ops))
with build_model(seed) = seeded_model(Net, seed) (weights, BatchNorm
statistics) or its own; generate() is parse_args, deterministic,
seeded_input and export in that order (the seeds as each script has always
used them: the models and references stay the same bytes).
"""
import argparse
import collections
import os
from typing import Callable, Iterable, List, Sequence, Tuple

import numpy as np
import onnx
import torch
from torch import nn


def parse_args(doc: str, extra: Callable[[argparse.ArgumentParser], None] = None
               ) -> argparse.Namespace:
    """--out (the output directory, required) and --seed (default 0), with
    the first line of the script's docstring as the description; `extra`
    adds a script's own options."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    if extra:
        extra(parser)
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def deterministic() -> None:
    """Deterministic kernels on one thread: the same summation order, so the
    same reference bytes, on every machine."""
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)


def seeded_input(shape: Sequence[int], seed: int) -> torch.Tensor:
    """N(0, 1) values of `shape` from their own seeded generator."""
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def randomize_bn(bn: nn.BatchNorm2d, gen: torch.Generator) -> None:
    """One BatchNorm2d's parameters and running statistics, seeded random:
    weight in [0.5, 1.5), bias ~ N(0, 0.1), running_mean ~ N(0, 0.1),
    running_var in [0.5, 2.0). Freshly initialized BatchNorm (weight 1, bias
    0, mean 0, var 1) is close to the identity, so folding it would go
    untested; these values make every BatchNormalization node do real work."""
    c = bn.num_features
    with torch.no_grad():
        bn.weight.copy_(torch.rand(c, generator=gen) + 0.5)
        bn.bias.copy_(torch.randn(c, generator=gen) * 0.1)
        bn.running_mean.copy_(torch.randn(c, generator=gen) * 0.1)
        bn.running_var.copy_(torch.rand(c, generator=gen) * 1.5 + 0.5)


def he_normal_(m: nn.Module, gen: torch.Generator) -> None:
    """He-normal weights for a Conv2d (std sqrt(2 / fan_in)), so activations
    keep their scale through the layers; for a ConvTranspose2d (weight [cin,
    cout, kh, kw]: each output sums cin*kh*kw/stride^2 taps) also a bias ~
    N(0, 0.1)."""
    with torch.no_grad():
        if isinstance(m, nn.ConvTranspose2d):
            fan_in = m.weight.shape[0] * m.weight[0, 0].numel() / (m.stride[0] * m.stride[1])
            m.weight.normal_(0, (2.0 / fan_in) ** 0.5, generator=gen)
            if m.bias is not None:
                m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.1)
        else:
            m.weight.normal_(0, (2.0 / m.weight[0].numel()) ** 0.5, generator=gen)


def init_weights(model: nn.Module, gen: torch.Generator, he_normal: bool = False) -> int:
    """In module order: randomize_bn for every BatchNorm2d and, with
    `he_normal`, he_normal_ for every Conv2d and ConvTranspose2d, all from
    `gen`. Returns the number of BatchNorm2d modules changed."""
    count = 0
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            randomize_bn(m, gen)
            count += 1
        elif he_normal and isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
            he_normal_(m, gen)
    return count


def randomize_batchnorm(model: nn.Module, gen: torch.Generator) -> int:
    """randomize_bn for every BatchNorm2d in `model` (or `model` itself), in
    module order. Returns the number of BatchNorm2d modules changed."""
    return init_weights(model, gen)


def seeded_model(make: Callable[[], nn.Module], seed: int, he_normal: bool = False) -> nn.Module:
    """make() after torch.manual_seed(seed) (PyTorch's own init draws from
    it), then init_weights from a generator seeded seed + 1; in eval mode."""
    torch.manual_seed(seed)
    model = make()
    init_weights(model, torch.Generator().manual_seed(seed + 1), he_normal)
    return model.eval()


def export(model: nn.Module, x: torch.Tensor, out_dir: str, output_names: List[str],
           keep_batchnorm: bool = True, fold_constants: bool = False,
           input_name: str = "input", opset: int = 13
           ) -> Tuple[Tuple[torch.Tensor, ...], onnx.ModelProto]:
    """Runs the eval-mode `model` on `x` and writes out_dir/model.onnx
    (opset 13 unless `opset` says otherwise), input.npz and reference.npz
    (PyTorch's outputs under
    `output_names`). keep_batchnorm exports TrainingMode.PRESERVE, which
    keeps BatchNormalization in the graph (kiln folds it itself; EVAL would
    fuse it into the convs, torch's eval peephole); fold_constants is
    torch's do_constant_folding. Returns the outputs (a tuple) and the
    checked ONNX model."""
    os.makedirs(out_dir, exist_ok=True)
    with torch.no_grad():
        outputs = model(x)
    if not isinstance(outputs, tuple):
        outputs = (outputs,)
    path = os.path.join(out_dir, "model.onnx")
    training = torch.onnx.TrainingMode.PRESERVE if keep_batchnorm else torch.onnx.TrainingMode.EVAL
    torch.onnx.export(model, x, path, opset_version=opset, do_constant_folding=fold_constants,
                      training=training, input_names=[input_name], output_names=output_names)
    np.savez(os.path.join(out_dir, "input.npz"), **{input_name: x.numpy()})
    np.savez(os.path.join(out_dir, "reference.npz"),
             **{name: y.numpy() for name, y in zip(output_names, outputs)})
    graph = onnx.load(path)
    onnx.checker.check_model(graph)
    return outputs, graph


def generate(doc: str, build_model: Callable[[int], nn.Module], input_shape: Sequence[int],
             output_names: List[str], input_seed: int = 2, **export_options
             ) -> Tuple[argparse.Namespace, Tuple[torch.Tensor, ...], onnx.ModelProto]:
    """A test model script's work: its arguments (parse_args), deterministic
    kernels, build_model(--seed), an input seeded --seed + input_seed, and
    export() to --out. Returns the arguments, PyTorch's outputs and the ONNX
    model."""
    args = parse_args(doc)
    deterministic()
    model = build_model(args.seed)
    x = seeded_input(input_shape, args.seed + input_seed)
    outputs, graph = export(model, x, args.out, output_names, **export_options)
    return args, outputs, graph


def op_counts(graph: onnx.ModelProto) -> collections.Counter:
    """How many nodes of each op type the graph has."""
    return collections.Counter(node.op_type for node in graph.graph.node)


def format_ops(ops: collections.Counter) -> str:
    """"Add=4 Conv=12 ...", sorted by op type."""
    return " ".join("%s=%d" % kv for kv in sorted(ops.items()))


def require_ops(graph: onnx.ModelProto, tag: str, needed: Iterable[str]) -> collections.Counter:
    """Fails unless the graph has a node of every op type in `needed`;
    returns op_counts."""
    ops = op_counts(graph)
    for op in needed:
        if not ops[op]:
            raise SystemExit("%s: the export has no %s node" % (tag, op))
    return ops


def export_with_batchnorm(model: nn.Module, x: torch.Tensor, out_dir: str, tag: str,
                          input_name: str = "input", output_name: str = "logits",
                          opset: int = 13) -> None:
    """export() of a one-output model whose BatchNormalization nodes must
    survive: fails if the export lost every one; prints the op counts and the
    output's shape and magnitude."""
    (y,), graph = export(model, x, out_dir, [output_name], input_name=input_name, opset=opset)
    ops = op_counts(graph)
    if not ops["BatchNormalization"]:
        raise SystemExit("%s: export fused BatchNormalization away" % tag)
    print("%s: %s ops: %s; %s %s |max| %.3g" % (
        tag, os.path.join(out_dir, "model.onnx"), format_ops(ops), output_name,
        tuple(y.shape), float(y.abs().max())))
