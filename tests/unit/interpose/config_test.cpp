// SPDX-License-Identifier: BSD-3-Clause
// The P3S_* variable table: parsing, invalid values, unknown names, generated documentation.
#include "p3s/interpose/config.hpp"

#include <gtest/gtest.h>

namespace p3s::interpose {
namespace {

ParsedConfig parse(std::initializer_list<const char*> env) {
  std::vector<const char*> v(env);
  return parse_config(v);
}

TEST(Config, DefaultsWithoutVariables) {
  const ParsedConfig p = parse({"HOME=/root", "PATH=/bin"});
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(p.config.trace_dir, "p3s-trace");
  EXPECT_EQ(p.config.counters, CountersRequest::Auto);
  EXPECT_EQ(p.config.buffer_mb, 8u);
  EXPECT_TRUE(p.config.enabled);
  EXPECT_FALSE(p.config.callsite);
}

TEST(Config, ParsesEveryVariable) {
  const ParsedConfig p = parse({"P3S_TRACE_DIR=/tmp/x", "P3S_COUNTERS=cputime", "P3S_CALLSITE=1", "P3S_BUFFER_MB=2",
                                "P3S_KEEP_RAW=yes", "P3S_FLUSH_SECONDS=0", "P3S_CLOCK_SYNC=always", "P3S_ENABLE=0",
                                "P3S_VERBOSE=on", "P3S_COMMAND=mpirun -np 2 ./a", "P3S_CPUTIME_WINDOW_US=0"});
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(p.config.trace_dir, "/tmp/x");
  EXPECT_EQ(p.config.counters, CountersRequest::CpuTime);
  EXPECT_TRUE(p.config.callsite);
  EXPECT_EQ(p.config.buffer_mb, 2u);
  EXPECT_TRUE(p.config.keep_raw);
  EXPECT_EQ(p.config.flush_seconds, 0u);
  EXPECT_EQ(p.config.clock_sync, ClockSync::Always);
  EXPECT_FALSE(p.config.enabled);
  EXPECT_TRUE(p.config.verbose);
  EXPECT_EQ(p.config.command, "mpirun -np 2 ./a");
  EXPECT_EQ(p.config.cputime_window_us, 0u);
}

TEST(Config, CpuTimeWindowIsBounded) {
  EXPECT_EQ(parse({}).config.cputime_window_us, kDefaultCpuWindowUs);
  const ParsedConfig p = parse({"P3S_CPUTIME_WINDOW_US=1001"});
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_EQ(p.config.cputime_window_us, kDefaultCpuWindowUs);
  EXPECT_EQ(parse({"P3S_CPUTIME_WINDOW_US=1000"}).config.cputime_window_us, 1000u);
}

TEST(Config, InvalidValueKeepsDefaultAndWarnsOnce) {
  const ParsedConfig p = parse({"P3S_BUFFER_MB=0", "P3S_COUNTERS=fast"});
  ASSERT_EQ(p.warnings.size(), 2u);
  EXPECT_EQ(p.config.buffer_mb, 8u);
  EXPECT_EQ(p.config.counters, CountersRequest::Auto);
  EXPECT_NE(p.warnings[0].find("P3S_BUFFER_MB='0'"), std::string::npos);
  EXPECT_NE(p.warnings[1].find("auto|papi|cputime|none"), std::string::npos);
}

TEST(Config, AnEmptyTraceDirectorySaysWhatItTakes) {
  const ParsedConfig p = parse({"P3S_TRACE_DIR="});
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_EQ(p.warnings[0].find("(allowed: )"), std::string::npos) << p.warnings[0];
  EXPECT_NE(p.warnings[0].find("(allowed: a non-empty string)"), std::string::npos) << p.warnings[0];
}

TEST(Config, RejectsTrailingGarbageInNumbers) {
  const ParsedConfig p = parse({"P3S_BUFFER_MB=16MB"});
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_EQ(p.config.buffer_mb, 8u);
}

TEST(Config, UnknownVariableGetsDidYouMean) {
  const ParsedConfig p = parse({"P3S_COUNTER=papi", "P3S_FROBNICATE=1"});
  ASSERT_EQ(p.warnings.size(), 2u);
  EXPECT_NE(p.warnings[0].find("did you mean P3S_COUNTERS?"), std::string::npos) << p.warnings[0];
  EXPECT_EQ(p.warnings[1].find("did you mean"), std::string::npos) << p.warnings[1];
}

TEST(Config, DocumentationListsEveryVariable) {
  const std::string md = env_table_markdown();
  const std::string text = env_table_text();
  for (const EnvVar& v : env_table()) {
    EXPECT_NE(md.find(std::string("`") + v.name + "`"), std::string::npos) << v.name;
    EXPECT_NE(text.find(v.name), std::string::npos) << v.name;
  }
}

}  // namespace
}  // namespace p3s::interpose
