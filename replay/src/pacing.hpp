// SPDX-License-Identifier: BSD-3-Clause
// When a range replay's black holes may answer: the time each message between ranges left its sender, measured in
// the step that timed the sender's range, so that a receive from a rank outside a later step completes no earlier
// than its sender would have sent it (a pipeline's wait on the range before it is measured, not lost).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

namespace p3s::replay::detail {

/// When one message between two ranges left its sender, after the start of the sender's phase instance (the mean
/// over the instances it was recorded in). Travels between ranks as bytes.
struct SendTime {
  std::int64_t sender = 0;
  std::int64_t receiver = 0;
  double ns = 0;
  std::uint32_t phase = 0;
  std::int32_t tag = 0;
  std::uint32_t number = 0;  ///< among the instance's messages from sender to receiver with that tag
  std::uint32_t unused = 0;
};
static_assert(sizeof(SendTime) == 40, "SendTime travels as bytes");

/// Per message between two ranges: the time it left its sender, after the start of the sender's phase instance.
class Pacing {
 public:
  /// `range_size`: the ranks of one range (a message within a range is never answered by a black hole).
  explicit Pacing(std::int64_t range_size) : range_size_(range_size) {}

  /// A phase instance of predicted rank `rank` starts at `start_ns` (where its previous instance ended); its sends
  /// are recorded when `record` (its range is timed in this step).
  void begin_instance(std::int64_t rank, std::uint32_t phase, std::int64_t start_ns, bool record);
  /// A send of the instance to predicted rank `to` with tag `tag` leaves at `at_ns`.
  void sent(std::int64_t to, int tag, std::int64_t at_ns);
  /// The earliest time the instance's next receive from predicted rank `from` with tag `tag` may complete (0: not
  /// known, at once).
  [[nodiscard]] std::int64_t due(std::int64_t from, int tag);

  /// What this rank recorded since the last call (the mean over each message's recorded instances).
  [[nodiscard]] std::vector<SendTime> take_recorded();
  /// Learns send times, replacing what was known of those messages.
  void learn(const std::vector<SendTime>& times);
  /// take_recorded() on every rank of `comm`, and learn() of them all. Collective over `comm`.
  void share(MPI_Comm comm);
  /// How many messages' send times are known.
  [[nodiscard]] std::size_t known() const noexcept { return known_.size(); }

 private:
  /// phase, sender, receiver, tag, the message's number among the instance's messages between them with that tag.
  using Key = std::tuple<std::uint32_t, std::int64_t, std::int64_t, int, std::uint32_t>;
  struct Sum {
    double ns = 0;
    double instances = 0;
  };
  std::int64_t range_size_;
  std::int64_t rank_ = -1;
  std::uint32_t phase_ = 0;
  std::int64_t start_ns_ = 0;
  bool record_ = false;
  std::map<std::pair<std::int64_t, int>, std::uint32_t> sends_;     ///< this instance's sends per peer and tag
  std::map<std::pair<std::int64_t, int>, std::uint32_t> receives_;  ///< and receives
  std::map<Key, Sum> recorded_;
  std::map<Key, double> known_;
};

}  // namespace p3s::replay::detail
