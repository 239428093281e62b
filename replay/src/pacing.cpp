// SPDX-License-Identifier: BSD-3-Clause
#include "pacing.hpp"

namespace p3s::replay::detail {

void Pacing::begin_instance(std::int64_t rank, std::uint32_t phase, std::int64_t start_ns, bool record) {
  rank_ = rank;
  phase_ = phase;
  start_ns_ = start_ns;
  record_ = record;
  sends_.clear();
  receives_.clear();
}

void Pacing::sent(std::int64_t to, int tag, std::int64_t at_ns) {
  const std::uint32_t number = sends_[{to, tag}]++;
  if (!record_ || to < 0 || to / range_size_ == rank_ / range_size_) return;
  Sum& s = recorded_[{phase_, rank_, to, tag, number}];
  s.ns += static_cast<double>(at_ns - start_ns_);
  s.instances += 1;
}

std::int64_t Pacing::due(std::int64_t from, int tag) {
  const std::uint32_t number = receives_[{from, tag}]++;
  const auto it = known_.find({phase_, from, rank_, tag, number});
  return it == known_.end() ? 0 : start_ns_ + static_cast<std::int64_t>(it->second);
}

std::vector<SendTime> Pacing::take_recorded() {
  std::vector<SendTime> out;
  out.reserve(recorded_.size());
  for (const auto& [k, s] : recorded_) {
    const auto& [phase, sender, receiver, tag, number] = k;
    out.push_back({sender, receiver, s.ns / s.instances, phase, tag, number, 0});
  }
  recorded_.clear();
  return out;
}

void Pacing::learn(const std::vector<SendTime>& times) {
  for (const SendTime& t : times) known_[{t.phase, t.sender, t.receiver, t.tag, t.number}] = t.ns;
}

void Pacing::share(MPI_Comm comm) {
  const std::vector<SendTime> mine = take_recorded();
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  const int bytes = static_cast<int>(mine.size() * sizeof(SendTime));
  std::vector<int> counts(static_cast<std::size_t>(ranks));
  MPI_Allgather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  std::vector<int> offsets(counts.size(), 0);
  for (std::size_t i = 1; i < counts.size(); ++i) offsets[i] = offsets[i - 1] + counts[i - 1];
  std::vector<SendTime> all(static_cast<std::size_t>(offsets.back() + counts.back()) / sizeof(SendTime));
  MPI_Allgatherv(mine.data(), bytes, MPI_BYTE, all.data(), counts.data(), offsets.data(), MPI_BYTE, comm);
  learn(all);
}

}  // namespace p3s::replay::detail
