// The calibration table (read/write, errors with line numbers) and the
// threshold algorithms on synthetic distributions.
#include "kiln/Calibration/CalibrationTable.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>

using namespace kiln::calib;
using kiln::config::CalibMethod;

namespace {

std::string tempPath(const std::string &name) {
  const char *dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/kiln_calibration_test_" +
         std::to_string(getpid()) + "_" + name;
}

void writeText(const std::string &path, const std::string &text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string parseError(const std::string &text) {
  std::map<std::string, TensorRange> table;
  std::string err = parseCalibrationTable(text, "t.calib", table);
  if (!err.empty()) {
    EXPECT_TRUE(table.empty());
  }
  return err;
}

const char *kHead = "# kiln calibration table v2\n";
const char *kHeadV1 = "# kiln calibration table v1\n";

/// Samples of N(0, 1) plus `outliers` values of +-magnitude.
std::vector<float> gaussianWithOutliers(size_t n, size_t outliers,
                                        float magnitude, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = normal(gen);
  for (size_t i = 0; i < outliers; ++i)
    v[i * (n / outliers)] = (i % 2 ? -magnitude : magnitude);
  return v;
}

/// Feeds `data` to a calibrator as `chunks` samples of one tensor.
std::vector<NamedRange> calibrate(CalibMethod method,
                                  const std::vector<float> &data,
                                  size_t chunks = 4, double percentile = 99.99) {
  Calibrator c(method, percentile);
  const size_t step = data.size() / chunks;
  for (unsigned pass = 0; pass < c.passes(); ++pass)
    for (size_t i = 0; i < chunks; ++i)
      c.observe(pass, "x", data.data() + i * step,
                i + 1 == chunks ? data.size() - i * step : step);
  return c.finish();
}

} // namespace

TEST(CalibrationTable, RoundTrip) {
  std::vector<NamedRange> tensors = {
      {"input", {3.25f, -3.25f, 2.5f, "minmax", {0.5, -0.25, 1e-9}}},
      {"/stem/conv/Conv_output_0", {12.345678f, -1e-7f, 12.345678f, "kl", {}}},
      {"name with spaces", {0.1f, 0, 0.1f, "percentile", {0.0625}}},
      {"zero", {0, 0, 0, "", {}}},
  };
  TableInfo info{"model.onnx", 16, CalibMethod::KL};
  const std::string path = tempPath("roundtrip.calib");
  ASSERT_EQ(writeCalibrationTable(path, tensors, info), "");

  std::ifstream in(path);
  std::string first, second, third;
  std::getline(in, first);
  std::getline(in, second);
  std::getline(in, third);
  EXPECT_EQ(first, "# kiln calibration table v2");
  EXPECT_EQ(second, "# model: model.onnx  samples: 16  method: kl");
  EXPECT_EQ(third, "# tensor threshold min max method");
  std::string zeroLine;
  while (std::getline(in, zeroLine) && zeroLine.rfind("zero ", 0) != 0) {
  }
  EXPECT_EQ(zeroLine, "zero 0 0 0 -"); // no method recorded
  in.clear();
  in.seekg(0);
  std::string line, meanLine;
  while (std::getline(in, line))
    if (line.rfind("#!mean", 0) == 0 && line.find("spaces") != std::string::npos)
      meanLine = line;
  EXPECT_EQ(meanLine, "#!mean 1 0.0625 name with spaces");

  std::map<std::string, TensorRange> table;
  ASSERT_EQ(readCalibrationTable(path, table), "");
  ASSERT_EQ(table.size(), tensors.size());
  for (const NamedRange &t : tensors) {
    ASSERT_TRUE(table.count(t.name)) << t.name;
    // %.9g round-trips every float exactly.
    EXPECT_EQ(float(table[t.name].threshold), float(t.range.threshold));
    EXPECT_EQ(float(table[t.name].min), float(t.range.min));
    EXPECT_EQ(float(table[t.name].max), float(t.range.max));
    EXPECT_EQ(table[t.name].method, t.range.method);
    EXPECT_EQ(table[t.name].channelMeans, t.range.channelMeans);
  }
  std::remove(path.c_str());
}

TEST(CalibrationTable, ChannelMeanLines) {
  std::map<std::string, TensorRange> table;
  ASSERT_EQ(parseCalibrationTable(std::string(kHead) + "a b 1 -1 1 mse\n#!mean 2 0.5 -1.5 a b\n",
                                  "t.calib", table),
            "");
  EXPECT_EQ(table["a b"].channelMeans, (std::vector<double>{0.5, -1.5}));
  EXPECT_NE(parseError(std::string(kHead) + "#!mean 1 0.5 a\na 1 -1 1 mse\n")
                .find("t.calib:2: error: '#!mean' line for tensor 'a', which no line before it "
                      "lists"),
            std::string::npos);
  EXPECT_NE(parseError(std::string(kHead) + "a 1 -1 1 mse\n#!mean 3 0.5 1 a\n")
                .find("expected 3 finite numbers before the tensor name"),
            std::string::npos);
  EXPECT_NE(parseError(std::string(kHead) + "a 1 -1 1 mse\n#!mean x a\n")
                .find("expected '#!mean <count> <means...> <tensor>'"),
            std::string::npos);
  EXPECT_NE(parseError(std::string(kHead) + "a 1 -1 1 mse\n#!mean 1 0 a\n#!mean 1 0 a\n")
                .find("tensor 'a' has two '#!mean' lines"),
            std::string::npos);
  // In v1 a '#!' line is a comment.
  EXPECT_EQ(parseCalibrationTable(std::string(kHeadV1) + "#!mean x\na 1 -1 1\n", "t.calib",
                                  table),
            "");
}

TEST(Calibrator, ChannelMeans) {
  // [2, 3, 2] twice: the mean of each of the 3 channels over batches,
  // positions and samples; NaN left out. Without a layout, no means.
  Calibrator c(CalibMethod::MinMax);
  std::vector<float> a = {1, 3, 10, 10, -1, -1, 3, 5, 10, NAN, -3, -3};
  std::vector<float> b = {2, 2, 10, 10, -2, -2, 2, 2, 10, 10, -2, -2};
  c.observe(0, "t", a.data(), a.size(), 3, 2);
  c.observe(0, "t", b.data(), b.size(), 3, 2);
  c.observe(0, "flat", b.data(), b.size());
  auto r = c.finish();
  ASSERT_EQ(r.size(), 2u);
  ASSERT_EQ(r[0].range.channelMeans.size(), 3u);
  EXPECT_DOUBLE_EQ(r[0].range.channelMeans[0], (1 + 3 + 3 + 5 + 2 + 2 + 2 + 2) / 8.0);
  EXPECT_DOUBLE_EQ(r[0].range.channelMeans[1], 10.0);
  EXPECT_DOUBLE_EQ(r[0].range.channelMeans[2], (-1 - 1 - 3 - 3 - 2 - 2 - 2 - 2) / 8.0);
  EXPECT_TRUE(r[1].range.channelMeans.empty());
}

TEST(CalibrationTable, ReadsVersionOneWithoutMethods) {
  std::map<std::string, TensorRange> table;
  ASSERT_EQ(parseCalibrationTable(std::string(kHeadV1) + "name with spaces 2 -1 2\n",
                                  "t.calib", table),
            "");
  ASSERT_EQ(table.count("name with spaces"), 1u);
  EXPECT_EQ(table["name with spaces"].threshold, 2);
  EXPECT_EQ(table["name with spaces"].method, "");
  // v2 wants the method column: four fields are a short line.
  EXPECT_NE(parseError(std::string(kHead) + "a 1 -1 1\n")
                .find("expected 'tensor threshold min max method'"),
            std::string::npos);
  EXPECT_NE(parseError(std::string(kHead) + "a 1 -1 1 auto\n")
                .find("t.calib:2: error: tensor 'a': method 'auto' is not minmax, kl, "
                      "percentile, mse or -"),
            std::string::npos);
}

TEST(CalibrationTable, MalformedLineNamesFileAndLine) {
  const std::string text = std::string(kHead) +
                           "# model: m  samples: 1  method: minmax\n"
                           "a 1 -1 1 minmax\n"
                           "\n"
                           "b 1 -1 minmax\n"; // line 5: a field short
  const std::string err = parseError(text);
  std::printf("malformed: %s\n", err.c_str());
  EXPECT_EQ(err.rfind("t.calib:5: error: ", 0), 0u) << err;
  EXPECT_NE(err.find("expected 'tensor threshold min max method'"), std::string::npos);
}

TEST(CalibrationTable, BadNumbersAndRanges) {
  EXPECT_NE(parseError(std::string(kHead) + "a 1 x 2 kl\n")
                .find("t.calib:2: error: tensor 'a': min 'x' is not a finite"),
            std::string::npos);
  EXPECT_NE(parseError(std::string(kHead) + "a -1 0 1 kl\n").find("negative"),
            std::string::npos);
  EXPECT_NE(parseError(std::string(kHead) + "a 1 2 1 kl\n")
                .find("min 2 is greater than max 1"),
            std::string::npos);
  EXPECT_NE(parseError(std::string(kHead) + "a 1 0 1 -\nb 1 0 1 -\na 2 0 2 -\n")
                .find("t.calib:4: error: tensor 'a' is listed twice (first on "
                      "line 2)"),
            std::string::npos);
  EXPECT_NE(parseError(std::string(kHead) + "a nan 0 1 mse\n").find("threshold"),
            std::string::npos);
}

TEST(CalibrationTable, HeaderIsRequired) {
  EXPECT_EQ(parseError("a 1 0 1\n").rfind("t.calib:1: error: not a kiln "
                                          "calibration table",
                                          0),
            0u);
  EXPECT_NE(parseError("# kiln calibration table v3\na 1 0 1\n")
                .find("unsupported calibration table version 'v3'"),
            std::string::npos);
  EXPECT_NE(parseError("").find("empty file"), std::string::npos);
  // Comments and blank lines anywhere after the header are fine.
  std::map<std::string, TensorRange> table;
  EXPECT_EQ(parseCalibrationTable(
                "\n" + std::string(kHead) + "# x\n\n  a  1.5  -1  1.5  mse \n# y\n",
                "t.calib", table),
            "");
  ASSERT_EQ(table.size(), 1u);
  EXPECT_EQ(table["a"].threshold, 1.5);
}

TEST(CalibrationTable, ReadMissingFileNamesIt) {
  std::map<std::string, TensorRange> table;
  const std::string err = readCalibrationTable("/nonexistent/x.calib", table);
  EXPECT_EQ(err.rfind("/nonexistent/x.calib: error: cannot open", 0), 0u)
      << err;
}

TEST(CalibrationTable, WriterRejectsUnwritableNames) {
  std::string error;
  formatCalibrationTable({{"#a", {1, 0, 1, "", {}}}}, {}, error);
  EXPECT_NE(error.find("'#a'"), std::string::npos);
  formatCalibrationTable({{"a", {1, 0, 1, "", {}}}, {"a", {1, 0, 1, "", {}}}}, {}, error);
  EXPECT_NE(error.find("twice"), std::string::npos);
}

TEST(Thresholds, MinMax) {
  EXPECT_EQ(minmaxThreshold(-3, 2), 3);
  EXPECT_EQ(minmaxThreshold(-1, 4), 4);
  auto r = calibrate(CalibMethod::MinMax, {-0.5f, 2.0f, -7.25f, 1.0f}, 2);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].range.min, -7.25);
  EXPECT_EQ(r[0].range.max, 2.0);
  EXPECT_EQ(r[0].range.threshold, 7.25);
}

TEST(Thresholds, PercentileOfUniform) {
  // |x| uniform on [0, 1]: the p-th percentile is p / 100.
  std::vector<float> v(200000);
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float &x : v)
    x = u(gen);
  for (double p : {50.0, 90.0, 99.0, 99.9}) {
    auto r = calibrate(CalibMethod::Percentile, v, 4, p);
    std::printf("percentile %g of |U(-1,1)|: %.6f\n", p, r[0].range.threshold);
    EXPECT_NEAR(r[0].range.threshold, p / 100, 0.005);
  }
  // 100 is the full range.
  auto r = calibrate(CalibMethod::Percentile, v, 4, 100);
  EXPECT_DOUBLE_EQ(r[0].range.threshold, minmaxThreshold(r[0].range.min,
                                                         r[0].range.max));
}

TEST(Thresholds, PercentileOfHistogram) {
  // 10 counts in bin 0, 10 in bin 3 (width 1): the 75th percentile is half
  // way through bin 3.
  std::vector<uint64_t> hist = {10, 0, 0, 10};
  EXPECT_DOUBLE_EQ(percentileThreshold(hist, 1.0, 75), 3.5);
  EXPECT_DOUBLE_EQ(percentileThreshold(hist, 1.0, 25), 0.5);
  EXPECT_DOUBLE_EQ(percentileThreshold(hist, 1.0, 100), 4.0);
}

TEST(Thresholds, KlClipsOutliersOfGaussian) {
  // N(0, 1) with a handful of outliers at +-40: minmax keeps the outliers,
  // KL clips near the bulk (TensorRT reports ~3.5-4 sigma for a gaussian).
  auto v = gaussianWithOutliers(1 << 20, 8, 40.0f, 7);
  auto mm = calibrate(CalibMethod::MinMax, v);
  auto kl = calibrate(CalibMethod::KL, v);
  auto pc = calibrate(CalibMethod::Percentile, v, 4, 99.99);
  std::printf("gaussian+outliers: minmax %.4f  kl %.4f  percentile(99.99) "
              "%.4f\n",
              mm[0].range.threshold, kl[0].range.threshold,
              pc[0].range.threshold);
  EXPECT_DOUBLE_EQ(mm[0].range.threshold, 40.0);
  EXPECT_LT(kl[0].range.threshold, mm[0].range.threshold);
  EXPECT_GT(kl[0].range.threshold, 2.0);
  EXPECT_LT(kl[0].range.threshold, 8.0);
  // min and max are the true extremes whatever the method.
  EXPECT_EQ(kl[0].range.min, -40.0);
  EXPECT_EQ(kl[0].range.max, 40.0);
  EXPECT_NEAR(pc[0].range.threshold, 3.89, 0.15); // 99.99% of |N(0,1)|
}

TEST(Thresholds, MseWeighsRoundingAgainstClipping) {
  // N(0, 1) with 8 outliers at +-40 among a million values: rounding the
  // million on a T/127 grid costs 1e6 (T/127)^2 / 12, clipping the eight
  // 8 (40 - T)^2; the two balance near T = 24 - between KL's ~4 sigma and
  // minmax's 40.
  auto v = gaussianWithOutliers(1 << 20, 8, 40.0f, 7);
  auto mse = calibrate(CalibMethod::Mse, v);
  std::printf("gaussian+outliers: mse %.4f\n", mse[0].range.threshold);
  EXPECT_GT(mse[0].range.threshold, 20.0);
  EXPECT_LT(mse[0].range.threshold, 28.0);
  // A uniform distribution: clipping any of it costs more than rounding.
  std::vector<float> u(1 << 20);
  std::mt19937 gen(3);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (float &x : u)
    x = dist(gen);
  EXPECT_GT(calibrate(CalibMethod::Mse, u)[0].range.threshold, 1.95);
  // By hand: 100 values in bin 0 and 1 in bin 3 of 4 (width 1), 2 levels:
  // t = 2 costs 100 * 1/12 + (3.5 - 2)^2 = 10.58, t = 3 costs 100 * 2.25/12
  // + 0.25 = 19.0, t = 4 costs 100 * 4/12 = 33.3.
  EXPECT_DOUBLE_EQ(mseThreshold({100, 0, 0, 1}, 1.0, 2), 2.0);
  EXPECT_DOUBLE_EQ(mseThreshold({0, 0, 0, 0}, 1.0, 2), 4.0);
}

TEST(Thresholds, KlOfUniformKeepsTheRange) {
  // A uniform distribution has no tail to clip: KL keeps (nearly) all of it.
  std::vector<float> v(1 << 20);
  std::mt19937 gen(3);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  for (float &x : v)
    x = u(gen);
  auto kl = calibrate(CalibMethod::KL, v);
  std::printf("uniform(-2,2): kl %.4f\n", kl[0].range.threshold);
  EXPECT_GT(kl[0].range.threshold, 1.8);
  EXPECT_LE(kl[0].range.threshold, 2.0);
}

TEST(Thresholds, KlNeedsAPopulatedHistogram) {
  // 160 values (16 samples of 10 logits) over 2048 bins: keep the range.
  auto few = gaussianWithOutliers(160, 2, 5.0f, 11);
  auto kl = calibrate(CalibMethod::KL, few, 16);
  EXPECT_DOUBLE_EQ(kl[0].range.threshold, 5.0);
  // 8192 values are enough.
  auto enough = gaussianWithOutliers(8192, 2, 40.0f, 11);
  kl = calibrate(CalibMethod::KL, enough, 16);
  std::printf("8192 values of N(0,1) + outliers at 40: kl %.4f\n",
              kl[0].range.threshold);
  EXPECT_LT(kl[0].range.threshold, 40.0);
}

TEST(Thresholds, KlDivergence) {
  EXPECT_DOUBLE_EQ(klDivergence({1, 1}, {2, 2}), 0.0);
  EXPECT_NEAR(klDivergence({1, 0}, {1, 1}), std::log(2.0), 1e-12);
  EXPECT_TRUE(std::isinf(klDivergence({1, 1}, {1, 0})));
}

TEST(Calibrator, TwoPassesAndHistogram) {
  Calibrator c(CalibMethod::KL);
  ASSERT_EQ(c.passes(), 2u);
  std::vector<float> a = {-1, 0.5f, NAN}, b = {4, -2, INFINITY}, z = {0, 0};
  for (unsigned pass = 0; pass < 2; ++pass) {
    c.observe(pass, "t", a.data(), a.size());
    c.observe(pass, "zero", z.data(), z.size());
    c.observe(pass, "t", b.data(), b.size());
  }
  auto r = c.finish();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].name, "t"); // first-observed order
  EXPECT_EQ(r[0].range.min, -2);
  EXPECT_EQ(r[0].range.max, 4);
  EXPECT_LE(r[0].range.threshold, 4);
  EXPECT_EQ(r[1].name, "zero");
  EXPECT_EQ(r[1].range.threshold, 0);
  const auto &h = c.histogram("t");
  ASSERT_EQ(h.size(), 2048u);
  uint64_t total = 0;
  for (uint64_t n : h)
    total += n;
  EXPECT_EQ(total, 4u); // NaN and Inf left out
  EXPECT_EQ(h[2047], 1u); // |4| = absmax lands in the last bin
  EXPECT_DOUBLE_EQ(c.binWidth("t"), 4.0 / 2048);
  EXPECT_EQ(Calibrator(CalibMethod::MinMax).passes(), 1u);
}

TEST(Calibrator, KlOnASparseHistogramRecordsMinmax) {
  // Too few values for a KL threshold: the table says minmax gave it.
  auto r = calibrate(CalibMethod::KL, {1, -3, 2, 0.5f});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].range.threshold, 3);
  EXPECT_EQ(r[0].range.method, "minmax");
}

TEST(Calibrator, AutoOffersEachDistinctThreshold) {
  // N(0, 1) with a few far outliers: percentile and kl clip them; mse
  // keeps most of the range (a clipped outlier costs its error squared);
  // minmax keeps them all.
  const std::vector<float> data = gaussianWithOutliers(200000, 8, 40.0f, 7);
  Calibrator c(CalibMethod::Auto);
  ASSERT_EQ(c.passes(), 2u);
  for (unsigned pass = 0; pass < 2; ++pass)
    c.observe(pass, "x", data.data(), data.size());
  auto r = c.finish();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FLOAT_EQ(float(r[0].range.threshold), 40.0f); // minmax until chosen
  EXPECT_EQ(r[0].range.method, "minmax");
  const std::vector<Candidate> cands = c.candidates("x");
  ASSERT_EQ(cands.size(), 4u);
  EXPECT_EQ(cands[0].method, CalibMethod::MinMax);
  EXPECT_EQ(cands[1].method, CalibMethod::Percentile);
  EXPECT_EQ(cands[2].method, CalibMethod::Mse);
  EXPECT_EQ(cands[3].method, CalibMethod::KL);
  EXPECT_FLOAT_EQ(float(cands[0].threshold), 40.0f);
  EXPECT_LT(cands[1].threshold, 10.0);
  EXPECT_LT(cands[2].threshold, 40.0);
  EXPECT_GT(cands[2].threshold, 20.0);
  EXPECT_LT(cands[3].threshold, 10.0);
  for (size_t i = 0; i < cands.size(); ++i)
    EXPECT_EQ(cands[i].threshold,
              calibrate(cands[i].method, data, 1).at(0).range.threshold)
        << i;

  // A uniform tensor: every method keeps (nearly) the range, one candidate.
  std::vector<float> uniform(100000);
  for (size_t i = 0; i < uniform.size(); ++i)
    uniform[i] = float(i) / float(uniform.size() - 1);
  Calibrator u(CalibMethod::Auto);
  for (unsigned pass = 0; pass < 2; ++pass)
    u.observe(pass, "u", uniform.data(), uniform.size());
  EXPECT_LE(u.candidates("u").size(), 2u);
  EXPECT_TRUE(u.candidates("missing").empty());
}

TEST(CalibrationConfig, TableAndAsymmetricKeys) {
  namespace fs = std::filesystem;
  const fs::path dir = tempPath("config");
  fs::create_directories(dir / "samples");
  writeText((dir / "m.onnx").string(), "");
  writeText((dir / "samples/s0.npz").string(), "");
  const std::string config = (dir / "c.yaml").string();
  writeText(config, "model: m.onnx\n"
                    "calibration:\n"
                    "  samples: samples/*.npz\n"
                    "  method: percentile\n"
                    "  table: tables/m.calib\n"
                    "  asymmetric: true\n"
                    "  bias_correction: false\n");
  kiln::config::DeployConfig c;
  ASSERT_EQ(kiln::config::loadConfig(config, c), "");
  EXPECT_EQ(c.calibration.table, (dir / "tables/m.calib").string());
  EXPECT_TRUE(c.calibration.asymmetric);
  EXPECT_FALSE(c.calibration.bias_correction);
  EXPECT_EQ(c.calibration.method, CalibMethod::Percentile);

  writeText(config, "model: m.onnx\ncalibration: {samples: samples/*.npz}\n");
  ASSERT_EQ(kiln::config::loadConfig(config, c), "");
  EXPECT_EQ(c.calibration.table, "");
  EXPECT_FALSE(c.calibration.asymmetric);
  EXPECT_TRUE(c.calibration.bias_correction); // the default

  writeText(config, "model: m.onnx\ncalibration:\n  asymmetric: 1\n");
  EXPECT_EQ(kiln::config::loadConfig(config, c),
            config + ":3:15: error: expected true or false for "
                     "'calibration.asymmetric', got '1'");
  writeText(config, "model: m.onnx\ncalibration:\n  bias_correction: yes please\n");
  EXPECT_EQ(kiln::config::loadConfig(config, c),
            config + ":3:20: error: expected true or false for "
                     "'calibration.bias_correction', got 'yes please'");
  writeText(config, "model: m.onnx\ncalibration:\n  table: [a]\n");
  EXPECT_EQ(kiln::config::loadConfig(config, c),
            config + ":3:10: error: expected a string for 'table', got a list");
  writeText(config, "model: m.onnx\ncalibration:\n  tabel: x\n");
  EXPECT_EQ(kiln::config::loadConfig(config, c),
            config + ":3:3: error: unknown key 'tabel' in 'calibration' (did "
                     "you mean 'table'?)");
  fs::remove_all(dir);
}
