// SPDX-License-Identifier: BSD-3-Clause
// PROGRAM.json parsing: the example programs parse, and bad programs fail with one line naming file, step, field.
#include <gtest/gtest.h>

#include <string>

#include "archive_check.hpp"
#include "p3s/error.hpp"
#include "p3s/synth/generator.hpp"
#include "p3s/synth/program.hpp"

namespace p3s::synth {
namespace {

/// The message of the InputError parsing `text` throws ("" if it does not throw).
std::string parse_error(const std::string& text) {
  try {
    (void)parse_program(text, "bad.json");
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << "not one line: " << m;
    return m;
  }
  ADD_FAILURE() << "no error for " << text;
  return "";
}

TEST(Program, ExamplesParseAndWriteEvents) {
  for (const char* name : {"nested", "alternating", "compute_first", "irregular", "noisy", "stencil"}) {
    SCOPED_TRACE(name);
    const Program p = load_program(testing::programs_dir() / (std::string(name) + ".json"));
    EXPECT_FALSE(p.comment.empty()) << "each example describes its planted phases";
    EXPECT_GT(count_events(p, 8), 1000u);
  }
}

TEST(Program, UnknownOpNamesTheStepAndTheKnownOps) {
  const std::string m = parse_error(R"({"body": [{"op": "loop", "count": 2, "body": [{"op": "halox"}]}]})");
  EXPECT_NE(m.find("program 'bad.json', body[0].body[0]: unknown op \"halox\" (known: compute, loop, halo"),
            std::string::npos)
      << m;
}

TEST(Program, MissingFieldIsNamed) {
  const std::string m = parse_error(R"({"body": [{"op": "compute", "ns": 5}, {"op": "halo", "offsets": [1, -1]}]})");
  EXPECT_NE(m.find("body[1] (halo): missing field \"bytes\""), std::string::npos) << m;
  EXPECT_NE(parse_error(R"({"ranks": 4})").find("missing field \"body\""), std::string::npos);
  EXPECT_NE(parse_error(R"({"body": [{"count": 3}]})").find("body[0]: missing field \"op\""), std::string::npos);
}

TEST(Program, UnknownFieldIsRejected) {
  const std::string m = parse_error(R"({"body": [{"op": "allreduce", "bytes": 8, "byte": 9}]})");
  EXPECT_NE(m.find("body[0] (allreduce): unknown field \"byte\""), std::string::npos) << m;
}

TEST(Program, BadValuesAreExplained) {
  EXPECT_NE(parse_error(R"({"body": [{"op": "compute", "ns": -1}]})").find("\"ns\" must be a number >= 0"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"body": [{"op": "loop", "count": [], "body": []}]})").find("empty list"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"body": [{"op": "halo", "offsets": [1], "bytes": [1, 2]}]})")
                .find("lists 2 values for 1 offsets"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"body": [{"op": "sendrecv", "bytes": 8}]})").find("exactly one of \"offset\" and \"xor\""),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"body": [{"op": "barrier", "comm": "rows"}]})").find("names no communicator"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"body": [{"op": "compute", "ns": 1, "noise": {"rel": 0.1, "dist": "cauchy"}}]})")
                .find("\"dist\" must be one of uniform, normal"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"body": [)").find("not valid JSON"), std::string::npos);
}

TEST(Program, MissingFileIsAnInputError) {
  EXPECT_THROW((void)load_program(testing::scratch_dir("missing") / "none.json"), InputError);
}

TEST(Program, GridMustHoldTheRanks) {
  const Program p = parse_program(R"({"grid": [2, 2], "body": [{"op": "barrier"}]})", "grid.json");
  EXPECT_EQ(process_grid(p, 4), (std::array<int, 2>{2, 2}));
  EXPECT_THROW((void)process_grid(p, 6), InputError);
  const Program q = parse_program(R"({"body": [{"op": "barrier"}]})", "free.json");
  EXPECT_EQ(process_grid(q, 8), (std::array<int, 2>{4, 2}));
  EXPECT_EQ(process_grid(q, 16), (std::array<int, 2>{4, 4}));
  EXPECT_EQ(process_grid(q, 7), (std::array<int, 2>{7, 1}));
}

TEST(Program, RootOutsideTheCommunicatorIsAnInputError) {
  const Program p = parse_program(R"({"body": [{"op": "bcast", "bytes": 8, "root": 5}]})", "root.json");
  EXPECT_NO_THROW((void)count_events(p, 8));
  EXPECT_THROW((void)count_events(p, 4), InputError);
}

}  // namespace
}  // namespace p3s::synth
