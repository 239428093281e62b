// SPDX-License-Identifier: BSD-3-Clause
// The P3S_* variable table and its parser; the README table and --help-env are generated from it.
#include "p3s/interpose/config.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>

namespace p3s::interpose {
namespace {

constexpr std::array kTable{
    EnvVar{"P3S_TRACE_DIR", "string", "p3s-trace", "",
           "directory of the run's archive (DIR/traces.otf2); must be shared by all ranks"},
    EnvVar{"P3S_COUNTERS", "enum", "auto", "auto|papi|cputime|none",
           "work counters read at each MPI call: auto = PAPI instructions if the presets exist, else thread CPU time"},
    EnvVar{"P3S_CPUTIME_WINDOW_US", "int", "20", "0..1000",
           "thread CPU time is read by a system call at most this often and after each context switch, and "
           "follows the clock in between; 0: a system call at every MPI call (exact, slow on VMs); rank 0's applies to "
           "every rank"},
    EnvVar{"P3S_CALLSITE", "bool", "0", "0|1", "record the calling location of every MPI call (libunwind)"},
    EnvVar{"P3S_BUFFER_MB", "int", "8", "1..4096",
           "event buffer per thread in MiB; it is written to disk whenever it fills"},
    EnvVar{"P3S_FLUSH_SECONDS", "int", "1", "0..3600",
           "also write the buffer when this much time passed since the last write (0: only when full), so a "
           "killed run loses at most that much"},
    EnvVar{"P3S_KEEP_RAW", "bool", "0", "0|1", "keep the raw per-thread logs after the OTF2 archive is written"},
    EnvVar{"P3S_CLOCK_SYNC", "enum", "auto", "auto|always|never",
           "measure clock offsets to rank 0 at init and finalize: auto = only for ranks on other hosts"},
    EnvVar{"P3S_ENABLE", "bool", "1", "0|1", "0 turns recording off (the library then only forwards calls)"},
    EnvVar{"P3S_VERBOSE", "bool", "0", "0|1", "rank 0 reports what it wrote on stderr"},
    EnvVar{"P3S_COMMAND", "string", "", "", "the traced command line, stored as provenance (set by p3s record)"},
    EnvVar{"P3S_RECORD_LOCK", "string", "", "",
           "the token of the p3s record that holds the trace directory's lock, which its ranks share (set by p3s "
           "record); without it the recorder takes the lock itself"},
};

/// Edit distance for "did you mean" hints on misspelt variable names.
std::size_t distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string invalid(const EnvVar& var, std::string_view value) {
  // A variable that takes any value of its type (a path) says what it takes: an empty one is what it refused.
  const std::string allowed = *var.allowed != '\0' ? std::string(var.allowed) : "a non-empty " + std::string(var.type);
  return std::string("p3s: ignoring ") + var.name + "='" + std::string(value) + "' (allowed: " + allowed +
         "); using the default " + var.default_value;
}

bool parse_bool(std::string_view v, bool& out) {
  if (v == "1" || v == "true" || v == "yes" || v == "on") {
    out = true;
    return true;
  }
  if (v == "0" || v == "false" || v == "no" || v == "off") {
    out = false;
    return true;
  }
  return false;
}

/// The whole of `v` as an integer in [lo, hi]; `out` is left alone otherwise.
bool parse_uint(std::string_view v, std::uint32_t lo, std::uint32_t hi, std::uint32_t& out) {
  std::uint32_t value = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), value);
  if (ec != std::errc{} || end != v.data() + v.size() || value < lo || value > hi) return false;
  out = value;
  return true;
}

/// Applies one recognised variable; returns false when the value is invalid.
bool apply(Config& c, std::string_view name, std::string_view v) {
  if (name == "P3S_TRACE_DIR") {
    if (v.empty()) return false;
    c.trace_dir = std::string(v);
    return true;
  }
  if (name == "P3S_COMMAND") {
    c.command = std::string(v);
    return true;
  }
  if (name == "P3S_RECORD_LOCK") {
    c.record_lock = std::string(v);
    return true;
  }
  if (name == "P3S_COUNTERS") {
    if (v == "auto")
      c.counters = CountersRequest::Auto;
    else if (v == "papi")
      c.counters = CountersRequest::Papi;
    else if (v == "cputime")
      c.counters = CountersRequest::CpuTime;
    else if (v == "none")
      c.counters = CountersRequest::None;
    else
      return false;
    return true;
  }
  if (name == "P3S_CLOCK_SYNC") {
    if (v == "auto")
      c.clock_sync = ClockSync::Auto;
    else if (v == "always")
      c.clock_sync = ClockSync::Always;
    else if (v == "never")
      c.clock_sync = ClockSync::Never;
    else
      return false;
    return true;
  }
  if (name == "P3S_BUFFER_MB") return parse_uint(v, 1, 4096, c.buffer_mb);
  if (name == "P3S_CPUTIME_WINDOW_US") return parse_uint(v, 0, 1000, c.cputime_window_us);
  if (name == "P3S_FLUSH_SECONDS") return parse_uint(v, 0, 3600, c.flush_seconds);
  if (name == "P3S_CALLSITE") return parse_bool(v, c.callsite);
  if (name == "P3S_KEEP_RAW") return parse_bool(v, c.keep_raw);
  if (name == "P3S_ENABLE") return parse_bool(v, c.enabled);
  if (name == "P3S_VERBOSE") return parse_bool(v, c.verbose);
  return false;
}

}  // namespace

std::span<const EnvVar> env_table() noexcept { return kTable; }

ParsedConfig parse_config(std::span<const char* const> environment) {
  ParsedConfig out;
  for (const char* entry : environment) {
    if (entry == nullptr || std::strncmp(entry, "P3S_", 4) != 0) continue;
    const std::string_view kv(entry);
    const auto eq = kv.find('=');
    const std::string_view name = kv.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? std::string_view{} : kv.substr(eq + 1);
    const auto* var = std::find_if(kTable.begin(), kTable.end(), [&](const EnvVar& e) { return name == e.name; });
    if (var == kTable.end()) {
      const auto* best = std::min_element(kTable.begin(), kTable.end(), [&](const EnvVar& a, const EnvVar& b) {
        return distance(name, a.name) < distance(name, b.name);
      });
      std::string msg = "p3s: unknown variable " + std::string(name);
      if (distance(name, best->name) <= 3) msg += "; did you mean " + std::string(best->name) + "?";
      out.warnings.push_back(std::move(msg));
      continue;
    }
    if (!apply(out.config, name, value)) out.warnings.push_back(invalid(*var, value));
  }
  return out;
}

std::string env_table_markdown() {
  std::string s = "| variable | default | values | meaning |\n|---|---|---|---|\n";
  for (const EnvVar& v : kTable) {
    s += std::string("| `") + v.name + "` | `" + v.default_value + "` | " + (*v.allowed ? v.allowed : v.type) + " | " +
         v.help + " |\n";
  }
  return s;
}

std::string env_table_text() {
  std::string s;
  for (const EnvVar& v : kTable) {
    std::string head = std::string(v.name) + "=" + (*v.allowed ? v.allowed : v.type);
    s += "  " + head + std::string(head.size() < 34 ? 34 - head.size() : 1, ' ') + v.help +
         " (default: " + (*v.default_value ? v.default_value : "unset") + ")\n";
  }
  return s;
}

std::string_view to_string(CountersRequest c) noexcept {
  switch (c) {
    case CountersRequest::Auto:
      return "auto";
    case CountersRequest::Papi:
      return "papi";
    case CountersRequest::CpuTime:
      return "cputime";
    case CountersRequest::None:
      return "none";
  }
  return "auto";
}

}  // namespace p3s::interpose
