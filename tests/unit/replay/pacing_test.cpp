// SPDX-License-Identifier: BSD-3-Clause
// The send times that pace a range replay's black holes: what is recorded, and when a receive may complete.
#include "pacing.hpp"

#include <gtest/gtest.h>

namespace p3s::replay::detail {
namespace {

TEST(Pacing, SendsBetweenRangesAreRecordedAsTheirMeanTimeInTheInstance) {
  Pacing sender(4);  // ranges of 4: ranks 0-3, 4-7, ...
  for (const std::int64_t start : {1000, 5000}) {
    sender.begin_instance(3, 7, start, true);
    sender.sent(2, 1, start + 10);  // within the range: never answered by a black hole
    sender.sent(4, 1, start + (start == 1000 ? 100 : 300));
    sender.sent(4, 1, start + 500);  // the second message with that tag
    sender.sent(4, 2, start + 600);
  }
  sender.begin_instance(3, 7, 9000, false);  // an untimed instance records nothing
  sender.sent(4, 1, 9000 + 5000);
  const std::vector<SendTime> times = sender.take_recorded();
  ASSERT_EQ(times.size(), 3U);
  EXPECT_TRUE(sender.take_recorded().empty());

  Pacing receiver(4);
  receiver.learn(times);
  EXPECT_EQ(receiver.known(), 3U);
  receiver.begin_instance(4, 7, 20000, true);
  EXPECT_EQ(receiver.due(3, 2), 20600);
  EXPECT_EQ(receiver.due(3, 1), 20200);  // the mean of 100 and 300
  EXPECT_EQ(receiver.due(3, 1), 20500);
  EXPECT_EQ(receiver.due(3, 1), 0);  // a third message was never sent: at once
  EXPECT_EQ(receiver.due(5, 1), 0);  // nothing known of that sender
  receiver.begin_instance(4, 8, 20000, true);
  EXPECT_EQ(receiver.due(3, 2), 0);  // another phase
  receiver.begin_instance(4, 7, 30000, true);
  EXPECT_EQ(receiver.due(3, 1), 30200);  // each instance numbers its messages from the first again
}

TEST(Pacing, ALaterMeasurementReplacesAnEarlierOne) {
  Pacing p(2);
  p.learn({SendTime{0, 2, 100.0, 0, 5, 0, 0}});
  p.learn({SendTime{0, 2, 250.0, 0, 5, 0, 0}});
  p.begin_instance(2, 0, 1000, false);
  EXPECT_EQ(p.due(0, 5), 1250);
}

}  // namespace
}  // namespace p3s::replay::detail
