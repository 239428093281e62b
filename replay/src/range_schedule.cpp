// SPDX-License-Identifier: BSD-3-Clause
// The steps of a range replay: ranges paired so that each is measured once, beside the range it talks with most;
// the black holes and noise each step needs; the schedule in words and as JSON.
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "p3s/replay/ranges.hpp"

namespace p3s::replay {
namespace {

/// Messages between every two ranges over the whole run, both ways (ranges x ranges, symmetric, zero diagonal).
std::vector<double> talk_matrix(const RangeTraffic& t) {
  const auto r = static_cast<std::size_t>(t.ranges);
  std::vector<double> out(r * r, 0.0);
  for (const RangeTraffic::Phase& p : t.phases) {
    for (std::size_t a = 0; a < r; ++a) {
      for (std::size_t b = 0; b < r; ++b) {
        if (a == b) continue;
        const double m = static_cast<double>(p.weight) * p.messages[a * r + b];
        out[a * r + b] += m;
        out[b * r + a] += m;
      }
    }
  }
  return out;
}

/// The range to measure next: the lowest unmeasured one that talks with another unmeasured range, else the lowest
/// unmeasured one (-1: none left). Taken in order, ranges that talk along a line (a pipeline, a grid's rows) pair
/// as (0, 1), (2, 3), ...: every step times two ranges, and a step's black holes stand in for ranges measured in
/// the step before it, whose send times pace them (a pipeline's wait on the range before it).
std::int64_t next_range(const std::vector<double>& talk, const std::vector<bool>& measured) {
  const auto r = measured.size();
  std::int64_t lowest = -1;
  for (std::size_t a = 0; a < r; ++a) {
    if (measured[a]) continue;
    if (lowest < 0) lowest = static_cast<std::int64_t>(a);
    for (std::size_t b = 0; b < r; ++b) {
      if (b != a && !measured[b] && talk[a * r + b] > 0) return static_cast<std::int64_t>(a);
    }
  }
  return lowest;
}

/// Range a's partner: the unmeasured range it talks with most, else the measured one it talks with most, else the
/// next unmeasured range, else any other; -1 where a is the only range.
std::int64_t partner_of(std::int64_t a, const std::vector<double>& talk, const std::vector<bool>& measured) {
  const auto r = measured.size();
  const auto ua = static_cast<std::size_t>(a);
  for (const bool want_measured : {false, true}) {
    std::int64_t best = -1;
    double most = 0;
    for (std::size_t b = 0; b < r; ++b) {
      if (b == ua || measured[b] != want_measured) continue;
      if (talk[ua * r + b] > most) {
        most = talk[ua * r + b];
        best = static_cast<std::int64_t>(b);
      }
    }
    if (best >= 0) return best;
  }
  for (const bool want_measured : {false, true}) {
    for (std::size_t k = 1; k < r; ++k) {
      const std::size_t b = (ua + k) % r;
      if (measured[b] == want_measured) return static_cast<std::int64_t>(b);
    }
  }
  return -1;
}

/// Whether range x is one of the step's.
bool in_step(std::int64_t x, const RangeStep& s) { return x == s.first || x == s.second; }

/// The step's black holes, messages and noise.
void fill_step(const RangeTraffic& t, RangeStep& s) {
  const auto r = static_cast<std::size_t>(t.ranges);
  for (const std::int64_t range : {s.first, s.second}) {
    if (range < 0) continue;
    for (std::int64_t rank = t.first_rank(range); rank < t.end_rank(range); ++rank) {
      if (t.talks_outside(rank, s.first, s.second)) ++s.black_holes;
    }
  }
  if (s.second >= 0) s.between_messages = t.messages_between(s.first, s.second);
  for (const RangeTraffic::Phase& p : t.phases) {
    double full = 0;  // messages between ranges in the full run, per instance
    double full_bytes = 0;
    double step = 0;  // of those, the ones the step makes (between its ranges, or to and from a black hole)
    double step_bytes = 0;
    for (std::size_t a = 0; a < r; ++a) {
      for (std::size_t b = 0; b < r; ++b) {
        if (a == b) continue;
        const double m = p.messages[a * r + b];
        full += m;
        full_bytes += p.bytes[a * r + b];
        if (in_step(static_cast<std::int64_t>(a), s) || in_step(static_cast<std::int64_t>(b), s)) {
          step += m;
          step_bytes += p.bytes[a * r + b];
          const bool both = in_step(static_cast<std::int64_t>(a), s) && in_step(static_cast<std::int64_t>(b), s);
          if (!both) s.external_messages += static_cast<double>(p.weight) * m;
        }
      }
    }
    const double noise = std::max(0.0, full - step);
    s.noise_messages.push_back(noise);
    s.noise_bytes.push_back(noise > 0 ? std::max(0.0, full_bytes - step_bytes) / noise : 0.0);
  }
}

/// The notes of phases whose collectives span more ranks than a step measures.
std::vector<std::string> collective_notes(const RangeTraffic& t) {
  std::vector<std::string> out;
  const std::int64_t measured = std::min(t.processes, 2 * t.range_size);
  for (const RangeTraffic::Phase& p : t.phases) {
    if (p.widest_collective <= measured) continue;
    out.push_back("phase " + std::to_string(p.id) + ": collectives over up to " + std::to_string(p.widest_collective) +
                  " ranks span more than the " + std::to_string(measured) +
                  " measured ranks: a step runs them on its own ranks, so their cost is approximated");
  }
  return out;
}

std::string ranks_text(const RangeTraffic& t, std::int64_t range) {
  const std::int64_t first = t.first_rank(range);
  const std::int64_t last = t.end_rank(range) - 1;
  return first == last ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(last);
}

std::string count_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

}  // namespace

std::int64_t RangeSchedule::job_size() const {
  return std::min(processes, (ranges > 1 ? 2 : 1) * range_size) + black_holes + noise_ranks;
}

RangeSchedule schedule_ranges(const RangeTraffic& traffic) {
  RangeSchedule out;
  out.processes = traffic.processes;
  out.range_size = traffic.range_size;
  out.ranges = traffic.ranges;
  const std::vector<double> talk = talk_matrix(traffic);
  std::vector<bool> measured(static_cast<std::size_t>(traffic.ranges), false);
  for (std::int64_t a = next_range(talk, measured); a >= 0; a = next_range(talk, measured)) {
    const std::int64_t b = partner_of(a, talk, measured);
    RangeStep s;
    s.first = b < 0 ? a : std::min(a, b);
    s.second = b < 0 ? -1 : std::max(a, b);
    s.first_timed = !measured[static_cast<std::size_t>(s.first)];
    s.second_timed = s.second >= 0 && !measured[static_cast<std::size_t>(s.second)];
    measured[static_cast<std::size_t>(a)] = true;
    if (b >= 0) measured[static_cast<std::size_t>(b)] = true;
    fill_step(traffic, s);
    out.black_holes = std::max(out.black_holes, s.black_holes);
    out.steps.push_back(std::move(s));
  }
  for (const RangeStep& s : out.steps) {
    for (const double m : s.noise_messages) {
      if (m > 0) out.noise_ranks = 2;
    }
  }
  out.notes = collective_notes(traffic);
  return out;
}

std::string schedule_summary(const RangeSchedule& s) {
  RangeTraffic shape;  // for the ranks of each range
  shape.processes = s.processes;
  shape.range_size = s.range_size;
  shape.ranges = s.ranges;
  std::ostringstream o;
  o << "range replay of " << s.processes << " ranks: " << s.ranges << " ranges of " << s.range_size
    << " consecutive ranks (one node each), " << s.steps.size() << " steps of two ranges\n";
  o << " step  ranges        ranks                 timed    black holes  messages between / outside\n";
  for (std::size_t k = 0; k < s.steps.size(); ++k) {
    const RangeStep& st = s.steps[k];
    const std::string ranges =
        std::to_string(st.first) + (st.second >= 0 ? " + " + std::to_string(st.second) : std::string());
    const std::string ranks =
        ranks_text(shape, st.first) + (st.second >= 0 ? " + " + ranks_text(shape, st.second) : std::string());
    const std::string timed = st.first_timed && (st.second < 0 || st.second_timed) ? "both"
                              : st.first_timed                                     ? "first"
                              : st.second_timed                                    ? "second"
                                                                                   : "none";
    char line[256];
    std::snprintf(line, sizeof line, "%5zu  %-12s  %-20s  %-7s  %11lld  %s / %s\n", k + 1, ranges.c_str(),
                  ranks.c_str(), timed.c_str(), static_cast<long long>(st.black_holes),
                  count_text(st.between_messages).c_str(), count_text(st.external_messages).c_str());
    o << line;
  }
  const std::int64_t measured = s.job_size() - s.black_holes - s.noise_ranks;
  o << "job          " << measured << " measured + " << s.black_holes << " black holes + " << s.noise_ranks
    << " noise = " << s.job_size() << " ranks\n";
  for (const std::string& n : s.notes) o << "note: " << n << '\n';
  return o.str();
}

std::string schedule_json(const RangeSchedule& s) {
  nlohmann::ordered_json j;
  j["kind"] = "range_schedule";
  j["processes"] = s.processes;
  j["range_size"] = s.range_size;
  j["ranges"] = s.ranges;
  j["job_size"] = s.job_size();
  j["black_holes"] = s.black_holes;
  j["noise_ranks"] = s.noise_ranks;
  j["steps"] = nlohmann::ordered_json::array();
  for (const RangeStep& st : s.steps) {
    nlohmann::ordered_json e;
    e["ranges"] = st.second >= 0 ? nlohmann::ordered_json{st.first, st.second} : nlohmann::ordered_json{st.first};
    e["timed"] = st.second >= 0 ? nlohmann::ordered_json{st.first_timed, st.second_timed}
                                : nlohmann::ordered_json{st.first_timed};
    e["black_holes"] = st.black_holes;
    e["between_messages"] = st.between_messages;
    e["external_messages"] = st.external_messages;
    e["noise_messages"] = st.noise_messages;
    e["noise_bytes"] = st.noise_bytes;
    j["steps"].push_back(std::move(e));
  }
  j["notes"] = s.notes;
  return j.dump(1) + "\n";
}

}  // namespace p3s::replay
