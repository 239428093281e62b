// SPDX-License-Identifier: BSD-3-Clause
// A small, fully specified random generator: the same seed gives the same trace with any compiler and standard
// library (std::normal_distribution and friends are implementation-defined, so they are not used).
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>

#include "p3s/hash.hpp"

namespace p3s::synth::detail {

/// SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014): expands a
/// seed into well-mixed state words.
[[nodiscard]] constexpr std::uint64_t splitmix64(std::uint64_t& x) noexcept {
  x += kGoldenGamma;
  return mix_bits(x);
}

/// xoshiro256** (Blackman and Vigna, "Scrambled linear pseudorandom number generators", TOMS 2021).
class Rng {
 public:
  Rng() noexcept : Rng(0, 0) {}
  /// One independent stream per (seed, stream): every rank draws from its own.
  Rng(std::uint64_t seed, std::uint64_t stream) noexcept {
    std::uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ULL);
    for (std::uint64_t& w : s_) w = splitmix64(x);
  }

  std::uint64_t next() noexcept {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  /// Uniform in [0, 1) with 53 random bits.
  double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  /// Uniform in [-1, 1).
  double symmetric() noexcept { return 2.0 * uniform() - 1.0; }

  /// Standard normal (Box–Muller; one value per call so that the stream position does not depend on history).
  double normal() noexcept {
    const double u1 = 1.0 - uniform();  // (0, 1]: log stays finite
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace p3s::synth::detail
