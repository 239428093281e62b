// SPDX-License-Identifier: BSD-3-Clause
#include "noise.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace p3s::replay::detail {
namespace {

constexpr int kCueTag = 0;
constexpr int kNoiseTag = 1;
/// Messages posted at once each way: a large instance's noise goes in rounds, so its buffers stay small.
constexpr std::int64_t kRound = 64;
constexpr std::uint32_t kEnd = UINT32_MAX;

/// A noise rank's buffers, kept from one instance's messages to the next (grown, never shrunk).
struct Buffers {
  std::vector<char> out;
  std::vector<char> in;
  std::vector<MPI_Request> requests;
};

/// Sends `sends` messages to `other` and receives `receives` from it, `bytes` each, in rounds.
void exchange(MPI_Comm comm, int other, std::int64_t sends, std::int64_t receives, int bytes, Buffers& b) {
  if (b.out.size() < static_cast<std::size_t>(bytes) + 1) b.out.resize(static_cast<std::size_t>(bytes) + 1, 0);
  const auto room = static_cast<std::size_t>(std::min(receives, kRound) * bytes) + 1;
  if (b.in.size() < room) b.in.resize(room);
  std::vector<char>& out = b.out;
  std::vector<char>& in = b.in;
  std::vector<MPI_Request>& requests = b.requests;
  while (sends > 0 || receives > 0) {
    const std::int64_t s = std::min(sends, kRound);
    const std::int64_t r = std::min(receives, kRound);
    requests.assign(static_cast<std::size_t>(s + r), MPI_REQUEST_NULL);
    for (std::int64_t k = 0; k < r; ++k) {
      MPI_Irecv(in.data() + k * bytes, bytes, MPI_BYTE, other, kNoiseTag, comm, &requests[static_cast<std::size_t>(k)]);
    }
    for (std::int64_t k = 0; k < s; ++k) {
      MPI_Isend(out.data(), bytes, MPI_BYTE, other, kNoiseTag, comm, &requests[static_cast<std::size_t>(r + k)]);
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    sends -= s;
    receives -= r;
  }
}

}  // namespace

void NoiseCue::instance(std::uint32_t id) const {
  if (comm != MPI_COMM_NULL) MPI_Send(&id, 1, MPI_UINT32_T, leader, kCueTag, comm);
}

void NoiseCue::end() const { instance(kEnd); }

std::int64_t serve_as_noise(MPI_Comm comm, bool leader, int cuer, int other, const NoiseLoad& load) {
  std::int64_t sent = 0;
  Buffers buffers;
  for (;;) {
    std::uint32_t id = kEnd;
    MPI_Recv(&id, 1, MPI_UINT32_T, leader ? cuer : other, kCueTag, comm, MPI_STATUS_IGNORE);
    if (leader) MPI_Send(&id, 1, MPI_UINT32_T, other, kCueTag, comm);
    if (id == kEnd) break;
    const auto it = load.find(id);
    if (it == load.end()) continue;
    const auto messages = static_cast<std::int64_t>(std::llround(it->second.first));
    const int bytes = static_cast<int>(std::clamp(std::llround(it->second.second), 0LL, 1LL << 30));
    // The leader sends the odd one: both know the counts, so every message has its receive.
    const std::int64_t mine = leader ? messages - messages / 2 : messages / 2;
    exchange(comm, other, mine, messages - mine, bytes, buffers);
    sent += mine;
  }
  return sent;
}

}  // namespace p3s::replay::detail
