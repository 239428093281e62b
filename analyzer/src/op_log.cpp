// SPDX-License-Identifier: BSD-3-Clause
// Operation files: variable-length integers, times relative to the previous operation, buffered sequential I/O.
//
// An operation is: action count, enter time minus the previous leave (zigzag: a trace's clock may step back),
// call duration, burst time minus that gap (0 when the burst is the gap, as the extractor writes it), burst
// work, call work, region + 1, call site + 1 (so the "none" ids, all ones, take one byte), calls - 1. Each action
// follows:
// one byte of kind, then either kFixedLayout's 48 bytes of Action (patchable actions), or the collective
// operation byte and comm + 1, peer, root, tag, seq + 1, bytes, bytes received and request as variable-length
// integers (LEB128; signed values zigzag-coded).
#include "op_log.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "p3s/error.hpp"

namespace p3s::analyzer {
namespace {
constexpr std::size_t kBuffer = 1 << 20;
constexpr unsigned kFixedLayout = 0x80;  ///< action kind flag: the Action follows in its in-memory layout
constexpr std::size_t kMaxVarint = 10;
constexpr std::size_t kMaxHeaderBytes = 9 * kMaxVarint;
constexpr std::size_t kMaxActionBytes = 2 + 8 * kMaxVarint;
static_assert(kMaxActionBytes >= 1 + sizeof(Action));

constexpr std::uint64_t zigzag(std::uint64_t v) noexcept {
  return (v << 1) ^ static_cast<std::uint64_t>(static_cast<std::int64_t>(v) >> 63);
}
constexpr std::uint64_t unzigzag(std::uint64_t v) noexcept { return (v >> 1) ^ (~(v & 1) + 1); }

void put(std::byte*& p, std::uint64_t v) noexcept {
  while (v >= 0x80) {
    *p++ = static_cast<std::byte>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<std::byte>(v);
}

/// Decodes a variable-length integer of two bytes or more; on running past `end` (or past 64 bits) it sets p
/// to nullptr and returns 0, so a decoder checks once at its end.
[[gnu::noinline]] std::uint64_t get_long(const std::byte*& p, const std::byte* end) noexcept {
  if (p == nullptr) return 0;
  std::uint64_t v = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (p == end) break;
    const auto b = static_cast<std::uint64_t>(*p++);
    v |= (b & 0x7f) << shift;
    if (b < 0x80) return v;
  }
  p = nullptr;
  return 0;
}

/// Decodes one variable-length integer (see get_long); one byte, the common case, is decoded inline.
template <typename T>
[[gnu::always_inline]] inline T get(const std::byte*& p, const std::byte* end) noexcept {
  if (p != nullptr && p != end && static_cast<unsigned>(*p) < 0x80) return static_cast<T>(*p++);
  return static_cast<T>(get_long(p, end));
}

std::string io_error(const std::filesystem::path& p, const char* what) {
  return std::string("analyzer scratch file '") + p.string() + "': " + what + ": " + std::strerror(errno) +
         "; check free space in the temporary directory (TMPDIR)";
}
}  // namespace

OpWriter::OpWriter(std::filesystem::path path, bool patchable_collectives)
    : path_(std::move(path)),
      patchable_collectives_(patchable_collectives),
      buffer_(std::make_unique_for_overwrite<std::byte[]>(kBuffer)),
      capacity_(kBuffer) {
  file_ = std::fopen(path_.c_str(), "w+b");
  if (file_ == nullptr) throw Error(io_error(path_, "cannot create"));
}

OpWriter::~OpWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void OpWriter::reserve(std::size_t bytes) {
  if (used_ + bytes <= capacity_) return;
  flush();
  if (bytes <= capacity_) return;
  buffer_ = std::make_unique_for_overwrite<std::byte[]>(bytes);
  capacity_ = bytes;
}

void OpWriter::append(const OpHeader& header, const Action* actions, std::uint32_t count) {
  reserve(kMaxHeaderBytes + std::size_t{count} * kMaxActionBytes);
  std::byte* const start = buffer_.get() + used_;
  std::byte* p = start;
  const std::uint64_t gap = header.enter_ns - prev_leave_;
  put(p, count);
  put(p, zigzag(gap));
  put(p, zigzag(header.leave_ns - header.enter_ns));
  put(p, zigzag(header.burst_ns - gap));
  put(p, header.burst_work);
  put(p, header.call_work);
  put(p, static_cast<std::uint32_t>(header.region + 1));
  put(p, static_cast<std::uint32_t>(header.callsite + 1));
  put(p, header.calls - 1);
  offsets_.assign(count, kNotPatchable);
  for (std::uint32_t i = 0; i < count; ++i) {
    const Action& a = actions[i];
    const bool patchable =
        a.kind == mpi::ActionKind::NbCollRequest || (patchable_collectives_ && a.kind == mpi::ActionKind::Collective);
    if (patchable) {
      *p++ = static_cast<std::byte>(static_cast<unsigned>(a.kind) | kFixedLayout);
      offsets_[i] = flushed_ + used_ + static_cast<std::uint64_t>(p - start);
      std::memcpy(p, &a, sizeof a);
      p += sizeof a;
      continue;
    }
    *p++ = static_cast<std::byte>(a.kind);
    *p++ = static_cast<std::byte>(a.op);
    put(p, static_cast<std::uint32_t>(a.comm + 1));
    put(p, zigzag(static_cast<std::uint64_t>(static_cast<std::int64_t>(a.peer))));
    put(p, zigzag(static_cast<std::uint64_t>(static_cast<std::int64_t>(a.root))));
    put(p, a.tag);
    put(p, static_cast<std::uint32_t>(a.seq + 1));
    put(p, a.bytes);
    put(p, a.bytes_received);
    put(p, a.request);
  }
  used_ += static_cast<std::size_t>(p - start);
  prev_leave_ = header.leave_ns;
  ++ops_;
}

void OpWriter::patch_action(std::uint64_t offset, const Action& action) {
  if (offset >= flushed_) {
    std::memcpy(buffer_.get() + (offset - flushed_), &action, sizeof action);
    return;
  }
  // Already on disk: write in place, then return to the end for the next flush.
  if (std::fseek(file_, static_cast<long>(offset), SEEK_SET) != 0 ||
      std::fwrite(&action, sizeof action, 1, file_) != 1 || std::fseek(file_, 0, SEEK_END) != 0) {
    throw Error(io_error(path_, "cannot update"));
  }
}

void OpWriter::flush() {
  if (used_ == 0) return;
  if (std::fwrite(buffer_.get(), 1, used_, file_) != used_) throw Error(io_error(path_, "cannot write"));
  flushed_ += used_;
  used_ = 0;
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
    : path_(path), buffer_(std::make_unique_for_overwrite<std::byte[]>(kBuffer)), capacity_(kBuffer) {
  file_ = std::fopen(path.c_str(), "rb");
  if (file_ == nullptr) throw Error(io_error(path, "cannot open"));
}

OpReader::~OpReader() {
  if (file_ != nullptr) std::fclose(file_);
}

void OpReader::corrupt() const {
  throw Error("analyzer scratch file '" + path_.string() + "' is corrupt (internal error)");
}

std::size_t OpReader::fill(std::size_t bytes) {
  if (end_ - begin_ >= bytes) return end_ - begin_;
  const std::size_t kept = end_ - begin_;
  std::memmove(buffer_.get(), buffer_.get() + begin_, kept);
  begin_ = 0;
  end_ = kept;
  while (end_ < capacity_) {
    const std::size_t n = std::fread(buffer_.get() + end_, 1, capacity_ - end_, file_);
    if (n == 0) {
      if (std::ferror(file_) != 0) throw Error(io_error(path_, "cannot read"));
      break;
    }
    end_ += n;
  }
  return end_;
}

bool OpReader::next(Op& op) {
  if (fill(kMaxHeaderBytes) == 0) return false;
  const std::byte* p = buffer_.get() + begin_;
  const std::byte* const end = buffer_.get() + end_;
  OpHeader& h = op.header;
  const auto count = get<std::uint32_t>(p, end);
  const std::uint64_t gap = unzigzag(get<std::uint64_t>(p, end));
  h.enter_ns = prev_leave_ + gap;
  h.leave_ns = h.enter_ns + unzigzag(get<std::uint64_t>(p, end));
  h.burst_ns = gap + unzigzag(get<std::uint64_t>(p, end));
  h.burst_work = get<std::uint64_t>(p, end);
  h.call_work = get<std::uint64_t>(p, end);
  h.region = get<std::uint32_t>(p, end) - 1;
  h.callsite = get<std::uint32_t>(p, end) - 1;
  h.calls = get<std::uint32_t>(p, end) + 1;
  h.actions = count;
  if (p == nullptr) corrupt();
  begin_ = static_cast<std::size_t>(p - buffer_.get());
  prev_leave_ = h.leave_ns;
  op.actions.resize(count);
  for (Action& a : op.actions) {
    if (fill(kMaxActionBytes) == 0) corrupt();
    p = buffer_.get() + begin_;
    const std::byte* const stop = buffer_.get() + end_;
    const auto tag = static_cast<unsigned>(*p++);
    if ((tag & kFixedLayout) != 0) {
      if (stop - p < static_cast<std::ptrdiff_t>(sizeof a)) corrupt();
      std::memcpy(&a, p, sizeof a);
      p += sizeof a;
    } else {
      if (tag > static_cast<unsigned>(mpi::ActionKind::Cancelled) || p == stop) corrupt();
      a.kind = static_cast<mpi::ActionKind>(tag);
      a.op = static_cast<mpi::Collective>(*p++);
      a.reserved = 0;
      a.comm = get<std::uint32_t>(p, stop) - 1;
      a.peer = static_cast<std::int32_t>(unzigzag(get<std::uint64_t>(p, stop)));
      a.root = static_cast<std::int32_t>(unzigzag(get<std::uint64_t>(p, stop)));
      a.tag = get<std::uint32_t>(p, stop);
      a.seq = get<std::uint32_t>(p, stop) - 1;
      a.bytes = get<std::uint64_t>(p, stop);
      a.bytes_received = get<std::uint64_t>(p, stop);
      a.request = get<std::uint64_t>(p, stop);
      if (p == nullptr) corrupt();
    }
    begin_ = static_cast<std::size_t>(p - buffer_.get());
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
