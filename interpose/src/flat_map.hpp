// SPDX-License-Identifier: BSD-3-Clause
// Open-addressing hash map from 64-bit keys (MPI handles, instruction pointers) for the recorder's hot path:
// no allocation per insert, only when the table doubles.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#include "p3s/hash.hpp"

namespace p3s::interpose {

template <class Value>
class FlatMap {
 public:
  explicit FlatMap(std::size_t capacity = 1024) { slots_.resize(round_up(capacity)); }

  /// Pointer to the value of `key`, or nullptr.
  Value* find(std::uint64_t key) noexcept {
    for (std::size_t i = home(key);; i = next(i)) {
      Slot& s = slots_[i];
      if (!s.used) return nullptr;
      if (s.key == key) return &s.value;
    }
  }

  /// Inserts or overwrites; false only when growing the table fails.
  bool put(std::uint64_t key, const Value& value) noexcept { return store(key, value, true) != Stored::Failed; }

  enum class Stored : std::uint8_t { Inserted, Present, Failed };
  /// Inserts unless `key` is present (then the table is unchanged): one probe where find and put take two.
  Stored insert(std::uint64_t key, const Value& value) noexcept { return store(key, value, false); }

  /// Removes `key` if present, shifting later entries of its probe chain back (no tombstones).
  void erase(std::uint64_t key) noexcept {
    std::size_t i = home(key);
    for (;; i = next(i)) {
      if (!slots_[i].used) return;
      if (slots_[i].key == key) break;
    }
    slots_[i].used = false;
    --size_;
    for (std::size_t j = next(i); slots_[j].used; j = next(j)) {
      const std::size_t h = home(slots_[j].key);
      // Move slot j into the hole at i unless its home lies cyclically in (i, j].
      const bool stays = (i <= j) ? (i < h && h <= j) : (i < h || h <= j);
      if (stays) continue;
      slots_[i] = slots_[j];
      slots_[j].used = false;
      i = j;
    }
  }

  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  struct Slot {
    std::uint64_t key = 0;
    Value value{};
    bool used = false;
  };
  static std::size_t round_up(std::size_t n) {
    std::size_t c = 16;
    while (c < n) c <<= 1;
    return c;
  }
  std::size_t home(std::uint64_t key) const noexcept {
    // Fibonacci hashing spreads aligned pointers and small integers alike.
    return static_cast<std::size_t>((key * kGoldenGamma) >> 20) & (slots_.size() - 1);
  }
  std::size_t next(std::size_t i) const noexcept { return (i + 1) & (slots_.size() - 1); }
  Stored store(std::uint64_t key, const Value& value, bool overwrite) noexcept {
    if ((size_ + 1) * 2 > slots_.size() && !grow()) return Stored::Failed;
    for (std::size_t i = home(key);; i = next(i)) {
      Slot& s = slots_[i];
      if (!s.used) {
        s = Slot{key, value, true};
        ++size_;
        return Stored::Inserted;
      }
      if (s.key == key) {
        if (overwrite) s.value = value;
        return Stored::Present;
      }
    }
  }
  bool grow() noexcept {
    try {
      std::vector<Slot> old(slots_.size() * 2);
      old.swap(slots_);
      size_ = 0;
      for (const Slot& s : old) {
        if (s.used) put(s.key, s.value);
      }
      return true;
    } catch (const std::bad_alloc&) {
      return false;
    }
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

}  // namespace p3s::interpose
