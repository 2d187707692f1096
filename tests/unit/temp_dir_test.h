// A gtest fixture with a fresh directory per test: <tmp>/kiln_<suite>.XXXXXX,
// removed after the test. Fixtures that need more set-up derive from it and
// call TempDirTest::SetUp() first (and TempDirTest::TearDown() last).
#ifndef KILN_TESTS_UNIT_TEMP_DIR_TEST_H
#define KILN_TESTS_UNIT_TEMP_DIR_TEST_H

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace kiln::test {

class TempDirTest : public ::testing::Test {
protected:
  void SetUp() override {
    const ::testing::TestInfo *info =
        ::testing::UnitTest::GetInstance()->current_test_info();
    std::string pattern = (std::filesystem::temp_directory_path() /
                           (std::string("kiln_") + info->test_suite_name() + ".XXXXXX"))
                              .string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (!dir_.empty())
      std::filesystem::remove_all(dir_);
  }

  /// `name` inside the test's directory.
  std::string path(const std::string &name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

} // namespace kiln::test

#endif
