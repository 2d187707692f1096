import os
import lit.formats

config.name = "kiln"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.join(config.kiln_source_dir, "tests", "lit")
config.test_exec_root = os.path.join(config.kiln_tools_dir, "..", "tests", "lit-out")
config.excludes = ["lit.cfg.py", "lit.site.cfg.py.in", "Inputs"]
config.environment["PATH"] = os.pathsep.join([
    os.path.join(config.kiln_tools_dir, "kiln-opt"),
    os.path.join(config.kiln_tools_dir, "kiln"),
    config.llvm_tools_dir,
    config.environment.get("PATH", os.environ.get("PATH", "")),
])
config.substitutions.append(("%python", config.kiln_test_python))
