// SPDX-License-Identifier: BSD-3-Clause
// The phase order as files write it: loops folded, read back run for run; bad orders refused.
#include "p3s/analyzer/phase_order.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "p3s/error.hpp"

namespace p3s::analyzer {
namespace {

using nlohmann::json;

TEST(PhaseOrder, ADoubleLoopIsWrittenAsNestedLoops) {
  // Set-up, then 15 x (a head, 25 x (step, 2 dot products), a tail), then the end.
  std::vector<PhaseRunEntry> order{{0, 1}};
  for (int outer = 0; outer < 15; ++outer) {
    order.push_back({3, 1});
    for (int inner = 0; inner < 25; ++inner) {
      order.push_back({1, 1});
      order.push_back({2, 2});
    }
    order.push_back({4, 1});
  }
  order.push_back({5, 1});
  const json j = order_json(order);
  EXPECT_EQ(j, json::parse(R"([[0, 1], {"repeat": 15, "runs": [[3, 1], {"repeat": 25, "runs": [[1, 1], [2, 2]]},
                                [4, 1]]}, [5, 1]])"));
  EXPECT_EQ(order_from_json(j), order);
}

TEST(PhaseOrder, AnyOrderReadsBackAsWritten) {
  std::mt19937 random(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<PhaseRunEntry> order;
    const int length = static_cast<int>(random() % 300);
    for (int i = 0; i < length; ++i) {
      order.push_back({static_cast<std::uint32_t>(random() % 3), 1 + random() % 2});
    }
    EXPECT_EQ(order_from_json(order_json(order)), order) << "trial " << trial;
  }
}

TEST(PhaseOrder, PlainRunsAreRead) {
  EXPECT_EQ(order_from_json(json::parse("[[0, 1], [1, 300], [2, 1]]")),
            (std::vector<PhaseRunEntry>{{0, 1}, {1, 300}, {2, 1}}));
}

TEST(PhaseOrder, BadOrdersAreRefused) {
  for (const char* bad : {R"({"repeat": 2})", R"([[0]])", R"([[0, 0]])", R"([[0, 1.5]])", R"([[-1, 1]])",
                          R"([{"repeat": 0, "runs": [[0, 1]]}])", R"([{"repeat": 2, "runs": []}])",
                          R"([{"repeat": 1000000000, "runs": [[0, 1], [1, 1]]}])", R"([{"runs": [[0, 1]]}])",
                          R"([{"repeat": 65536, "runs": [{"repeat": 65536, "runs": [[0, 1]]}]}])"}) {
    EXPECT_THROW((void)order_from_json(json::parse(bad)), InputError) << bad;
  }
}

TEST(PhaseOrder, AnOrderNestedDeeperThanAnyRunIsRefusedWithoutRecursingThroughIt) {
  // Loops nested 100,000 deep, and a run entry that is an array nested as deep: the reader used to recurse once per
  // level (and its message printed the entry, recursing again) until the stack overflowed.
  const int depth = 100000;
  std::string loops;
  for (int i = 0; i < depth; ++i) loops += R"({"repeat": 2, "runs": [)";
  loops += "[0, 1]";
  for (int i = 0; i < depth; ++i) loops += "]}";
  EXPECT_THROW((void)order_from_json(json::parse("[" + loops + "]")), InputError);
  const std::string entry = "[" + std::string(depth, '[') + std::string(depth, ']') + "]";
  try {
    (void)order_from_json(json::parse(entry));
    ADD_FAILURE() << "a nested entry was read";
  } catch (const InputError& e) {
    EXPECT_LT(std::string(e.what()).size(), 200U) << e.what();
  }
}

}  // namespace
}  // namespace p3s::analyzer
