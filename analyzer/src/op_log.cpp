// SPDX-License-Identifier: BSD-3-Clause
// Operation files: fixed-layout records, buffered sequential I/O.
#include "op_log.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "p3s/error.hpp"

namespace p3s::analyzer {
namespace {
constexpr std::size_t kBuffer = 1 << 20;

std::string io_error(const std::filesystem::path& p, const char* what) {
  return std::string("analyzer scratch file '") + p.string() + "': " + what + ": " + std::strerror(errno) +
         "; check free space in the temporary directory (TMPDIR)";
}
}  // namespace

const char* action_name(ActionKind k) noexcept {
  switch (k) {
    case ActionKind::Send:
      return "send";
    case ActionKind::Recv:
      return "recv";
    case ActionKind::Collective:
      return "coll";
    case ActionKind::NbCollRequest:
      return "icoll";
    case ActionKind::NbCollComplete:
      return "icoll_complete";
    case ActionKind::IrecvPost:
      return "irecv";
    case ActionKind::IsendComplete:
      return "isend_complete";
    case ActionKind::Cancelled:
      return "cancelled";
  }
  return "?";
}

OpWriter::OpWriter(std::filesystem::path path) : path_(std::move(path)) {
  file_ = std::fopen(path_.c_str(), "w+b");
  if (file_ == nullptr) throw Error(io_error(path_, "cannot create"));
  buffer_.reserve(kBuffer);
}

OpWriter::~OpWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

std::uint64_t OpWriter::append(const OpHeader& header, const Action* actions, std::uint32_t count) {
  const std::size_t bytes = sizeof header + count * sizeof(Action);
  if (buffer_.size() + bytes > kBuffer) flush();
  const auto* h = reinterpret_cast<const std::byte*>(&header);
  buffer_.insert(buffer_.end(), h, h + sizeof header);
  const std::uint64_t first_action = flushed_ + buffer_.size();
  const auto* a = reinterpret_cast<const std::byte*>(actions);
  buffer_.insert(buffer_.end(), a, a + count * sizeof(Action));
  ++ops_;
  return first_action;
}

void OpWriter::patch_action(std::uint64_t offset, const Action& action) {
  if (offset >= flushed_) {
    std::memcpy(buffer_.data() + (offset - flushed_), &action, sizeof action);
    return;
  }
  // Already on disk: write in place, then return to the end for the next flush.
  if (std::fseek(file_, static_cast<long>(offset), SEEK_SET) != 0 ||
      std::fwrite(&action, sizeof action, 1, file_) != 1 || std::fseek(file_, 0, SEEK_END) != 0) {
    throw Error(io_error(path_, "cannot update"));
  }
}

void OpWriter::flush() {
  if (buffer_.empty()) return;
  if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size())
    throw Error(io_error(path_, "cannot write"));
  flushed_ += buffer_.size();
  buffer_.clear();
}

void OpWriter::finish() {
  flush();
  if (std::fclose(file_) != 0) {
    file_ = nullptr;
    throw Error(io_error(path_, "cannot close"));
  }
  file_ = nullptr;
}

OpReader::OpReader(const std::filesystem::path& path)
    : path_(path), buffer_(std::make_unique_for_overwrite<std::byte[]>(kBuffer)) {
  file_ = std::fopen(path.c_str(), "rb");
  if (file_ == nullptr) throw Error(io_error(path, "cannot open"));
}

OpReader::~OpReader() {
  if (file_ != nullptr) std::fclose(file_);
}

bool OpReader::read(void* out, std::size_t bytes) {
  auto* dst = static_cast<std::byte*>(out);
  while (bytes != 0) {
    if (begin_ == end_) {
      end_ = std::fread(buffer_.get(), 1, kBuffer, file_);
      begin_ = 0;
      if (end_ == 0) return false;
    }
    const std::size_t n = std::min(bytes, end_ - begin_);
    std::memcpy(dst, buffer_.get() + begin_, n);
    begin_ += n;
    dst += n;
    bytes -= n;
  }
  return true;
}

bool OpReader::next(Op& op) {
  if (!read(&op.header, sizeof op.header)) return false;
  op.actions.resize(op.header.actions);
  if (op.header.actions != 0 && !read(op.actions.data(), op.header.actions * sizeof(Action))) {
    throw Error("analyzer scratch file '" + path_.string() + "' ends inside an operation (internal error)");
  }
  return true;
}

ScratchDir::ScratchDir() {
  std::string templ = (std::filesystem::temp_directory_path() / "p3s-analyze-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr) {
    throw Error(std::string("cannot create a scratch directory in ") + std::filesystem::temp_directory_path().string() +
                ": " + std::strerror(errno) + "; set TMPDIR to a writable directory");
  }
  path_ = templ;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace p3s::analyzer
