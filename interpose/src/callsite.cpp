// SPDX-License-Identifier: BSD-3-Clause
// Call sites: the first stack frame outside libp3s-interpose, described as "symbol+off [module+off]".
#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>

#include "state.hpp"

#ifdef P3S_HAVE_UNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

namespace p3s::interpose {
namespace {

/// Address range of this library's loaded segments, so its own frames (wrappers, Fortran translators)
/// are skipped.
std::uintptr_t g_self_begin = 0;
std::uintptr_t g_self_end = 0;

int find_self(dl_phdr_info* info, std::size_t, void* data) {
  const auto probe = reinterpret_cast<std::uintptr_t>(data);
  std::uintptr_t lo = UINTPTR_MAX;
  std::uintptr_t hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    lo = std::min<std::uintptr_t>(lo, info->dlpi_addr + ph.p_vaddr);
    hi = std::max<std::uintptr_t>(hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  if (probe < lo || probe >= hi) return 0;
  g_self_begin = lo;
  g_self_end = hi;
  return 1;
}

bool in_self(std::uintptr_t ip) { return ip >= g_self_begin && ip < g_self_end; }

/// Frames unwound at most: the wrappers, a Fortran translator and the scope are a few frames deep.
constexpr int kFrames = 8;

std::uintptr_t caller_ip() noexcept {
#ifdef P3S_HAVE_UNWIND
  // unw_backtrace keeps a cache of how to step from each return address (its fast trace), where a cursor
  // stepped frame by frame reads the unwind tables every time: the few frames needed, at a fraction of the cost.
  void* frames[kFrames];
  const int depth = unw_backtrace(frames, kFrames);
  for (int i = 0; i < depth; ++i) {
    const auto ip = reinterpret_cast<std::uintptr_t>(frames[i]);
    if (!in_self(ip)) return ip;
  }
  if (depth < kFrames) return 0;
  // Deeper than expected (a wrapper calling through several of its own frames): the slow walk.
  unw_context_t ctx;
  unw_cursor_t cursor;
  if (unw_getcontext(&ctx) != 0 || unw_init_local(&cursor, &ctx) != 0) return 0;
  while (unw_step(&cursor) > 0) {
    unw_word_t ip = 0;
    unw_get_reg(&cursor, UNW_REG_IP, &ip);
    if (!in_self(ip)) return ip;
  }
#endif
  return 0;
}

/// Readable and stable across ranks: the module offset does not depend on where the loader put it.
std::string describe(std::uintptr_t ip) {
  if (ip == 0) return "unknown";
  Dl_info info{};
  // ip is a return address; ip - 1 lies inside the calling instruction.
  if (dladdr(reinterpret_cast<void*>(ip - 1), &info) == 0 || info.dli_fname == nullptr) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%" PRIxPTR, ip);
    return buf;
  }
  const char* slash = std::strrchr(info.dli_fname, '/');
  const char* module = slash != nullptr ? slash + 1 : info.dli_fname;
  char buf[512];
  const auto module_off = ip - reinterpret_cast<std::uintptr_t>(info.dli_fbase);
  if (info.dli_sname != nullptr) {
    std::snprintf(buf, sizeof buf, "%s+0x%" PRIxPTR " [%s+0x%" PRIxPTR "]", info.dli_sname,
                  ip - reinterpret_cast<std::uintptr_t>(info.dli_saddr), module, module_off);
  } else {
    std::snprintf(buf, sizeof buf, "[%s+0x%" PRIxPTR "]", module, module_off);
  }
  return buf;
}

}  // namespace

void init_callsites() noexcept { dl_iterate_phdr(find_self, reinterpret_cast<void*>(&find_self)); }

std::uint64_t current_callsite(State& s, ThreadLog& log) noexcept {
  const std::uintptr_t ip = caller_ip();
  TablesGuard g(s);
  if (const std::uint32_t* found = s.callsites.find(ip)) return *found;
  try {
    const auto id = static_cast<std::uint32_t>(s.defs.callsites.size());
    std::string text = describe(ip);
    const raw::CallsiteDefinition def{id};
    log.append(raw::Kind::CallsiteDef, 0, 0, 0, &def, sizeof def, text.c_str(), text.size() + 1);
    s.defs.callsites.push_back(std::move(text));
    if (!s.callsites.put(ip, id)) ++s.failures;
    return id;
  } catch (...) {
    ++s.failures;
    return 0;
  }
}

}  // namespace p3s::interpose
