// SPDX-License-Identifier: BSD-3-Clause
// Archive placement on disk.
#include "archive_io.hpp"

#include <filesystem>
#include <system_error>

#include "p3s/trace/schema.hpp"

namespace p3s::interpose {
namespace fs = std::filesystem;

std::string partial_dir(const std::string& dir) { return (fs::path(dir) / trace::kPartialDir).string(); }
std::string raw_dir(const std::string& dir) { return (fs::path(dir) / trace::kRawDir).string(); }
std::string raw_log_path(const std::string& dir, int rank, unsigned thread) {
  return (fs::path(raw_dir(dir)) / (std::to_string(rank) + "." + std::to_string(thread) + ".raw")).string();
}

namespace {
bool remove_all(const fs::path& p, std::string& error) {
  std::error_code ec;
  fs::remove_all(p, ec);
  if (ec) error = "cannot remove " + p.string() + ": " + ec.message();
  return !ec;
}
}  // namespace

bool clear_published_archive(const std::string& dir, std::string& error) {
  const std::string name(trace::kArchiveName);
  // The anchor goes first, so an interrupted removal never leaves an anchor pointing at missing data.
  return remove_all(fs::path(dir) / (name + ".otf2"), error) && remove_all(fs::path(dir) / (name + ".def"), error) &&
         remove_all(fs::path(dir) / name, error);
}

bool clear_archive(const std::string& dir, std::string& error) {
  return remove_all(partial_dir(dir), error) && clear_published_archive(dir, error);
}

bool publish_archive(const std::string& dir, std::string& error) {
  const std::string name(trace::kArchiveName);
  const fs::path from(partial_dir(dir));
  std::error_code ec;
  for (const std::string& entry : {name, name + ".def", name + ".otf2"}) {
    fs::rename(from / entry, fs::path(dir) / entry, ec);
    if (ec) {
      error = "cannot move " + (from / entry).string() + " into " + dir + ": " + ec.message();
      return false;
    }
  }
  fs::remove_all(from, ec);
  return true;
}

}  // namespace p3s::interpose
