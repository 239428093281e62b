// SPDX-License-Identifier: BSD-3-Clause
// generate(): the archive around the simulation, built with the recorder's own definition writer and archive
// helpers so that a synthetic archive cannot drift from what `p3s record` writes; count_events(): the event count
// of a program from its structure, used to size the outermost loop for --target-events.
#include "p3s/synth/generator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <unordered_map>

#include "archive_io.hpp"
#include "converter.hpp"
#include "p3s/error.hpp"
#include "p3s/trace/schema.hpp"
#include "p3s/utc_date.hpp"
#include "p3s/version.hpp"
#include "simulator.hpp"

namespace p3s::synth {
namespace fs = std::filesystem;
namespace {

using detail::Layout;
using detail::Simulator;

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
/// Longest cycle of iteration shapes a loop may have (the lcm of its inner count lists' lengths).
constexpr std::uint64_t kMaxPeriod = 1000000;
/// Event writers open at once: each holds up to 2-4 MiB of chunks and OTF2's 4 MiB file buffer.
constexpr int kMaxOpenWriters = 32;
/// --target-events must be met within this relative error.
constexpr double kTargetTolerance = 0.10;

std::uint64_t add_sat(std::uint64_t a, std::uint64_t b) { return a > kMax - b ? kMax : a + b; }
std::uint64_t mul_sat(std::uint64_t a, std::uint64_t b) { return a != 0 && b > kMax / a ? kMax : a * b; }

/// Event counts of a program's parts. A leaf step always writes the same records (only times and byte counts
/// vary), so it is simulated once in count mode; loops multiply.
class Counter {
 public:
  Counter(const Program& program, const Layout& layout) : sim_(program, layout, 0, {}) {}

  /// MPI_Init, the communicator splits and frees, MPI_Finalize.
  std::uint64_t fixed() {
    const std::uint64_t before = sim_.events();
    sim_.prologue();
    sim_.epilogue();
    return sim_.events() - before;
  }

  std::uint64_t step(const Step& s, std::uint64_t parent_iteration) {
    if (const Loop* l = std::get_if<Loop>(&s.op)) return loop(*l, l->counts[parent_iteration % l->counts.size()]);
    const auto it = leaves_.find(&s);
    if (it != leaves_.end()) return it->second;
    const std::uint64_t before = sim_.events();
    sim_.run(s, 0);
    return leaves_[&s] = sim_.events() - before;
  }

  /// Events of iteration i of a loop's body.
  std::uint64_t iteration(const Loop& l, std::uint64_t i) {
    std::uint64_t e = 0;
    for (const Step& s : l.body) e = add_sat(e, step(s, i));
    return e;
  }

  /// Iterations have the same events whenever their index is the same modulo this period.
  static std::uint64_t period(const Loop& l) {
    std::uint64_t p = 1;
    for (const Step& s : l.body) {
      if (const Loop* inner = std::get_if<Loop>(&s.op)) {
        p = std::lcm(p, static_cast<std::uint64_t>(inner->counts.size()));
        if (p > kMaxPeriod) {
          throw InputError("" + s.where + ": the count lists inside one loop repeat only every " + std::to_string(p) +
                           "+ iterations; use lists whose lengths share factors");
        }
      }
    }
    return p;
  }

  /// Events of `count` iterations of `l`.
  std::uint64_t loop(const Loop& l, std::uint64_t count) {
    if (count == 0) return 0;
    const std::uint64_t p = std::min(period(l), count);
    std::uint64_t per_period = 0;
    std::uint64_t rest = 0;
    for (std::uint64_t i = 0; i < p; ++i) {
      const std::uint64_t e = iteration(l, i);
      per_period = add_sat(per_period, e);
      if (i < count % p) rest = add_sat(rest, e);
    }
    return add_sat(mul_sat(count / p, per_period), rest);
  }

 private:
  Simulator sim_;
  std::unordered_map<const Step*, std::uint64_t> leaves_;
};

/// The outermost loop --target-events resizes and its new count.
struct Scaling {
  std::size_t index = 0;  ///< in program.body
  std::uint64_t count = 0;
  std::uint64_t events = 0;  ///< of the whole program with that count
};

Scaling scale_for_target(const Program& program, const Layout& layout, std::uint64_t target) {
  Counter counter(program, layout);
  // The loop marked "scale", else the top-level loop holding the most events.
  std::optional<std::size_t> chosen;
  std::uint64_t best = 0;
  for (std::size_t i = 0; i < program.body.size(); ++i) {
    const Loop* l = std::get_if<Loop>(&program.body[i].op);
    if (l == nullptr) continue;
    if (l->scale) {
      chosen = i;
      break;
    }
    const std::uint64_t e = counter.loop(*l, l->counts.front());
    if (!chosen || e > best) {
      chosen = i;
      best = e;
    }
  }
  if (!chosen) {
    throw InputError("program '" + program.source +
                     "': --target-events resizes the outermost loop, but the body has no top-level loop; wrap the "
                     "repeated steps in {\"op\": \"loop\", ...}");
  }
  const Loop& l = std::get<Loop>(program.body[*chosen].op);
  std::uint64_t fixed = counter.fixed();
  for (std::size_t i = 0; i < program.body.size(); ++i) {
    if (i != *chosen) fixed = add_sat(fixed, counter.step(program.body[i], 0));
  }
  const std::uint64_t p = Counter::period(l);
  std::vector<std::uint64_t> prefix(p + 1, 0);
  for (std::uint64_t i = 0; i < p; ++i) prefix[i + 1] = add_sat(prefix[i], counter.iteration(l, i));
  if (prefix[p] == 0) {
    throw InputError("program '" + program.source + "', " + program.body[*chosen].where +
                     ": --target-events resizes this loop, but its body writes no events");
  }
  auto total = [&](std::uint64_t k) { return add_sat(fixed, add_sat(mul_sat(k / p, prefix[p]), prefix[k % p])); };
  const std::uint64_t room = target > fixed ? target - fixed : 0;
  const std::uint64_t q = room / prefix[p];
  Scaling s{*chosen, 1, total(1)};
  auto distance = [&](std::uint64_t e) { return e > target ? e - target : target - e; };
  // The best count lies within one period of q full periods.
  for (std::uint64_t k = (q > 0 ? (q - 1) * p : 1); k <= (q + 1) * p; ++k) {
    if (k == 0) continue;
    const std::uint64_t e = total(k);
    if (distance(e) < distance(s.events)) s = Scaling{*chosen, k, e};
  }
  if (static_cast<double>(distance(s.events)) > kTargetTolerance * static_cast<double>(target)) {
    throw InputError("--target-events " + std::to_string(target) + " cannot be met within 10 % at " +
                     std::to_string(layout.ranks) + " ranks: the closest is " + std::to_string(s.events) + " events (" +
                     program.body[*chosen].where + " count " + std::to_string(s.count) +
                     "); ask for more events, or shorten the steps outside that loop");
  }
  return s;
}

void check(bool ok, const std::string& error) {
  if (!ok) throw Otf2Error("" + error);
}

std::string command_line(const Program& program, int ranks, const GenerateOptions& o) {
  // No output path: the same inputs give the same definitions wherever they are written.
  std::string c =
      "p3s-synth " + program.source + " --ranks " + std::to_string(ranks) + " --seed " + std::to_string(o.seed);
  if (o.target_events) c += " --target-events " + std::to_string(*o.target_events);
  return c + " (synthetic trace: no application ran)";
}

/// What the archive says about the synthetic run.
interpose::RunInfo run_info(const Program& program, int ranks, const GenerateOptions& options) {
  interpose::RunInfo run;
  run.world_size = ranks;
  run.counters.mode = interpose::CounterMode::CpuTime;
  run.counters.count = 1;
  run.counters.names[0] = trace::metric::kCpuTime;
  run.counters.note = "synthetic trace: cputime_ns is simulated by p3s-synth";
  run.counters_requested = "cputime";
  run.thread_level = interpose::thread_level_name(0);
  run.command = command_line(program, ranks, options);
  // A fixed date: equal inputs give equal definitions.
  run.date = utc_date(0);
  for (int r = 0; r < ranks; ++r) {
    const int node = program.ranks_per_node > 0 ? r / program.ranks_per_node : 0;
    run.hosts.push_back("synth-node" + std::to_string(node));
  }
  run.complete = true;
  return run;
}

}  // namespace

std::uint64_t count_events(const Program& program, int ranks) {
  const Layout layout = detail::make_layout(program, ranks);
  Counter counter(program, layout);
  std::uint64_t e = counter.fixed();
  for (const Step& s : program.body) e = add_sat(e, counter.step(s, 0));
  return e;
}

GenerateResult generate(const Program& program, const GenerateOptions& options) {
  const int ranks = options.ranks.value_or(program.ranks);
  if (ranks < 1) throw InputError("--ranks must be at least 1, not " + std::to_string(ranks));
  const Layout layout = detail::make_layout(program, ranks);

  GenerateResult result;
  result.ranks = ranks;
  std::optional<Scaling> scaling;
  std::uint64_t expected = 0;
  if (options.target_events) {
    scaling = scale_for_target(program, layout, *options.target_events);
    expected = scaling->events;
    result.scaled_loop = program.body[scaling->index].where;
    result.scaled_count = scaling->count;
  } else {
    expected = count_events(program, ranks);
  }

  const std::string dir = fs::absolute(options.out_dir).lexically_normal().string();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError("cannot create the output directory '" + dir + "': " + ec.message());
  std::string error;
  check(interpose::clear_archive(dir, error), error);

  // Until its writer is closed, OTF2 holds a rank's events in its write chunks plus a 4 MiB file buffer of its
  // own. Ranks are therefore written in batches of at most kMaxOpenWriters, the whole simulation running once per
  // batch (it is deterministic), so memory stays bounded whatever the length of the run and the number of ranks.
  const int batch = std::min(ranks, kMaxOpenWriters);
  interpose::ArchivePtr archive = interpose::create_archive(interpose::partial_dir(dir), error, batch <= 16 ? 4u : 2u);
  check(archive != nullptr, error);
  try {
    check(interpose::try_otf2(OTF2_Archive_SetSerialCollectiveCallbacks(archive.get()), "setting serial callbacks",
                              error),
          error);
    std::vector<interpose::LocationStats> stats(static_cast<std::size_t>(ranks));
    interpose::ArchiveParts parts;
    parts.events = [&](OTF2_Archive* a, std::vector<std::uint64_t>& locations, std::string& err) {
      std::uint64_t first = kMax;
      std::uint64_t last = 0;
      for (int begin = 0; begin < ranks; begin += batch) {
        const int end = std::min(ranks, begin + batch);
        std::vector<OTF2_EvtWriter*> writers(static_cast<std::size_t>(ranks), nullptr);
        for (int r = begin; r < end; ++r) {
          writers[static_cast<std::size_t>(r)] = OTF2_Archive_GetEvtWriter(a, interpose::location_id(r, 0));
          check(writers[static_cast<std::size_t>(r)] != nullptr,
                "cannot open the event writer of rank " + std::to_string(r));
        }
        Simulator sim(program, layout, options.seed, writers);
        sim.prologue();
        for (std::size_t i = 0; i < program.body.size(); ++i) {
          sim.run(program.body[i], 0, scaling && scaling->index == i ? &scaling->count : nullptr);
        }
        sim.epilogue();
        if (sim.events() != expected) {
          throw std::logic_error("p3s-synth wrote " + std::to_string(sim.events()) + " events but counted " +
                                 std::to_string(expected) + " beforehand");
        }
        for (int r = begin; r < end; ++r) {
          interpose::LocationStats& s = stats[static_cast<std::size_t>(r)];
          OTF2_EvtWriter* w = writers[static_cast<std::size_t>(r)];
          s.location = interpose::location_id(r, 0);
          s.rank = r;
          s.thread = 0;
          check(interpose::try_otf2(OTF2_EvtWriter_GetNumberOfEvents(w, &s.events), "counting events", err), err);
          // The location definition announces every record OTF2 holds, or readers reject the archive.
          if (s.events < sim.events(r)) {
            throw std::logic_error("OTF2 holds " + std::to_string(s.events) + " events of rank " + std::to_string(r) +
                                   ", the simulation wrote " + std::to_string(sim.events(r)));
          }
          s.first_ns = sim.first_ns(r);
          s.last_ns = sim.last_ns(r);
          s.complete = 1;
          first = std::min(first, s.first_ns);
          last = std::max(last, s.last_ns);
          result.events += s.events;
          result.events_per_rank.push_back(s.events);
          check(interpose::try_otf2(OTF2_Archive_CloseEvtWriter(a, w), "closing an event writer", err), err);
          locations.push_back(s.location);
        }
      }
      result.duration_ns = last - first;
      return true;
    };
    parts.global_definitions = [&](OTF2_Archive* a, std::string& err) {
      return interpose::write_global_definitions(a, run_info(program, ranks, options), layout.unified, stats, err);
    };
    check(interpose::write_archive(std::move(archive), parts, error), error);
    check(interpose::publish_archive(dir, error), error);
  } catch (...) {
    // Never leave a half-written archive behind: a reader would find its anchor but not its data.
    archive.reset();
    std::string ignored;
    (void)interpose::clear_archive(dir, ignored);
    throw;
  }
  result.archive = fs::path(dir) / (std::string(trace::kArchiveName) + ".otf2");
  return result;
}

}  // namespace p3s::synth
