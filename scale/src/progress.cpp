// SPDX-License-Identifier: BSD-3-Clause
#include "progress.hpp"

#include <algorithm>
#include <cstdio>

namespace p3s::scale::detail {
namespace {

std::string duration(double s) {
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%.0f s", s);
  } else if (s < 3600) {
    const long whole = static_cast<long>(s);
    std::snprintf(buf, sizeof buf, "%ld min %02ld s", whole / 60, whole % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  }
  return buf;
}

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

Progress::Progress(std::size_t steps, bool live)
    : steps_(steps), live_(live), start_(std::chrono::steady_clock::now()) {}

void Progress::begin(const std::string& kind, const std::string& label) {
  kind_ = kind;
  label_ = label;
  step_start_ = std::chrono::steady_clock::now();
  tick();
}

double Progress::seconds_left() const {
  // Each kind's steps to come at the mean time of its steps run so far; a kind not run yet at the mean of all.
  double total = 0;
  int runs = 0;
  for (const auto& [kind, s] : spent_) {
    total += s.first;
    runs += s.second;
  }
  const double overall = runs > 0 ? total / runs : 0;
  double left = 0;
  for (const auto& [kind, count] : left_) {
    const auto s = spent_.find(kind);
    const double each = s != spent_.end() && s->second.second > 0 ? s->second.first / s->second.second : overall;
    left += each * count;
  }
  const auto mine = spent_.find(kind_);
  const double each =
      mine != spent_.end() && mine->second.second > 0 ? mine->second.first / mine->second.second : overall;
  return left - std::min(each, since(step_start_));  // this step is among those left, partly run
}

std::string Progress::status() const {
  char buf[96];
  const double share = steps_ > 0 ? 100.0 * static_cast<double>(done_) / static_cast<double>(steps_) : 100;
  std::snprintf(buf, sizeof buf, "[%zu/%zu %3.0f%%] ", done_ + 1, steps_, share);
  std::string out = buf + label_ + "  elapsed " + duration(since(start_));
  const double left = seconds_left();
  if (!spent_.empty() && left > 0) out += ", about " + duration(left) + " left";
  return out;
}

void Progress::tick() {
  if (!live_) return;
  std::fprintf(stderr, "\r\033[K%s", status().c_str());
  std::fflush(stderr);
}

void Progress::end(bool skipped) {
  const double took = since(step_start_);
  if (!skipped) {
    auto& s = spent_[kind_];
    s.first += took;
    ++s.second;
  }
  auto& left = left_[kind_];
  if (left > 0) --left;
  char buf[64];
  std::snprintf(buf, sizeof buf, "[%zu/%zu] ", done_ + 1, steps_);
  const std::string line = buf + label_ + (skipped ? ": done before" : ": " + duration(took));
  std::fprintf(stderr, live_ ? "\r\033[K%s\n" : "%s\n", line.c_str());
  std::fflush(stderr);
  ++done_;
}

}  // namespace p3s::scale::detail
