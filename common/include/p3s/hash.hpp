// SPDX-License-Identifier: BSD-3-Clause
// The 64-bit mixing every p3s hash and seeded stream uses: SplitMix64 (Steele, Lea, Flood, "Fast splittable
// pseudorandom number generators", OOPSLA 2014).
#pragma once

#include <cstdint>

namespace p3s {

/// The golden-ratio step between SplitMix64 states.
inline constexpr std::uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ULL;

/// SplitMix64's finaliser: every input bit reaches every output bit, so consecutive or structured keys spread.
[[nodiscard]] constexpr std::uint64_t mix_bits(std::uint64_t x) noexcept {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// SplitMix64's output for state x (one golden-ratio step, then the finaliser): a hash of one 64-bit value.
[[nodiscard]] constexpr std::uint64_t mix64(std::uint64_t x) noexcept { return mix_bits(x + kGoldenGamma); }

}  // namespace p3s
