// SPDX-License-Identifier: BSD-3-Clause
// Temporary files removed when the process is interrupted: a p3s killed while it streams a large output (SIGINT,
// SIGTERM, SIGHUP) leaves no half-written temporary behind.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <string>

namespace p3s::temporaries {

inline constexpr std::size_t kSlots = 32;
inline constexpr std::size_t kLongest = 4096;

/// A temporary's path, readable from a signal handler: `state` 2 while the path is whole, 0 when free, 1 while
/// being filled or emptied.
struct Slot {
  std::atomic<int> state{0};
  char path[kLongest] = {};
};

inline Slot g_slots[kSlots];

/// Removes every temporary registered, then dies of the signal as it would have (async-signal-safe: unlink,
/// sigaction and raise only).
extern "C" inline void remove_and_die(int sig) {
  for (Slot& s : g_slots) {
    if (s.state.load() == 2) ::unlink(s.path);
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  ::raise(sig);
}

/// Installs the handler for the signals that end a process at a user's or a scheduler's request, where they still
/// have their default action (a host program's own handlers are left alone).
inline void install() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
      struct sigaction sa {};
      sa.sa_handler = remove_and_die;
      ::sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

/// Registers `path` for removal on a signal; returns its slot, or -1 where none is free or the path is too long
/// (it is then only removed the ordinary way).
inline int add(const std::string& path) {
  if (path.size() >= kLongest) return -1;
  install();
  for (std::size_t i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (!g_slots[i].state.compare_exchange_strong(expected, 1)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(2);
    return static_cast<int>(i);
  }
  return -1;
}

/// Forgets slot `slot` (the temporary was renamed into place or removed).
inline void remove(int slot) {
  if (slot < 0) return;
  g_slots[static_cast<std::size_t>(slot)].state.store(1);
  g_slots[static_cast<std::size_t>(slot)].path[0] = '\0';
  g_slots[static_cast<std::size_t>(slot)].state.store(0);
}

}  // namespace p3s::temporaries
