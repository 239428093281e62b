// SPDX-License-Identifier: BSD-3-Clause
// Counter detection: the fallback to thread CPU time is explicit, and forced PAPI reports why it failed.
#include "p3s/interpose/counters.hpp"

#include <gtest/gtest.h>

#include "p3s/trace/schema.hpp"

namespace p3s::interpose {
namespace {

TEST(Counters, NoneRecordsNothing) {
  const CounterProbe p = probe_counters(CountersRequest::None);
  EXPECT_EQ(p.setup.mode, CounterMode::None);
  EXPECT_EQ(p.setup.count, 0);
  EXPECT_STREQ(work_metric_name(p.setup), trace::metric::kNone);
}

TEST(Counters, CpuTimeIsMonotonicAndCountsWork) {
  const CounterProbe p = probe_counters(CountersRequest::CpuTime);
  ASSERT_EQ(p.setup.mode, CounterMode::CpuTime);
  ASSERT_EQ(p.setup.count, 1);
  EXPECT_EQ(p.setup.names[0], trace::metric::kCpuTime);
  CounterReader r;
  ASSERT_TRUE(r.start(p.setup));
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  r.read(&a);
  volatile double x = 1.0;
  for (int i = 0; i < 2000000; ++i) x = x * 1.0000001 + 1e-9;
  r.read(&b);
  EXPECT_GT(b, a);
  r.stop();
}

TEST(Counters, PapiEitherWorksOrExplainsTheFallback) {
  // Machines without hardware counters (VMs) must fall back to CPU time and say why; machines with them
  // must count instructions first.
  const CounterProbe p = probe_counters(CountersRequest::Papi);
  if (p.error.empty()) {
    EXPECT_EQ(p.setup.mode, CounterMode::Papi);
    EXPECT_EQ(p.setup.names[0], trace::metric::kInstructions);
    EXPECT_STREQ(work_metric_name(p.setup), trace::metric::kInstructions);
  } else {
    EXPECT_EQ(p.setup.mode, CounterMode::CpuTime);
    EXPECT_NE(p.setup.note.find("thread CPU time"), std::string::npos) << p.setup.note;
  }
  const CounterProbe a = probe_counters(CountersRequest::Auto);
  EXPECT_TRUE(a.error.empty());
  EXPECT_EQ(a.setup.mode, p.setup.mode);
}

}  // namespace
}  // namespace p3s::interpose
