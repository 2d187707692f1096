// Similarity metrics of `kiln compare`.
#include "kiln/host/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using kiln::host::Array;
using kiln::host::compareArrays;
using kiln::host::CompareRow;
using kiln::host::DType;
using kiln::host::similarity;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(Similarity, IdenticalVectors) {
  const float a[] = {1, -2, 3.5f, 0};
  const auto s = similarity(a, a, 4);
  EXPECT_DOUBLE_EQ(s.cosine, 1.0);
  EXPECT_DOUBLE_EQ(s.euclidean, 1.0);
  EXPECT_DOUBLE_EQ(s.max_abs, 0.0);
}

TEST(Similarity, KnownValues) {
  const float a[] = {1, 2, 3}, b[] = {2, 4, 6};
  // b = 2a: same direction; ‖a−b‖ = ‖a‖, ‖(a+b)/2‖ = 1.5‖a‖.
  auto s = similarity(a, b, 3);
  EXPECT_NEAR(s.cosine, 1.0, 1e-12);
  EXPECT_NEAR(s.euclidean, 1.0 - 1.0 / 1.5, 1e-12);
  EXPECT_DOUBLE_EQ(s.max_abs, 3.0);

  const float x[] = {1, 0}, y[] = {0, 1};
  s = similarity(x, y, 2);
  EXPECT_DOUBLE_EQ(s.cosine, 0.0);
  EXPECT_NEAR(s.euclidean, 1.0 - std::sqrt(2.0) / std::sqrt(0.5), 1e-12);
  EXPECT_DOUBLE_EQ(s.max_abs, 1.0);

  const float c[] = {1, 2, 3}, d[] = {1, 2, 3.3f};
  s = similarity(c, d, 3);
  EXPECT_GT(s.cosine, 0.99);
  EXPECT_LT(s.cosine, 1.0);
  EXPECT_NEAR(s.max_abs, 0.3, 1e-6);
}

TEST(Similarity, ZeroVectors) {
  const float zero[] = {0, 0, 0}, one[] = {0, 1, 0};
  auto s = similarity(zero, zero, 3);
  EXPECT_DOUBLE_EQ(s.cosine, 1.0);
  EXPECT_DOUBLE_EQ(s.euclidean, 1.0);
  s = similarity(zero, one, 3);
  EXPECT_DOUBLE_EQ(s.cosine, 0.0);
  EXPECT_DOUBLE_EQ(s.euclidean, -1.0); // ‖a−b‖ = 1, ‖(a+b)/2‖ = 0.5
  s = similarity(zero, zero, 0);
  EXPECT_DOUBLE_EQ(s.cosine, 1.0);
  EXPECT_DOUBLE_EQ(s.euclidean, 1.0);
}

TEST(Similarity, OppositeVectors) {
  const float a[] = {1, -2}, b[] = {-1, 2};
  const auto s = similarity(a, b, 2);
  EXPECT_DOUBLE_EQ(s.cosine, -1.0);
  EXPECT_EQ(s.euclidean, -std::numeric_limits<double>::infinity());
}

TEST(Similarity, NonFiniteValuesFail) {
  const float good[] = {1, 2, 3};
  for (float bad : {kNaN, kInf, -kInf}) {
    const float b[] = {1, bad, 3};
    for (const auto &s : {similarity(good, b, 3), similarity(b, good, 3),
                          similarity(b, b, 3)}) {
      EXPECT_EQ(s.cosine, 0.0);
      EXPECT_EQ(s.euclidean, 0.0);
      EXPECT_TRUE(std::isinf(s.max_abs));
    }
  }
}

Array f32(const std::string &name, std::vector<int64_t> shape,
          std::vector<float> values) {
  return Array::fromF32(name, std::move(shape), values.data());
}

TEST(CompareArrays, MatchesByNameAndReportsProblems) {
  Array ints;
  ints.name = "ids";
  ints.dtype = DType::I32;
  ints.shape = {2};
  ints.data = {1, 0, 0, 0, 2, 0, 0, 0};
  const std::vector<Array> a = {
      f32("out", {2, 2}, {1, 2, 3, 4}), f32("only_a", {1}, {1}),
      f32("shaped", {4}, {1, 2, 3, 4}), f32("far", {2}, {1, 0}),
      f32("ids", {2}, {1, 2})};
  const std::vector<Array> b = {f32("only_b", {1}, {1}),
                                f32("far", {2}, {0, 1}),
                                f32("shaped", {2, 2}, {1, 2, 3, 4}),
                                f32("out", {2, 2}, {1, 2, 3, 4.01f}), ints};
  const std::vector<CompareRow> rows = compareArrays(a, b, 0.99, 0.9);
  ASSERT_EQ(rows.size(), 6u);

  EXPECT_EQ(rows[0].name, "out");
  EXPECT_TRUE(rows[0].pass);
  EXPECT_EQ(rows[0].problem, "");
  EXPECT_GT(rows[0].sim.cosine, 0.9999);

  EXPECT_EQ(rows[1].name, "only_a");
  EXPECT_FALSE(rows[1].pass);
  EXPECT_EQ(rows[1].problem, "missing in the second set");

  EXPECT_EQ(rows[2].name, "shaped");
  EXPECT_FALSE(rows[2].pass);
  EXPECT_EQ(rows[2].problem, "shape [4] vs [2, 2]");

  EXPECT_EQ(rows[3].name, "far");
  EXPECT_FALSE(rows[3].pass);
  EXPECT_EQ(rows[3].problem, "");
  EXPECT_DOUBLE_EQ(rows[3].sim.cosine, 0.0);

  EXPECT_EQ(rows[4].name, "ids"); // dtypes differ, values agree
  EXPECT_TRUE(rows[4].pass);

  EXPECT_EQ(rows[5].name, "only_b");
  EXPECT_FALSE(rows[5].pass);
  EXPECT_EQ(rows[5].problem, "missing in the first set");
}

TEST(CompareArrays, AppliesBothThresholds) {
  const std::vector<Array> a = {f32("x", {3}, {1, 2, 3})};
  const std::vector<Array> b = {
      f32("x", {3}, {2, 4, 6})}; // cosine 1, euclidean 1/3
  EXPECT_TRUE(compareArrays(a, b, 0.99, 0.3)[0].pass);
  EXPECT_FALSE(compareArrays(a, b, 0.99, 0.5)[0].pass);
}

} // namespace
