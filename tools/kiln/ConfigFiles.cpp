#include "ConfigFiles.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <glob.h>

using namespace kiln;

std::string cli::calibrationTablePath(const config::DeployConfig &cfg) {
  if (!cfg.calibration.table.empty())
    return cfg.calibration.table;
  llvm::SmallString<256> path(llvm::sys::path::parent_path(cfg.config_path));
  llvm::sys::path::append(path, "out", cfg.name + ".calib");
  return std::string(path.str());
}

std::vector<std::string> cli::globSorted(const std::string &pattern) {
  std::vector<std::string> files;
  glob_t matches{};
  if (glob(pattern.c_str(), 0, nullptr, &matches) == 0)
    for (size_t i = 0; i < matches.gl_pathc; ++i)
      files.push_back(matches.gl_pathv[i]); // glob sorts without GLOB_NOSORT
  globfree(&matches);
  return files;
}

std::string cli::calibrationSamples(const config::DeployConfig &cfg, size_t most,
                                    std::vector<std::string> &samples) {
  const config::Calibration &calibration = cfg.calibration;
  if (calibration.samples.empty())
    return cfg.config_path + ": no calibration samples: add 'calibration: "
                             "{samples: path/*.npz}' to the config";
  samples = globSorted(calibration.samples);
  if (samples.empty())
    return "no calibration samples match '" + calibration.samples + "'";
  if (most > samples.size())
    return "--samples " + std::to_string(most) + " but only " + std::to_string(samples.size()) +
           " files match '" + calibration.samples + "'";
  if (most)
    samples.resize(most);
  return "";
}

std::string cli::verifyInputPath(const config::DeployConfig &cfg) {
  llvm::SmallString<256> dir(llvm::sys::path::parent_path(cfg.verify.reference));
  for (const char *file : {"input_with_noise.npz", "input.npz"}) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, file);
    if (llvm::sys::fs::exists(path))
      return std::string(path.str());
  }
  return "";
}

std::vector<std::string> cli::observationInputs(const config::DeployConfig &cfg, size_t most) {
  std::vector<std::string> files;
  if (!cfg.calibration.samples.empty())
    files = globSorted(cfg.calibration.samples);
  if (files.empty() && cfg.verify.enabled)
    if (std::string input = verifyInputPath(cfg); !input.empty())
      files.push_back(input);
  if (files.size() > most)
    files.resize(most);
  return files;
}
