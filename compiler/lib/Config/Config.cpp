//===- Config.cpp - YAML deployment config --------------------------------===//
//
// Walks libyaml's node graph and fills DeployConfig, reporting the first
// problem with the file, line and column of the offending key or value.
//
//===----------------------------------------------------------------------===//
#include "kiln/Config/Config.h"

#include <glob.h>
#include <sys/stat.h>
#include <yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <set>

namespace kiln::config {

namespace {
// Each enum's config spellings, in the order errors list them.
template <typename E> struct EnumName {
  const char *name;
  E value;
};
constexpr EnumName<DType> kDTypes[] = {{"f32", DType::F32},
                                       {"f16", DType::F16},
                                       {"bf16", DType::BF16},
                                       {"int8", DType::INT8}};
constexpr EnumName<RandomOps> kRandomOps[] = {{"reject", RandomOps::Reject},
                                              {"const", RandomOps::Const},
                                              {"input", RandomOps::Input}};
constexpr EnumName<Isa> kIsas[] = {{"kiln", Isa::Kiln}, {"bm1684x", Isa::Bm1684x}};
constexpr EnumName<Container> kContainers[] = {{"kiln", Container::Kiln},
                                               {"sophgo", Container::Sophgo}};
constexpr EnumName<ModulatedConv> kModulatedConv[] = {
    {"auto", ModulatedConv::Auto},
    {"rewrite", ModulatedConv::Rewrite},
    {"keep", ModulatedConv::Keep}};
constexpr EnumName<CalibMethod> kCalibMethods[] = {
    {"minmax", CalibMethod::MinMax},
    {"kl", CalibMethod::KL},
    {"percentile", CalibMethod::Percentile},
    {"mse", CalibMethod::Mse},
    {"auto", CalibMethod::Auto}};

template <typename E, size_t N>
const char *nameIn(const EnumName<E> (&names)[N], E value) {
  for (const EnumName<E> &n : names)
    if (n.value == value)
      return n.name;
  return "?";
}
} // namespace

const char *toString(DType dtype) { return nameIn(kDTypes, dtype); }
const char *toString(RandomOps randomOps) { return nameIn(kRandomOps, randomOps); }
const char *toString(CalibMethod calibMethod) { return nameIn(kCalibMethods, calibMethod); }
const char *toString(ModulatedConv mode) { return nameIn(kModulatedConv, mode); }
const char *toString(Isa isa) { return nameIn(kIsas, isa); }
const char *toString(Container container) { return nameIn(kContainers, container); }

Container containerOf(const DeployConfig &config) {
  if (config.container)
    return *config.container;
  return config.isa == Isa::Bm1684x ? Container::Sophgo : Container::Kiln;
}

size_t stageCount(const DeployConfig &config) {
  size_t stages = 1;
  for (const InputOverride &in : config.inputs)
    stages = std::max(stages, in.shapes.size());
  return stages;
}

DeployConfig stageConfig(const DeployConfig &config, size_t stage) {
  DeployConfig out = config;
  for (InputOverride &in : out.inputs)
    in.shapes = {in.shapes.size() == 1 ? in.shapes.front() : in.shapes.at(stage)};
  return out;
}

namespace {

namespace fs = std::filesystem;

constexpr const char *kSupportedChips[] = {"bm1684x"};

size_t editDistance(const std::string &a, const std::string &b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitute = diagonal + (a[i - 1] != b[j - 1]);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

std::string resolvePath(const fs::path &configDir, const std::string &p) {
  return (configDir / p).lexically_normal().string();
}

// Keys, values and paths from the config go into errors as they are, but
// one may hold line breaks or other control characters: an error stays one
// line of printable text.
std::string escapeControls(const std::string &s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string fileProblem(const std::string &path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    return std::strerror(errno);
  if (!S_ISREG(st.st_mode))
    return "not a regular file";
  return {};
}

// Reads one document's node graph; every check returns false after recording
// the first error, so callers simply propagate `false`.
class Loader {
public:
  Loader(const std::string &path, yaml_document_t &doc)
      : path_(path), doc_(doc), configDir_(fs::path(path).parent_path()) {}

  const std::string &error() const { return error_; }

  bool load(DeployConfig &out) {
    yaml_node_t *root = yaml_document_get_root_node(&doc_);
    if (!root || isNull(root))
      return failAt(1, 1, "empty config: expected a mapping with 'model'");
    if (root->type != YAML_MAPPING_NODE)
      return fail(root, "the config must be a mapping, not " + describe(root));

    bool haveModel = false, haveName = false, haveOutput = false;
    yaml_node_t *containerNode = nullptr;
    std::map<std::string, DType> fileQtable;
    bool ok = forEachKey(
        root, "",
        {"model", "name", "chip", "isa", "container", "inputs", "quantize", "qtable", "qtable_file",
         "calibration", "random_ops", "random_seed", "layer_group", "optimize",
         "debug",
         "verify", "output"},
        [&](const std::string &key, yaml_node_t *keyNode, yaml_node_t *value) {
          if (key == "model") {
            haveModel = true;
            return getPath(value, key, out.model) &&
                   checkModelExists(value, out.model);
          }
          if (key == "name") {
            haveName = true;
            return getString(value, key, out.name) &&
                   checkName(value, out.name);
          }
          if (key == "chip")
            return getChip(value, out.chip);
          if (key == "isa")
            return getEnum(value, key, kIsas, out.isa);
          if (key == "container") {
            containerNode = value;
            Container container;
            if (!getEnum(value, key, kContainers, container))
              return false;
            out.container = container;
            return true;
          }
          if (key == "inputs")
            return getInputs(value, out.inputs);
          if (key == "quantize")
            return getEnum(value, key, kDTypes, out.quantize);
          if (key == "qtable")
            return getQtable(value, out.qtable);
          if (key == "qtable_file")
            return getPath(value, key, out.qtable_file) &&
                   getQtableFile(value, out.qtable_file, fileQtable);
          if (key == "calibration")
            return getCalibration(value, out.calibration);
          if (key == "random_ops")
            return getEnum(value, key, kRandomOps, out.random_ops);
          if (key == "random_seed")
            return getUInt64(value, key, out.random_seed);
          if (key == "layer_group")
            return getLayerGroup(value, out.layer_group_enabled);
          if (key == "optimize")
            return getOptimize(value, out.modulated_conv);
          if (key == "debug")
            return getDebug(value, out.keep_tensors);
          if (key == "verify")
            return getVerify(keyNode, value, out.verify);
          haveOutput = true;
          return getPath(value, key, out.output);
        });
    if (!ok)
      return false;
    // The inline qtable wins over the file's entries.
    for (const auto &[op, dtype] : fileQtable)
      out.qtable.emplace(op, dtype);

    if (!haveModel)
      return fail(root, "missing required key 'model'");
    if (out.container == Container::Sophgo && out.isa != Isa::Bm1684x)
      return fail(containerNode, "'container: sophgo' needs 'isa: bm1684x': Sophgo's "
                                 "container carries the chip's own commands");
    if (!haveName)
      out.name = fs::path(out.model).stem().string();
    if (!haveOutput)
      out.output = resolvePath(configDir_, "out/" + out.name + ".bmodel");
    return true;
  }

private:
  // --- errors -------------------------------------------------------------

  bool failAt(size_t line, size_t column, const std::string &message) {
    error_ = path_ + ":" + std::to_string(line) + ":" + std::to_string(column) +
             ": error: " + escapeControls(message);
    return false;
  }
  bool fail(const yaml_node_t *node, const std::string &message) {
    return failAt(node->start_mark.line + 1, node->start_mark.column + 1,
                  message);
  }

  // --- node kinds ---------------------------------------------------------

  static std::string text(const yaml_node_t *node) {
    return std::string(reinterpret_cast<const char *>(node->data.scalar.value),
                       node->data.scalar.length);
  }
  static bool isPlainScalar(const yaml_node_t *node) {
    return node->type == YAML_SCALAR_NODE &&
           node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
  }
  static bool isNull(const yaml_node_t *node) {
    if (!isPlainScalar(node))
      return false;
    const std::string t = text(node);
    return t.empty() || t == "~" || t == "null" || t == "Null" || t == "NULL";
  }
  static std::string describe(const yaml_node_t *node) {
    if (isNull(node))
      return "nothing";
    switch (node->type) {
    case YAML_MAPPING_NODE:
      return "a mapping";
    case YAML_SEQUENCE_NODE:
      return "a list";
    default:
      return "'" + excerpt(text(node)) + "'";
    }
  }
  // The start of a long value (a block scalar where a key belongs), cut at a
  // UTF-8 character boundary.
  static std::string excerpt(const std::string &t) {
    constexpr size_t kMaxBytes = 60;
    if (t.size() <= kMaxBytes)
      return t;
    size_t end = kMaxBytes;
    while (end > 0 && (static_cast<unsigned char>(t[end]) & 0xc0) == 0x80)
      --end;
    return t.substr(0, end) + "...";
  }
  yaml_node_t *nodeAt(int id) { return yaml_document_get_node(&doc_, id); }

  // --- mappings -----------------------------------------------------------

  // Calls handle(key, keyNode, valueNode) for each pair of a mapping, after
  // rejecting non-scalar and duplicate keys, and unknown keys when `known` is
  // not empty. `where` names the enclosing key for messages.
  template <typename Handler>
  bool forEachKey(yaml_node_t *map, const std::string &where,
                  std::initializer_list<const char *> known, Handler &&handle) {
    std::set<std::string> seen;
    for (yaml_node_pair_t *pair = map->data.mapping.pairs.start;
         pair < map->data.mapping.pairs.top; ++pair) {
      yaml_node_t *keyNode = nodeAt(pair->key);
      yaml_node_t *value = nodeAt(pair->value);
      if (keyNode->type != YAML_SCALAR_NODE)
        return fail(keyNode, "keys must be strings, not " + describe(keyNode));
      const std::string key = text(keyNode);
      if (!seen.insert(key).second)
        return fail(keyNode, "duplicate key '" + key + "'");
      if (known.size() != 0 &&
          std::none_of(known.begin(), known.end(),
                       [&](const char *k) { return key == k; }))
        return fail(keyNode, unknownKeyMessage(key, where, known));
      if (!handle(key, keyNode, value))
        return false;
    }
    return true;
  }

  static std::string
  unknownKeyMessage(const std::string &key, const std::string &where,
                    std::initializer_list<const char *> known) {
    std::string message = "unknown key '" + key + "'";
    if (!where.empty())
      message += " in '" + where + "'";
    const char *best = nullptr;
    size_t bestDistance = 3; // suggest within edit distance 2
    for (const char *k : known) {
      const size_t d = editDistance(key, k);
      if (d < bestDistance) {
        best = k;
        bestDistance = d;
      }
    }
    if (best)
      return message + " (did you mean '" + best + "'?)";
    std::string list;
    for (const char *k : known)
      list += (list.empty() ? "" : ", ") + std::string(k);
    return message + " (expected one of: " + list + ")";
  }

  bool expectMapping(yaml_node_t *node, const std::string &key) {
    if (node->type == YAML_MAPPING_NODE)
      return true;
    return fail(node,
                "expected a mapping for '" + key + "', got " + describe(node));
  }

  // --- scalars ------------------------------------------------------------

  bool getString(yaml_node_t *node, const std::string &key, std::string &out) {
    if (node->type != YAML_SCALAR_NODE || isNull(node))
      return fail(node,
                  "expected a string for '" + key + "', got " + describe(node));
    out = text(node);
    return true;
  }

  bool getPath(yaml_node_t *node, const std::string &key, std::string &out) {
    if (!getString(node, key, out))
      return false;
    if (out.empty())
      return fail(node, "'" + key + "' must not be empty");
    out = resolvePath(configDir_, out);
    return true;
  }

  // YAML 1.2 core schema: plain scalars only, so a quoted "3" stays a string.
  bool getInt(yaml_node_t *node, const std::string &what, int64_t &out) {
    const std::string t = isPlainScalar(node) ? text(node) : "";
    char *end = nullptr;
    errno = 0;
    const long long v = t.empty() ? 0 : std::strtoll(t.c_str(), &end, 10);
    if (t.empty() || *end != '\0' || std::isspace((unsigned char)t[0]))
      return fail(node, "expected an integer for " + what + ", got " +
                            describe(node));
    if (errno == ERANGE)
      return fail(node, "integer out of range for " + what);
    out = v;
    return true;
  }

  bool getUInt64(yaml_node_t *node, const std::string &key, uint64_t &out) {
    const std::string t = isPlainScalar(node) ? text(node) : "";
    if (t.empty() || !std::all_of(t.begin(), t.end(), [](char c) {
          return std::isdigit((unsigned char)c);
        }))
      return fail(node, "expected a non-negative integer for '" + key +
                            "', got " + describe(node));
    errno = 0;
    const unsigned long long v = std::strtoull(t.c_str(), nullptr, 10);
    if (errno == ERANGE)
      return fail(node, "integer out of range for '" + key + "'");
    out = v;
    return true;
  }

  bool getDouble(yaml_node_t *node, const std::string &what, double &out) {
    const std::string t = isPlainScalar(node) ? text(node) : "";
    char *end = nullptr;
    const double v = t.empty() ? 0 : std::strtod(t.c_str(), &end);
    if (t.empty() || *end != '\0' || std::isspace((unsigned char)t[0]) ||
        !std::isfinite(v))
      return fail(node,
                  "expected a number for " + what + ", got " + describe(node));
    out = v;
    return true;
  }

  bool getBool(yaml_node_t *node, const std::string &key, bool &out) {
    const std::string t = isPlainScalar(node) ? text(node) : "";
    if (t == "true" || t == "True" || t == "TRUE")
      out = true;
    else if (t == "false" || t == "False" || t == "FALSE")
      out = false;
    else
      return fail(node, "expected true or false for '" + key + "', got " +
                            describe(node));
    return true;
  }

  template <typename E, size_t N>
  bool getEnum(yaml_node_t *node, const std::string &key,
               const EnumName<E> (&names)[N], E &out) {
    const std::string t = node->type == YAML_SCALAR_NODE ? text(node) : "";
    for (const EnumName<E> &n : names) {
      if (t == n.name) {
        out = n.value;
        return true;
      }
    }
    std::string allowed;
    for (const EnumName<E> &n : names)
      allowed += (allowed.empty() ? "" : ", ") + std::string(n.name);
    return fail(node, "invalid value " + describe(node) + " for '" + key +
                          "' (allowed: " + allowed + ")");
  }

  // --- keys ---------------------------------------------------------------

  bool checkName(yaml_node_t *node, const std::string &name) {
    if (name.empty() || name.find('/') != std::string::npos)
      return fail(node, "'name' must be a non-empty file name without '/'");
    return true;
  }

  bool checkModelExists(yaml_node_t *node, const std::string &model) {
    if (std::string problem = fileProblem(model); !problem.empty())
      return fail(node, "cannot open model file '" + model + "': " + problem);
    return true;
  }

  bool getChip(yaml_node_t *node, std::string &out) {
    if (!getString(node, "chip", out))
      return false;
    for (const char *chip : kSupportedChips)
      if (out == chip)
        return true;
    std::string supported;
    for (const char *chip : kSupportedChips)
      supported += (supported.empty() ? "" : ", ") + std::string(chip);
    return fail(node, "unsupported chip '" + out +
                          "' (supported: " + supported + ")");
  }

  bool getInputs(yaml_node_t *node, std::vector<InputOverride> &out) {
    if (isNull(node))
      return true;
    if (!expectMapping(node, "inputs"))
      return false;
    return forEachKey(
        node, "inputs", {},
        [&](const std::string &name, yaml_node_t *nameNode, yaml_node_t *spec) {
          const std::string where = "inputs." + name;
          if (spec->type != YAML_MAPPING_NODE)
            return fail(spec, "expected a mapping such as {shape: [1, 3, 224, "
                              "224]} for input '" +
                                  name + "', got " + describe(spec));
          InputOverride input{name, {}};
          yaml_node_t *shapeKey = nullptr;
          bool ok = forEachKey(
              spec, where, {"shape", "shapes"},
              [&](const std::string &key, yaml_node_t *keyNode, yaml_node_t *value) {
                if (shapeKey)
                  return fail(keyNode, "input '" + name +
                                           "' has both 'shape' and 'shapes' (one or the other)");
                shapeKey = keyNode;
                if (key == "shapes")
                  return getShapes(value, input.shapes);
                input.shapes.emplace_back();
                return getShape(value, input.shapes.back());
              });
          if (!ok)
            return false;
          if (!shapeKey)
            return fail(nameNode, "input '" + name + "' needs a 'shape' or 'shapes'");
          if (!checkStages(out, input, shapeKey))
            return false;
          out.push_back(std::move(input));
          return true;
        });
  }

  // `shapes:` lists one shape per stage: at least one, all of one rank, and
  // as many as any earlier input's list; the stages' shape sets differ.
  bool getShapes(yaml_node_t *node, std::vector<std::vector<int64_t>> &out) {
    if (node->type != YAML_SEQUENCE_NODE || node->data.sequence.items.start ==
                                                node->data.sequence.items.top)
      return fail(node, "expected a list of shapes such as [[1, 3, 48, 320], [1, 3, 48, "
                        "640]] for 'shapes', got " + describe(node));
    for (yaml_node_item_t *item = node->data.sequence.items.start;
         item < node->data.sequence.items.top; ++item) {
      out.emplace_back();
      if (!getShape(nodeAt(*item), out.back()))
        return false;
      if (out.back().size() != out.front().size())
        return fail(nodeAt(*item), "every shape of one input needs the same rank");
    }
    return true;
  }

  bool checkStages(const std::vector<InputOverride> &earlier, const InputOverride &input,
                   yaml_node_t *where) {
    size_t stages = input.shapes.size();
    for (const InputOverride &e : earlier)
      if (stages > 1 && e.shapes.size() > 1 && e.shapes.size() != stages)
        return fail(where, "input '" + input.name + "' lists " + std::to_string(stages) +
                               " shapes but input '" + e.name + "' lists " +
                               std::to_string(e.shapes.size()) + " (one per stage)");
    std::vector<InputOverride> all = earlier;
    all.push_back(input);
    DeployConfig probe;
    probe.inputs = all;
    size_t n = stageCount(probe);
    std::vector<std::vector<std::vector<int64_t>>> seen;
    for (size_t s = 0; s < n; ++s) {
      std::vector<std::vector<int64_t>> set;
      for (const InputOverride &in : stageConfig(probe, s).inputs)
        set.push_back(in.shapes.front());
      if (std::find(seen.begin(), seen.end(), set) != seen.end())
        return fail(where, "stage " + std::to_string(s) +
                               " repeats the input shapes of an earlier stage");
      seen.push_back(set);
    }
    return true;
  }

  bool getShape(yaml_node_t *node, std::vector<int64_t> &out) {
    if (node->type != YAML_SEQUENCE_NODE)
      return fail(node, "expected a list of integers for 'shape', got " +
                            describe(node));
    for (yaml_node_item_t *item = node->data.sequence.items.start;
         item < node->data.sequence.items.top; ++item) {
      yaml_node_t *dimNode = nodeAt(*item);
      int64_t dim;
      if (!getInt(dimNode, "a 'shape' dimension", dim))
        return false;
      if (dim < 1)
        return fail(dimNode, "shape dimensions must be positive");
      out.push_back(dim);
    }
    return true;
  }

  bool getQtable(yaml_node_t *node, std::map<std::string, DType> &out) {
    if (isNull(node))
      return true;
    if (!expectMapping(node, "qtable"))
      return false;
    return forEachKey(
        node, "qtable", {},
        [&](const std::string &op, yaml_node_t *, yaml_node_t *value) {
          return getEnum(value, "qtable." + op, kDTypes, out[op]);
        });
  }

  // A qtable file: a YAML mapping of op name -> dtype, errors at its own
  // file:line:col (a missing file at the config's value).
  bool getQtableFile(yaml_node_t *node, const std::string &file,
                     std::map<std::string, DType> &out) {
    if (std::string problem = fileProblem(file); !problem.empty())
      return fail(node, "cannot open qtable file '" + file + "': " + problem);
    std::string error = loadQtableFile(file, out);
    if (error.empty())
      return true;
    error_ = error;
    return false;
  }

public:
  // Reads a qtable file's mapping (its document is this loader's).
  bool loadQtable(std::map<std::string, DType> &out) {
    yaml_node_t *root = yaml_document_get_root_node(&doc_);
    if (!root || isNull(root))
      return true;
    return getQtable(root, out);
  }
  static std::string loadQtableFile(const std::string &path,
                                    std::map<std::string, DType> &out);

private:
  bool getCalibration(yaml_node_t *node, Calibration &out) {
    if (!expectMapping(node, "calibration"))
      return false;
    return forEachKey(
        node, "calibration",
        {"samples", "method", "percentile", "table", "asymmetric", "bias_correction"},
        [&](const std::string &key, yaml_node_t *, yaml_node_t *value) {
          if (key == "samples")
            return getPath(value, key, out.samples) &&
                   checkSamplesExist(value, out.samples);
          if (key == "method")
            return getEnum(value, key, kCalibMethods, out.method);
          if (key == "table")
            return getPath(value, key, out.table);
          if (key == "asymmetric")
            return getBool(value, "calibration.asymmetric", out.asymmetric);
          if (key == "bias_correction")
            return getBool(value, "calibration.bias_correction", out.bias_correction);
          if (!getDouble(value, "'percentile'", out.percentile))
            return false;
          if (out.percentile <= 0 || out.percentile > 100)
            return fail(value, "'percentile' must be in (0, 100]");
          return true;
        });
  }

  bool checkSamplesExist(yaml_node_t *node, const std::string &pattern) {
    glob_t matches{};
    const int rc = glob(pattern.c_str(), 0, nullptr, &matches);
    globfree(&matches);
    if (rc == 0)
      return true;
    return fail(node, "no calibration samples match '" + pattern + "'");
  }

  bool getLayerGroup(yaml_node_t *node, bool &enabled) {
    if (!expectMapping(node, "layer_group"))
      return false;
    return forEachKey(
        node, "layer_group", {"enabled"},
        [&](const std::string &, yaml_node_t *, yaml_node_t *value) {
          return getBool(value, "layer_group.enabled", enabled);
        });
  }

  bool getOptimize(yaml_node_t *node, ModulatedConv &modulatedConv) {
    if (!expectMapping(node, "optimize"))
      return false;
    return forEachKey(node, "optimize", {"modulated_conv"},
                      [&](const std::string &, yaml_node_t *, yaml_node_t *value) {
                        return getEnum(value, "optimize.modulated_conv",
                                       kModulatedConv, modulatedConv);
                      });
  }

  bool getDebug(yaml_node_t *node, bool &keepTensors) {
    if (!expectMapping(node, "debug"))
      return false;
    return forEachKey(node, "debug", {"keep_tensors"},
                      [&](const std::string &, yaml_node_t *, yaml_node_t *value) {
                        return getBool(value, "debug.keep_tensors", keepTensors);
                      });
  }

  bool getVerify(yaml_node_t *keyNode, yaml_node_t *node, Verify &out) {
    if (!expectMapping(node, "verify"))
      return false;
    out.enabled = true;
    bool haveReference = false;
    bool ok = forEachKey(
        node, "verify", {"reference", "tolerance"},
        [&](const std::string &key, yaml_node_t *, yaml_node_t *value) {
          if (key == "reference") {
            haveReference = true;
            if (!getPath(value, key, out.reference))
              return false;
            if (std::string problem = fileProblem(out.reference);
                !problem.empty())
              return fail(value, "cannot open reference file '" +
                                     out.reference + "': " + problem);
            return true;
          }
          return getTolerance(value, out);
        });
    if (!ok)
      return false;
    if (!haveReference)
      return fail(keyNode, "'verify' needs a 'reference'");
    return true;
  }

  bool getTolerance(yaml_node_t *node, Verify &out) {
    if (node->type != YAML_SEQUENCE_NODE ||
        node->data.sequence.items.top - node->data.sequence.items.start != 2)
      return fail(node, "expected [min_cosine, min_euclidean] for "
                        "'tolerance', got " +
                            describe(node));
    const yaml_node_item_t *items = node->data.sequence.items.start;
    yaml_node_t *cosNode = nodeAt(items[0]);
    yaml_node_t *euclidNode = nodeAt(items[1]);
    if (!getDouble(cosNode, "the cosine tolerance", out.min_cosine) ||
        !getDouble(euclidNode, "the euclidean tolerance", out.min_euclidean))
      return false;
    if (out.min_cosine < -1 || out.min_cosine > 1)
      return fail(cosNode, "the cosine tolerance must be in [-1, 1]");
    if (out.min_euclidean > 1)
      return fail(euclidNode, "the euclidean tolerance must be at most 1");
    return true;
  }

  const std::string &path_;
  yaml_document_t &doc_;
  fs::path configDir_;
  std::string error_;
};

std::string readText(const std::string &path, std::string &out) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return path + ": error: cannot open config file: " + std::strerror(errno);
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0)
    out.append(buffer, n);
  const bool failed = std::ferror(f);
  const int readErrno = errno;
  std::fclose(f);
  if (failed)
    return path +
           ": error: cannot read config file: " + std::strerror(readErrno);
  return {};
}

std::string syntaxError(const std::string &path, const yaml_parser_t &parser) {
  std::string message = parser.problem ? parser.problem : "invalid YAML";
  if (parser.context)
    message += std::string(" (") + parser.context + " at " +
               std::to_string(parser.context_mark.line + 1) + ":" +
               std::to_string(parser.context_mark.column + 1) + ")";
  return path + ":" + std::to_string(parser.problem_mark.line + 1) + ":" +
         std::to_string(parser.problem_mark.column + 1) +
         ": error: " + escapeControls(message);
}

// Reads `path` as YAML and calls use(parser, document) with its first
// document; returns a read or syntax error, else what use returns.
template <class Use>
std::string withYamlDocument(const std::string &path, Use use) {
  std::string yamlText;
  if (std::string error = readText(path, yamlText); !error.empty())
    return error;
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser))
    return path + ": error: cannot initialise the YAML parser";
  yaml_parser_set_input_string(
      &parser, reinterpret_cast<const unsigned char *>(yamlText.data()),
      yamlText.size());
  std::string error;
  yaml_document_t doc;
  if (!yaml_parser_load(&parser, &doc)) {
    error = syntaxError(path, parser);
  } else {
    error = use(parser, doc);
    yaml_document_delete(&doc);
  }
  yaml_parser_delete(&parser);
  return error;
}

std::string Loader::loadQtableFile(const std::string &path,
                                   std::map<std::string, DType> &out) {
  return withYamlDocument(path, [&](yaml_parser_t &, yaml_document_t &doc) {
    Loader loader(path, doc);
    return loader.loadQtable(out) ? std::string() : loader.error();
  });
}

} // namespace

std::string loadConfig(const std::string &path, DeployConfig &out) {
  return withYamlDocument(path, [&](yaml_parser_t &parser, yaml_document_t &doc) {
    DeployConfig config;
    config.config_path = path;
    Loader loader(path, doc);
    if (!loader.load(config))
      return loader.error();
    // A second document would be silently ignored; say so instead.
    std::string error;
    yaml_document_t next;
    if (!yaml_parser_load(&parser, &next)) {
      error = syntaxError(path, parser);
    } else {
      if (yaml_node_t *root = yaml_document_get_root_node(&next))
        error = path + ":" + std::to_string(root->start_mark.line + 1) + ":" +
                std::to_string(root->start_mark.column + 1) +
                ": error: a config holds a single YAML document";
      yaml_document_delete(&next);
    }
    if (error.empty())
      out = std::move(config);
    return error;
  });
}

} // namespace kiln::config
