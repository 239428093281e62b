// SPDX-License-Identifier: BSD-3-Clause
// The plan of a range replay: traffic between ranges from ranks' predicted calls, and the steps that measure every
// range once beside the range it talks with most.
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "p3s/error.hpp"
#include "p3s/replay/ranges.hpp"

namespace p3s::replay {
namespace {

modeler::PredictedAction message(mpi::ActionKind kind, std::int64_t peer, double bytes) {
  modeler::PredictedAction a;
  a.kind = kind;
  a.peer = peer;
  a.bytes = bytes;
  return a;
}

/// n ranks, one phase of weight `weight`, each rank sending `bytes` to each of peers(r) and receiving from each.
RangeTraffic traffic(std::int64_t n, std::int64_t c, std::int64_t weight,
                     const std::function<std::vector<std::int64_t>(std::int64_t)>& peers, double bytes = 8) {
  RangeTraffic t = empty_traffic(n, c, {{0, weight}});
  for (std::int64_t r = 0; r < n; ++r) {
    modeler::PredictedRank rank;
    rank.rank = r;
    for (const std::int64_t p : peers(r)) {
      modeler::PredictedCall call;
      call.actions = {message(mpi::ActionKind::Send, p, bytes), message(mpi::ActionKind::Recv, p, bytes)};
      rank.calls.push_back(call);
    }
    add_rank(t, 0, rank);
  }
  return t;
}

std::vector<std::int64_t> ring(std::int64_t r, std::int64_t n) { return {(r + 1) % n, (r + n - 1) % n}; }

/// Rank r's neighbours on a line of n ranks (no wrap).
std::vector<std::int64_t> line(std::int64_t r, std::int64_t n) {
  std::vector<std::int64_t> p;
  if (r > 0) p.push_back(r - 1);
  if (r < n - 1) p.push_back(r + 1);
  return p;
}

/// Every range is timed in exactly one step.
void expect_each_timed_once(const RangeSchedule& s) {
  std::vector<int> timed(static_cast<std::size_t>(s.ranges), 0);
  for (const RangeStep& st : s.steps) {
    if (st.first_timed) ++timed[static_cast<std::size_t>(st.first)];
    if (st.second >= 0 && st.second_timed) ++timed[static_cast<std::size_t>(st.second)];
  }
  for (std::size_t k = 0; k < timed.size(); ++k) EXPECT_EQ(timed[k], 1) << "range " << k;
}

TEST(RangeTraffic, CountsEachMessageOnceAtItsSender) {
  const RangeTraffic t = traffic(32, 4, 10, [](std::int64_t r) { return ring(r, 32); });
  EXPECT_EQ(t.ranges, 8);
  // Ranges 0 and 1 share one boundary: rank 3 -> 4 and rank 4 -> 3, each instance, 10 instances.
  EXPECT_DOUBLE_EQ(t.messages_between(0, 1), 20.0);
  EXPECT_DOUBLE_EQ(t.messages_between(0, 2), 0.0);
  // Inside range 0: 3 -> 2 ... each of the 3 inner links both ways, 6 messages per instance.
  EXPECT_DOUBLE_EQ(t.messages_between(0, 0), 60.0);
  EXPECT_EQ(t.peer_ranges[0], (std::vector<std::int64_t>{7}));  // rank 0's left neighbour is rank 31
  EXPECT_EQ(t.peer_ranges[3], (std::vector<std::int64_t>{1}));
  EXPECT_TRUE(t.peer_ranges[1].empty());
}

TEST(RangeSchedule, RingPairsNeighbouringRangesAndGivesTheirEndsBlackHoles) {
  const RangeSchedule s = schedule_ranges(traffic(32, 4, 10, [](std::int64_t r) { return ring(r, 32); }));
  ASSERT_EQ(s.steps.size(), 4U);
  expect_each_timed_once(s);
  for (const RangeStep& st : s.steps) {
    EXPECT_EQ((st.second - st.first + 8) % 8 == 1 || (st.first - st.second + 8) % 8 == 1, true)
        << st.first << " + " << st.second << " do not talk";
    EXPECT_EQ(st.black_holes, 2);  // the first rank of one range and the last of the other
    EXPECT_DOUBLE_EQ(st.between_messages, 20.0);
    EXPECT_DOUBLE_EQ(st.external_messages, 40.0);  // two outer boundaries, both ways, 10 instances
    // The full run has 8 boundaries x 2 messages between ranges per instance; the step makes 6 of them.
    ASSERT_EQ(st.noise_messages.size(), 1U);
    EXPECT_DOUBLE_EQ(st.noise_messages[0], 10.0);
    EXPECT_DOUBLE_EQ(st.noise_bytes[0], 8.0);
  }
  EXPECT_EQ(s.black_holes, 2);
  EXPECT_EQ(s.noise_ranks, 2);
  EXPECT_EQ(s.job_size(), 8 + 2 + 2);
}

TEST(RangeSchedule, GridRowsPairWithTheRowTheyExchangeWith) {
  // An 8 x 4 torus, a row of 4 per range: every rank talks with the rows above and below.
  const auto torus = [](std::int64_t r) {
    const std::int64_t row = r / 4;
    const std::int64_t col = r % 4;
    return std::vector<std::int64_t>{row * 4 + (col + 1) % 4, row * 4 + (col + 3) % 4, ((row + 1) % 8) * 4 + col,
                                     ((row + 7) % 8) * 4 + col};
  };
  const RangeSchedule s = schedule_ranges(traffic(32, 4, 1, torus));
  ASSERT_EQ(s.steps.size(), 4U);
  expect_each_timed_once(s);
  for (const RangeStep& st : s.steps) {
    EXPECT_EQ(std::abs(st.second - st.first) == 1 || std::abs(st.second - st.first) == 7, true);
    EXPECT_EQ(st.black_holes, 8);  // every rank of both rows has a row outside the step beside it
  }
}

TEST(RangeSchedule, AnOddRangeReplaysAMeasuredPartnerUntimed) {
  // 3 ranges in a line: 0 - 1 - 2, where 1 talks with both.
  const RangeSchedule s = schedule_ranges(traffic(12, 4, 1, [](std::int64_t r) { return line(r, 12); }));
  ASSERT_EQ(s.steps.size(), 2U);
  expect_each_timed_once(s);
  const RangeStep& last = s.steps.back();
  EXPECT_EQ(last.first_timed != last.second_timed, true);  // one of the two was measured in the first step
  EXPECT_GT(last.between_messages, 0.0);                   // and it is the partner the range talks with
}

TEST(RangeSchedule, RangesAlongALinePairInOrder) {
  // 6 ranges in a line (a pipeline's stages): (0, 1), (2, 3), (4, 5), every range timed, each step after the one
  // that measured the range its black holes stand in for first.
  const RangeSchedule s = schedule_ranges(traffic(24, 4, 1, [](std::int64_t r) { return line(r, 24); }));
  ASSERT_EQ(s.steps.size(), 3U);
  for (std::size_t k = 0; k < s.steps.size(); ++k) {
    EXPECT_EQ(s.steps[k].first, static_cast<std::int64_t>(2 * k));
    EXPECT_EQ(s.steps[k].second, static_cast<std::int64_t>(2 * k + 1));
    EXPECT_TRUE(s.steps[k].first_timed && s.steps[k].second_timed);
  }
}

TEST(RangeSchedule, SilentRangesPairInOrderAndOneRangeIsOneStep) {
  const RangeSchedule quiet =
      schedule_ranges(traffic(16, 4, 1, [](std::int64_t) { return std::vector<std::int64_t>{}; }));
  ASSERT_EQ(quiet.steps.size(), 2U);
  expect_each_timed_once(quiet);
  EXPECT_EQ(quiet.noise_ranks, 0);
  EXPECT_EQ(quiet.black_holes, 0);
  const RangeSchedule one = schedule_ranges(traffic(4, 4, 1, [](std::int64_t r) { return ring(r, 4); }));
  ASSERT_EQ(one.steps.size(), 1U);
  EXPECT_EQ(one.steps[0].second, -1);
  EXPECT_EQ(one.job_size(), 4);
}

TEST(RangeSchedule, WideCollectivesAreNamedAsApproximated) {
  RangeTraffic t = traffic(32, 4, 1, [](std::int64_t r) { return ring(r, 32); });
  t.phases[0].widest_collective = 32;
  const RangeSchedule s = schedule_ranges(t);
  ASSERT_EQ(s.notes.size(), 1U);
  EXPECT_NE(s.notes[0].find("over up to 32 ranks"), std::string::npos);
  EXPECT_NE(schedule_summary(s).find("job          8 measured + 2 black holes + 2 noise = 12 ranks"),
            std::string::npos);
  EXPECT_NE(schedule_json(s).find("\"job_size\": 12"), std::string::npos);
}

TEST(RangeTraffic, RefusesARangeSizeOutsideTheRanks) {
  EXPECT_THROW((void)empty_traffic(16, 0, {}), InputError);
  EXPECT_THROW((void)empty_traffic(16, 17, {}), InputError);
}

}  // namespace
}  // namespace p3s::replay
