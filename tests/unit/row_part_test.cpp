// H slices of a layer group (LayerGroup/Slicing.h, rowPart): equal parts,
// or tapered ones whose first and last are half the others. Either way the
// parts cover the rows once, in order.
#include "kiln/LayerGroup/Slicing.h"

#include <gtest/gtest.h>

using namespace kiln::lg;

namespace {

std::vector<int64_t> sizes(int64_t extent, int64_t parts, bool tapered) {
  std::vector<int64_t> out;
  int64_t next = 0;
  for (int64_t i = 0; i < parts; ++i) {
    Range r = rowPart(i, extent, parts, tapered);
    EXPECT_EQ(r.idx, next) << "part " << i << " of " << parts << " over " << extent;
    next = r.end();
    out.push_back(r.len);
  }
  EXPECT_EQ(next, extent);
  return out;
}

TEST(RowPart, EqualParts) {
  EXPECT_EQ(sizes(128, 4, false), (std::vector<int64_t>{32, 32, 32, 32}));
  EXPECT_EQ(sizes(10, 3, false), (std::vector<int64_t>{3, 3, 4}));
}

TEST(RowPart, TaperedEndsAreHalf) {
  // 8 whole shares of 16 rows; the ends take half a share each.
  EXPECT_EQ(sizes(128, 9, true), (std::vector<int64_t>{8, 16, 16, 16, 16, 16, 16, 16, 8}));
  EXPECT_EQ(sizes(160, 5, true), (std::vector<int64_t>{20, 40, 40, 40, 20}));
}

TEST(RowPart, TaperingNeedsThreeParts) {
  EXPECT_EQ(sizes(64, 2, true), sizes(64, 2, false));
  EXPECT_EQ(sizes(64, 1, true), (std::vector<int64_t>{64}));
}

TEST(RowPart, CoversEveryExtent) {
  for (int64_t extent = 1; extent <= 70; ++extent)
    for (int64_t parts = 1; parts <= 12; ++parts)
      for (bool tapered : {false, true}) {
        std::vector<int64_t> s = sizes(extent, parts, tapered);
        if (tapered && parts >= 3 && extent >= 2 * (parts - 1)) {
          // Each end at most a middle part.
          EXPECT_LE(s.front(), s[1]);
          EXPECT_LE(s.back(), s[s.size() - 2]);
        }
      }
}

} // namespace
