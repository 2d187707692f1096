// The files a deployment config names, found on disk: the calibration
// table's place, the calibration samples a glob matches, the verify
// reference's inputs, and the inputs to observe ranges with.
#ifndef KILN_TOOLS_KILN_CONFIGFILES_H
#define KILN_TOOLS_KILN_CONFIGFILES_H

#include "kiln/Config/Config.h"

#include <cstddef>
#include <string>
#include <vector>

namespace kiln::cli {
/// calibration.table, else <config dir>/out/<name>.calib (where `kiln
/// calibrate` writes by default).
std::string calibrationTablePath(const config::DeployConfig &cfg);

/// The files a glob matches, sorted.
std::vector<std::string> globSorted(const std::string &pattern);

/// The config's calibration samples, sorted, the first `most` of them (0:
/// all). Returns an error message, empty on success.
std::string calibrationSamples(const config::DeployConfig &cfg, size_t most,
                               std::vector<std::string> &samples);

/// The verify reference's inputs: input_with_noise.npz (models whose random
/// ops became inputs) or input.npz beside it; "" if neither exists.
std::string verifyInputPath(const config::DeployConfig &cfg);

/// Inputs to observe ranges with: the first calibration samples, else the
/// verify reference's inputs (input.npz beside it). Empty if neither exists.
std::vector<std::string> observationInputs(const config::DeployConfig &cfg, size_t most);
} // namespace kiln::cli

#endif
