// SPDX-License-Identifier: BSD-3-Clause
// The second sweep of pass 3: per final phase and location, the representative instance (the SiPT: structure
// from the first instance, statistics over all instances that match it) and every instance's time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "extract.hpp"
#include "p3s/analyzer/signature.hpp"
#include "work_split.hpp"

namespace p3s::analyzer {

class Representatives {
 public:
  /// Reads every location's operations once. `occurrences` says which operations belong to which occurrence;
  /// `trailing` says, per structural phase, whether its instances keep the burst after their last call.
  Representatives(const TraceDefinitions& defs, const Extracted& extracted,
                  const std::vector<std::filesystem::path>& tick_files, const RunPhases& occurrences,
                  const FinalPhases& phases, const std::vector<bool>& trailing);
  ~Representatives();
  Representatives(const Representatives&) = delete;
  Representatives& operator=(const Representatives&) = delete;

  /// Per occurrence: its time, the mean over the locations of the bursts and calls each spends in it.
  [[nodiscard]] const std::vector<double>& instance_time() const noexcept;
  /// The representative of final phase `p` on every location that takes part in it, by (rank, thread).
  [[nodiscard]] std::vector<SigRank> ranks(std::uint32_t p) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace p3s::analyzer
