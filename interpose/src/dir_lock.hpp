// SPDX-License-Identifier: BSD-3-Clause
// The trace directory's lock: DIR/.p3s-record.lock, held (flock) by whoever records into DIR, so that two
// recordings never mix their raw logs or replace each other's archive. `p3s record` holds it for its whole run and
// hands its ranks a token (P3S_RECORD_LOCK) that lets them share it; a recorder started without the token (the
// library preloaded by hand) takes it itself from MPI_Init to the end of MPI_Finalize.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace p3s::interpose {

class DirLock {
 public:
  /// Takes DIR's lock, or shares it where `token` is the one its holder wrote there. nullptr, with `error` saying
  /// why, where another recording holds it or the lock file cannot be made.
  static std::unique_ptr<DirLock> take(const std::filesystem::path& dir, std::string_view token, std::string& error);
  /// The holder removes the lock file; a sharer only closes it.
  ~DirLock();
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

  /// What a sharer must present: written in the lock file by its holder.
  [[nodiscard]] const std::string& token() const noexcept { return token_; }

 private:
  DirLock(std::filesystem::path path, int fd, std::string token, bool holder) noexcept
      : path_(std::move(path)), fd_(fd), token_(std::move(token)), holder_(holder) {}
  std::filesystem::path path_;
  int fd_ = -1;
  std::string token_;
  bool holder_ = false;
};

}  // namespace p3s::interpose
