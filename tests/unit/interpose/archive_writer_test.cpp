// SPDX-License-Identifier: BSD-3-Clause
// The one sequence that fills an OTF2 archive: every step runs in order, a failing or throwing part is reported
// with its message, and no exception leaves it.
#include "p3s/interpose/archive_writer.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <vector>

namespace p3s::interpose {
namespace {

std::filesystem::path fresh_dir(const std::string& name) {
  const std::filesystem::path d = std::filesystem::path(P3S_TEST_TMP) / "archive_writer" / name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

ArchivePtr open_serial(const std::filesystem::path& dir, std::string& error) {
  ArchivePtr a = create_archive(dir.string(), error);
  if (a && !try_otf2(OTF2_Archive_SetSerialCollectiveCallbacks(a.get()), "serial callbacks", error)) return nullptr;
  return a;
}

TEST(ArchiveWriter, FillsInOrderAndCallsEveryPart) {
  std::string error;
  const std::filesystem::path dir = fresh_dir("order");
  ArchivePtr a = open_serial(dir, error);
  ASSERT_TRUE(a) << error;
  std::vector<std::string> steps;
  ArchiveParts parts;
  parts.events = [&](OTF2_Archive* archive, std::vector<std::uint64_t>& locations, std::string& err) {
    steps.emplace_back("events");
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive, 0);
    locations.push_back(0);
    return w != nullptr && try_otf2(OTF2_Archive_CloseEvtWriter(archive, w), "closing", err);
  };
  parts.global_definitions = [&](OTF2_Archive* archive, std::string& err) {
    steps.emplace_back("definitions");
    OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive);
    return g != nullptr && try_otf2(OTF2_Archive_CloseGlobalDefWriter(archive, g), "closing definitions", err);
  };
  EXPECT_TRUE(write_archive(std::move(a), parts, error)) << error;
  EXPECT_EQ(steps, (std::vector<std::string>{"events", "definitions"}));
  EXPECT_TRUE(std::filesystem::exists(dir / "traces.otf2"));
  EXPECT_TRUE(std::filesystem::exists(dir / "traces" / "0.def"));  // the location's local definitions
}

TEST(ArchiveWriter, AThrowingPartFailsWithItsMessageAndTheLaterStepsStillRun) {
  std::string error;
  ArchivePtr a = open_serial(fresh_dir("throws"), error);
  ASSERT_TRUE(a) << error;
  bool definitions_called = false;
  ArchiveParts parts;
  parts.events = [](OTF2_Archive*, std::vector<std::uint64_t>&, std::string&) -> bool {
    throw std::runtime_error("the simulation disagreed with its count");
  };
  parts.global_definitions = [&](OTF2_Archive* archive, std::string& err) {
    definitions_called = true;  // under MPI callbacks this step may be collective: it must not be skipped
    OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive);
    return g != nullptr && try_otf2(OTF2_Archive_CloseGlobalDefWriter(archive, g), "closing definitions", err);
  };
  EXPECT_FALSE(write_archive(std::move(a), parts, error));
  EXPECT_EQ(error, "the simulation disagreed with its count");
  EXPECT_TRUE(definitions_called);
}

TEST(ArchiveWriter, KeepsTheFirstFailure) {
  std::string error;
  ArchivePtr a = open_serial(fresh_dir("first"), error);
  ASSERT_TRUE(a) << error;
  ArchiveParts parts;
  parts.events = [](OTF2_Archive*, std::vector<std::uint64_t>&, std::string& err) {
    err = "rank 3's log is torn";
    return false;
  };
  parts.global_definitions = [](OTF2_Archive*, std::string& err) {
    if (err.empty()) err = "a later failure";
    return false;
  };
  EXPECT_FALSE(write_archive(std::move(a), parts, error));
  EXPECT_EQ(error, "rank 3's log is torn");
}

}  // namespace
}  // namespace p3s::interpose
