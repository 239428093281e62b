// SPDX-License-Identifier: BSD-3-Clause
// Outputs written whole: never through a link planted where the temporary goes, never onto a device, a FIFO or a
// directory, and nothing left behind.
#include "p3s/whole_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace p3s {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(P3S_TEST_TMP) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(WholeFile, ALinkWhereTheTemporaryUsedToGoIsNotFollowed) {
  // Another user of a shared directory plants out.json.tmp -> a file of the victim's: writing out.json must leave
  // that file alone.
  const fs::path d = fresh_dir("planted");
  write_whole_file(d / "victim", "precious");
  fs::create_symlink(d / "victim", d / "out.json.tmp");
  write_whole_file(d / "out.json", "result");
  EXPECT_EQ(read(d / "victim"), "precious");
  EXPECT_EQ(read(d / "out.json"), "result");
  EXPECT_FALSE(fs::is_symlink(d / "out.json"));
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d)) ++files;
  EXPECT_EQ(files, 3U);  // victim, the planted link, out.json: no temporary left
}

TEST(WholeFile, ALinkAtTheOutputIsReplacedNotWrittenThrough) {
  const fs::path d = fresh_dir("link-out");
  write_whole_file(d / "victim", "precious");
  fs::create_symlink(d / "victim", d / "out.json");
  write_whole_file(d / "out.json", "result");
  EXPECT_EQ(read(d / "victim"), "precious");
  EXPECT_FALSE(fs::is_symlink(d / "out.json"));
  EXPECT_EQ(read(d / "out.json"), "result");
}

TEST(WholeFile, ADeviceOrADirectoryIsRefusedAndLeftAsItIs) {
  EXPECT_THROW(write_whole_file("/dev/null", "x"), InputError);
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  const fs::path d = fresh_dir("onto-dir");
  fs::create_directories(d / "out");
  EXPECT_THROW(write_whole_file(d / "out", "x"), InputError);
  EXPECT_TRUE(fs::is_directory(d / "out"));
  ASSERT_EQ(::mkfifo((d / "fifo").c_str(), 0600), 0);
  EXPECT_THROW(StreamedFile(d / "fifo"), InputError);
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d)) ++files;
  EXPECT_EQ(files, 2U);  // nothing beside them
}

TEST(WholeFile, ANewFileGetsTheModeAPlainCreateGives) {
  const fs::path d = fresh_dir("mode");
  const mode_t mask = ::umask(0);
  ::umask(mask);
  write_whole_file(d / "out.json", "x");
  struct stat st {};
  ASSERT_EQ(::stat((d / "out.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666U & ~mask);  // not mkstemp's 0600
}

TEST(WholeFile, AFileNeverCommittedLeavesNothing) {
  const fs::path d = fresh_dir("uncommitted");
  {
    StreamedFile f(d / "out.json");
    f.stream() << "half";
  }
  EXPECT_TRUE(fs::is_empty(d));
}

}  // namespace
}  // namespace p3s
