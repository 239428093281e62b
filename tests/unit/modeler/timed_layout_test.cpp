// SPDX-License-Identifier: BSD-3-Clause
// A rank's instance laid out in a replayed instance time: bursts take their predicted time, waiting calls take what
// is left, starts take a nominal time, and bursts longer than the instance are shortened.
#include <gtest/gtest.h>

#include "p3s/modeler/timed_trace.hpp"

namespace p3s::modeler {
namespace {

PredictedCall call(mpi::Function f, double burst_ns) {
  PredictedCall c;
  c.function = f;
  c.call = std::string(mpi::name(f));
  c.burst_ns = burst_ns;
  return c;
}

/// Irecv, Isend (bursts 1 and 2 us before them), Waitall after a 10 us burst, then a 3 us tail.
PredictedRank exchange() {
  PredictedRank r;
  r.calls = {call(mpi::Function::MPI_Irecv, 1000), call(mpi::Function::MPI_Isend, 2000),
             call(mpi::Function::MPI_Waitall, 10000)};
  r.tail_ns = 3000;
  return r;
}

TEST(TimedLayout, WaitingCallsTakeTheMpiTime) {
  const InstanceLayout l = lay_out(exchange(), 50000);
  ASSERT_EQ(l.calls.size(), 3U);
  EXPECT_FALSE(l.squeezed);
  EXPECT_DOUBLE_EQ(l.calls[0].start_ns, 1000);
  EXPECT_DOUBLE_EQ(l.calls[0].duration_ns, kNominalCallNs);
  EXPECT_DOUBLE_EQ(l.calls[1].start_ns, 1000 + kNominalCallNs + 2000);
  EXPECT_DOUBLE_EQ(l.calls[1].duration_ns, kNominalCallNs);
  EXPECT_DOUBLE_EQ(l.calls[2].start_ns, 13000 + 2 * kNominalCallNs);
  // 50 us - 16 us of bursts - 3 nominal calls: the rest is the Waitall's.
  EXPECT_DOUBLE_EQ(l.calls[2].duration_ns, 50000 - 16000 - 2 * kNominalCallNs);
  EXPECT_DOUBLE_EQ(l.calls[2].start_ns + l.calls[2].duration_ns + l.tail_ns, 50000);
  EXPECT_DOUBLE_EQ(l.tail_ns, 3000);
}

TEST(TimedLayout, AllCallsShareWhereNoneWaits) {
  PredictedRank r;
  r.calls = {call(mpi::Function::MPI_Isend, 0), call(mpi::Function::MPI_Irecv, 0)};
  const InstanceLayout l = lay_out(r, 10000);
  EXPECT_DOUBLE_EQ(l.calls[0].duration_ns, 5000);
  EXPECT_DOUBLE_EQ(l.calls[1].duration_ns, 5000);
  EXPECT_DOUBLE_EQ(l.tail_ns, 0);
}

TEST(TimedLayout, BurstsLongerThanTheInstanceAreShortened) {
  const InstanceLayout l = lay_out(exchange(), 8000);
  EXPECT_TRUE(l.squeezed);
  const double end = l.calls[2].start_ns + l.calls[2].duration_ns + l.tail_ns;
  EXPECT_NEAR(end, 8000, 1e-6);
  for (std::size_t i = 1; i < l.calls.size(); ++i) {
    EXPECT_GE(l.calls[i].start_ns, l.calls[i - 1].start_ns + l.calls[i - 1].duration_ns);
  }
  EXPECT_GT(l.calls[0].duration_ns, 0);
  // The bursts keep their proportions: the tail is 3/16 of the compute.
  EXPECT_NEAR(l.tail_ns / (l.calls[0].start_ns * 16), 3.0 / 16, 1e-9);
}

TEST(TimedLayout, UntimedBurstsTakeNothing) {
  PredictedRank r;
  r.calls = {call(mpi::Function::MPI_Barrier, 0)};
  r.calls[0].burst_ns.reset();
  const InstanceLayout l = lay_out(r, 4000);
  EXPECT_DOUBLE_EQ(l.calls[0].start_ns, 0);
  EXPECT_DOUBLE_EQ(l.calls[0].duration_ns, 4000);
}

}  // namespace
}  // namespace p3s::modeler
