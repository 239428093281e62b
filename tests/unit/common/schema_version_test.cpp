// SPDX-License-Identifier: BSD-3-Clause
// One wording for a file whose schema version this p3s does not read: which file, its version, the versions read,
// whether it is older or from a later p3s, and what to do.
#include "p3s/schema_version.hpp"

#include <gtest/gtest.h>

#include <string>

namespace p3s {
namespace {

constexpr SchemaVersions kModel{"model", 2, 3, "re-run `p3s model` on its signatures"};

std::string refusal(const nlohmann::json& j, const SchemaVersions& v) {
  try {
    (void)checked_schema_version(j, "app.model", v);
  } catch (const InputError& e) {
    return e.what();
  }
  return {};
}

TEST(SchemaVersion, VersionsInTheRangeAreRead) {
  EXPECT_EQ(checked_schema_version({{"schema_version", 2}}, "app.model", kModel), 2);
  EXPECT_EQ(checked_schema_version({{"schema_version", 3}}, "app.model", kModel), 3);
}

TEST(SchemaVersion, ALaterVersionNamesTheLaterP3s) {
  EXPECT_EQ(refusal({{"schema_version", 9}}, kModel),
            "model 'app.model' has schema version 9, written by a later p3s (this one reads versions 2 to 3); "
            "re-run `p3s model` on its signatures");
}

TEST(SchemaVersion, AnOlderVersionSaysSo) {
  EXPECT_EQ(refusal({{"schema_version", 1}}, SchemaVersions{"fit report", 1, 1, "re-run `p3s model`"}), "");
  EXPECT_EQ(refusal({{"schema_version", 0}}, SchemaVersions{"fit report", 1, 1, "re-run `p3s model`"}),
            "fit report 'app.model' has schema version 0, older than this p3s reads (version 1); re-run `p3s model`");
}

TEST(SchemaVersion, AMissingOrOtherTypedVersionIsAJsonError) {
  EXPECT_THROW((void)checked_schema_version({{"version", 3}}, "app.model", kModel), nlohmann::json::exception);
  EXPECT_THROW((void)checked_schema_version({{"schema_version", "3"}}, "app.model", kModel), nlohmann::json::exception);
}

}  // namespace
}  // namespace p3s
