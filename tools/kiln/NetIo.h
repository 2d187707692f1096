// A loaded net's inputs and outputs as npz arrays, for `kiln run` and the
// cmodel level of `kiln compile`'s verification.
#ifndef KILN_TOOLS_KILN_NETIO_H
#define KILN_TOOLS_KILN_NETIO_H

#include "kiln/host/npz.h"
#include "kiln/rt/kiln_rt.h"

#include <string>
#include <vector>

namespace kiln::cli {
/// Sets every net input from the array of its name (as f32). Returns "" or
/// an error naming `source`.
std::string setInputs(kiln_net *net, const std::vector<host::Array> &inputs,
                      const std::string &source);

/// The net's outputs, then with allTensors every tensor as "tensor:NAME"
/// (several chip tensors of one ONNX name: the last in net order), all as
/// f32 (INT8 dequantized).
std::vector<host::Array> readOutputs(const kiln_net *net, bool allTensors);
} // namespace kiln::cli

#endif
