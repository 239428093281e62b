// SPDX-License-Identifier: BSD-3-Clause
// Bad input: every failure is one line that names the file and says what to do.
#include "p3s/analyzer/summary.hpp"
#include "p3s/analyzer/trace_reader.hpp"
#include "p3s/error.hpp"
#include "test_archive.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

namespace p3s::analyzer {
namespace {
namespace fs = std::filesystem;
using testing::copy_archive;
using testing::data_dir;
using testing::scratch_dir;

fs::path np4() { return data_dir() / "scorep" / "phases-c-np4"; }

/// Runs `summarize(path)` and returns the message of the expected exception type.
template <class E>
std::string failure(const fs::path& path) {
  try {
    (void)summarize(path);
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
    return {};
  }
  ADD_FAILURE() << "no exception for " << path;
  return {};
}

void expect_one_line_naming(const std::string& message, const std::string& what) {
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_NE(message.find(what), std::string::npos) << message;
}

TEST(BadInput, MissingPath) {
  const std::string m = failure<InputError>("/nonexistent/p3s/run");
  expect_one_line_naming(m, "/nonexistent/p3s/run");
  EXPECT_NE(m.find("no such file or directory"), std::string::npos) << m;
  EXPECT_NE(m.find("p3s record -o"), std::string::npos) << m;
}

TEST(BadInput, DirectoryWithoutArchive) {
  const fs::path dir = scratch_dir("no-archive");
  std::ofstream(dir / "notes.txt") << "nothing here\n";
  const std::string m = failure<InputError>(dir);
  expect_one_line_naming(m, dir.string());
  EXPECT_NE(m.find("holds no OTF2 archive"), std::string::npos) << m;
}

TEST(BadInput, DirectoryWithRawLogsSuggestsRecover) {
  const fs::path dir = scratch_dir("raw-only");
  fs::create_directories(dir / "p3s-raw");
  const std::string m = failure<InputError>(dir);
  expect_one_line_naming(m, "p3s recover");
}

TEST(BadInput, FileThatIsNotOtf2) {
  const fs::path dir = scratch_dir("not-otf2");
  std::ofstream(dir / "traces.otf2") << "this is not an archive\n";
  std::string m = failure<InputError>(dir);
  expect_one_line_naming(m, (dir / "traces.otf2").string());
  EXPECT_NE(m.find("not an OTF2 anchor file"), std::string::npos) << m;
  std::ofstream(dir / "other.txt") << "x";
  m = failure<InputError>(dir / "other.txt");
  expect_one_line_naming(m, "not an OTF2 anchor file");
}

TEST(BadInput, AnchorFileOrDirectoryBothWork) {
  EXPECT_EQ(find_anchor(np4()), fs::absolute(np4() / "traces.otf2").lexically_normal());
  EXPECT_EQ(find_anchor(np4() / "traces.otf2"), fs::absolute(np4() / "traces.otf2").lexically_normal());
  // A directory with one anchor of another name (Score-P lets users rename it).
  const fs::path dir = copy_archive(np4(), "renamed");
  fs::rename(dir / "traces.otf2", dir / "run.otf2");
  EXPECT_EQ(find_anchor(dir), dir / "run.otf2");
}

TEST(BadInput, AnAnchorFileOtf2CrashesOnIsRefused) {
  // Two bytes of the anchor changed (a length's high bit, a letter of a string): OTF2 3.0 frees a buffer twice loading
  // it and the process aborted. The load is tried apart first, and the archive refused in one line.
  const fs::path dir = copy_archive(np4(), "anchor-double-free");
  {
    std::fstream anchor(dir / "traces.otf2", std::ios::in | std::ios::out | std::ios::binary);
    anchor.seekp(63);
    anchor.put('\200');
    anchor.seekp(204);
    anchor.put('\115');
  }
  const std::string m = failure<TraceError>(dir);
  expect_one_line_naming(m, (dir / "traces.otf2").string());
  EXPECT_NE(m.find("OTF2 crashes reading its anchor file"), std::string::npos) << m;
  EXPECT_NE(m.find("truncated or corrupt"), std::string::npos) << m;
}

TEST(BadInput, TruncatedEventFile) {
  const fs::path dir = copy_archive(np4(), "truncated-evt");
  fs::resize_file(dir / "traces" / "1.evt", fs::file_size(dir / "traces" / "1.evt") / 2);
  const std::string m = failure<TraceError>(dir);
  expect_one_line_naming(m, (dir / "traces.otf2").string());
  EXPECT_NE(m.find("location 1 (rank 1)"), std::string::npos) << m;
  EXPECT_NE(m.find("truncated or corrupt"), std::string::npos) << m;
}

TEST(BadInput, EventFileCutAtTheEnd) {
  const fs::path dir = copy_archive(np4(), "cut-evt");
  fs::resize_file(dir / "traces" / "2.evt", fs::file_size(dir / "traces" / "2.evt") - 40);
  const std::string m = failure<TraceError>(dir);
  expect_one_line_naming(m, "location 2 (rank 2)");
}

TEST(BadInput, EmptyEventFile) {
  const fs::path dir = copy_archive(np4(), "empty-evt");
  fs::resize_file(dir / "traces" / "3.evt", 0);
  expect_one_line_naming(failure<TraceError>(dir), "location 3 (rank 3)");
}

TEST(BadInput, MissingEventFile) {
  const fs::path dir = copy_archive(np4(), "missing-evt");
  fs::remove(dir / "traces" / "2.evt");
  const std::string m = failure<TraceError>(dir);
  expect_one_line_naming(m, (dir / "traces" / "2.evt").string() + " is missing");
}

TEST(BadInput, MissingGlobalDefinitions) {
  const fs::path dir = copy_archive(np4(), "missing-def");
  fs::remove(dir / "traces.def");
  const std::string m = failure<TraceError>(dir);
  expect_one_line_naming(m, (dir / "traces.def").string() + " is missing");
  EXPECT_NE(m.find("record the run again"), std::string::npos) << m;
}

TEST(BadInput, TruncatedGlobalDefinitions) {
  const fs::path dir = copy_archive(np4(), "truncated-def");
  fs::resize_file(dir / "traces.def", fs::file_size(dir / "traces.def") / 3);
  expect_one_line_naming(failure<TraceError>(dir), "global definitions");
}

TEST(BadInput, MissingLocalDefinitions) {
  // Without its mapping tables, location 2's events would silently name the wrong communicators.
  const fs::path dir = copy_archive(np4(), "missing-local-def");
  fs::remove(dir / "traces" / "2.def");
  expect_one_line_naming(failure<TraceError>(dir), "local definitions");
}

TEST(BadInput, ArchiveWithoutMpiDefinitions) {
  const fs::path dir = scratch_dir("no-mpi-defs");
  testing::ArchiveSpec spec;
  spec.mpi_groups = false;
  spec.regions = {{"main", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER}};
  spec.events = [](OTF2_EvtWriter* w, std::int32_t, std::uint32_t) {
    OTF2_EvtWriter_Enter(w, nullptr, 1, 0);
    OTF2_EvtWriter_Leave(w, nullptr, 2, 0);
  };
  testing::write_archive(dir, spec);
  const std::string m = failure<InputError>(dir);
  expect_one_line_naming(m, "no MPI");
  EXPECT_NE(m.find(dir.string()), std::string::npos) << m;
}

TEST(BadInput, ArchiveWithoutMpiEvents) {
  // MPI is defined (p3s defines every MPI region) but no rank ever called it.
  const fs::path dir = scratch_dir("no-mpi-events");
  testing::ArchiveSpec spec;
  spec.regions = {{"MPI_Send", OTF2_REGION_ROLE_POINT2POINT}, {"main", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER}};
  spec.comms = {{"MPI_COMM_WORLD", {0, 1}}};
  spec.events = [](OTF2_EvtWriter* w, std::int32_t, std::uint32_t) {
    OTF2_EvtWriter_Enter(w, nullptr, 1, 1);
    OTF2_EvtWriter_Leave(w, nullptr, 2, 1);
  };
  testing::write_archive(dir, spec);
  const std::string m = failure<InputError>(dir);
  expect_one_line_naming(m, "holds no MPI events");
}

TEST(BadInput, TimeGoingBackIsADamagedEventFile) {
  // A flipped byte in a timestamp: the later event earlier than the one before it. A time difference across it
  // would wrap around to 584 years.
  // OTF2 refuses to write it, so rank 1's second timestamp (a value found once in its file) is patched.
  constexpr std::uint64_t kMarked = 0x0A0B0C0D0E0F;
  const fs::path dir = scratch_dir("time-back");
  testing::ArchiveSpec spec;
  spec.trace_length = kMarked + 10;
  spec.regions = {{"MPI_Send", OTF2_REGION_ROLE_POINT2POINT}, {"main", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER}};
  spec.comms = {{"MPI_COMM_WORLD", {0, 1}}};
  spec.events = [](OTF2_EvtWriter* w, std::int32_t, std::uint32_t) {
    OTF2_EvtWriter_Enter(w, nullptr, 10, 1);
    OTF2_EvtWriter_Enter(w, nullptr, kMarked, 0);
    OTF2_EvtWriter_Leave(w, nullptr, kMarked + 1, 0);
    OTF2_EvtWriter_Leave(w, nullptr, kMarked + 2, 1);
  };
  testing::write_archive(dir, spec);
  const fs::path events = dir / "traces" / "1.evt";
  std::string bytes;
  {
    std::ifstream in(events, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::string marked(sizeof kMarked, '\0');
  std::memcpy(marked.data(), &kMarked, sizeof kMarked);
  const std::size_t at = bytes.find(marked);
  ASSERT_NE(at, std::string::npos) << "the timestamp is not stored as a plain 64-bit value";
  const std::uint64_t earlier = 5;
  std::memcpy(bytes.data() + at, &earlier, sizeof earlier);
  std::ofstream(events, std::ios::binary | std::ios::trunc) << bytes;
  const std::string m = failure<InputError>(dir);
  expect_one_line_naming(m, "time goes back");
  // The event where it goes back: the third of the location (its second Enter is the first), not the batch's.
  EXPECT_NE(m.find("at its event 2,"), std::string::npos) << m;
  EXPECT_NE(m.find("rank 1"), std::string::npos) << m;
  EXPECT_NE(m.find("damaged"), std::string::npos) << m;
}

}  // namespace
}  // namespace p3s::analyzer
