// SPDX-License-Identifier: BSD-3-Clause
#include "p3s/analyzer/phase_order.hpp"

#include <nlohmann/json.hpp>

#include "p3s/analyzer/phase_finder.hpp"
#include "p3s/error.hpp"
#include "p3s/hash.hpp"
#include "p3s/json_text.hpp"

namespace p3s::analyzer {
namespace {

using nlohmann::json;

/// More runs than this is no order a run made: a damaged or crafted file.
constexpr std::uint64_t kMostRuns = std::uint64_t{1} << 28;

json run_json(const PhaseRunEntry& e) { return json::array({e.phase, e.count}); }

/// A whole number of at least `min` in `j` (counts must not be read from 8.5 or wrap around from -1).
std::uint64_t whole(const json& j, std::uint64_t min, const char* what) {
  const bool fits = j.is_number_integer() && (j.is_number_unsigned() || j.get<std::int64_t>() >= 0);
  if (!fits || j.get<std::uint64_t>() < min || j.get<std::uint64_t>() > (std::uint64_t{1} << 62)) {
    throw InputError(std::string("its phase order has ") + what + " " + json_excerpt(j) +
                     ", not a whole number of at least " + std::to_string(min));
  }
  return j.get<std::uint64_t>();
}

PhaseRunEntry run_from(const json& j) {
  if (!j.is_array() || j.size() != 2) throw InputError("an order entry is " + json_excerpt(j) + ", not [phase, count]");
  const std::uint64_t phase = whole(j.at(0), 0, "phase");
  if (phase > UINT32_MAX) throw InputError("its phase order names phase " + std::to_string(phase));
  return {static_cast<std::uint32_t>(phase), whole(j.at(1), 1, "count")};
}

}  // namespace

json order_json(std::span<const PhaseRunEntry> order) {
  // The runs folded as the ticks are (phase_finder.hpp): the outermost loops are written as loops, each body
  // folded in turn, and the stretches between them run by run.
  std::vector<TickSymbol> symbols;
  symbols.reserve(order.size());
  for (const PhaseRunEntry& e : order) symbols.push_back(mix64(mix64(e.phase + 1) ^ e.count));
  const PhaseStructure folded = find_phases(symbols);
  json out = json::array();
  for (const TopItem& t : folded.top) {
    if (t.count < 2) {
      for (std::uint64_t i = t.first_tick; i < t.first_tick + t.ticks; ++i) out.push_back(run_json(order[i]));
      continue;
    }
    out.push_back(json{{"repeat", t.count}, {"runs", order_json(order.subspan(t.first_tick, t.ticks / t.count))}});
  }
  return out;
}

namespace {

/// Loops of a phase order nested deeper than this are no order a run made (the folding nests a loop per level of
/// the program's loops): a damaged or crafted file, whose reading would recurse once per level.
constexpr int kMostDepth = 64;

/// Appends the runs of `items` (runs and loops of runs, nested `depth` deep) to `out`.
void expand(const json& items, std::vector<PhaseRunEntry>& out, int depth = 0) {
  if (!items.is_array()) throw InputError("its phase order is " + std::string(items.type_name()) + ", not an array");
  if (depth > kMostDepth) {
    throw InputError("its phase order nests loops more than " + std::to_string(kMostDepth) + " deep");
  }
  for (const json& item : items) {
    if (!item.is_object()) {
      out.push_back(run_from(item));
      if (out.size() > kMostRuns)
        throw InputError("its phase order holds more than " + std::to_string(kMostRuns) + " runs");
      continue;
    }
    if (!item.contains("repeat") || !item.contains("runs")) {
      throw InputError("an order entry is " + json_excerpt(item) + ", not {\"repeat\": k, \"runs\": [...]}");
    }
    const std::uint64_t repeat = whole(item.at("repeat"), 1, "repeat");
    std::vector<PhaseRunEntry> body;
    expand(item.at("runs"), body, depth + 1);
    if (body.empty() || repeat > kMostRuns / body.size() || out.size() + repeat * body.size() > kMostRuns) {
      throw InputError("its phase order repeats " + std::to_string(body.size()) + " runs " + std::to_string(repeat) +
                       " times: more than " + std::to_string(kMostRuns) + " runs");
    }
    for (std::uint64_t k = 0; k < repeat; ++k) out.insert(out.end(), body.begin(), body.end());
  }
}

}  // namespace

std::vector<PhaseRunEntry> order_from_json(const json& j) {
  std::vector<PhaseRunEntry> out;
  expand(j, out);
  return out;
}

}  // namespace p3s::analyzer
