// SPDX-License-Identifier: BSD-3-Clause
// The predicted run as SimGrid's time-independent trace: each rank's bursts as compute actions, its messages with
// tags renumbered so that the format's (source, destination, tag) request keys are unique, world collectives as the
// format's own, and collectives on other communicators as messages among their members.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "p3s/error.hpp"
#include "p3s/modeler/dims.hpp"
#include "p3s/modeler/tit_trace.hpp"
#include "p3s/whole_file.hpp"

namespace p3s::modeler {
namespace {

namespace fs = std::filesystem;

/// Messages of one (communicator, tag) in one instance, at most: a renumbered tag is base x this + the message.
constexpr std::int64_t kTagStride = std::int64_t{1} << 16;
/// The tag the messages of a collective written as messages count under.
constexpr std::uint32_t kCollectiveTag = 0xfffffffeU;

std::string num(double v) {
  const double r = std::round(std::max(v, 0.0));
  return std::to_string(static_cast<std::int64_t>(r));
}

/// Renumbered tags, shared by every rank (so that both ends of a message agree): one base per (communicator, tag).
class Tags {
 public:
  explicit Tags(std::int64_t n) : n_(n) {}

  /// The communicator's identity: world 0, then each communicator model (equal at n: one identity).
  std::size_t comm(const CommModel* c) {
    if (c == nullptr || c->kind == CommModel::Kind::World) return 0;
    for (std::size_t i = 0; i < comms_.size(); ++i) {
      if (comms_[i]->same_at(*c, n_) && comms_[i]->created_by == c->created_by) return i + 1;
    }
    comms_.push_back(c);
    return comms_.size();
  }

  /// The tag of message `k` of (communicator, tag) in an instance.
  std::int64_t tag(std::size_t comm, std::uint32_t tag, std::int64_t k) {
    const auto [it, inserted] = bases_.try_emplace({comm, tag}, static_cast<std::int64_t>(bases_.size()));
    if (k >= kTagStride || it->second >= (std::int64_t{1} << 31) / kTagStride) {
      throw TraceError(
          "a phase has more messages of one tag, or more tags, than the time-independent format's tags "
          "can tell apart");
    }
    return it->second * kTagStride + k;
  }

 private:
  std::int64_t n_;
  std::vector<const CommModel*> comms_;
  std::map<std::pair<std::size_t, std::uint32_t>, std::int64_t> bases_;
};

/// One rank's instance of a phase as lines of the format.
class InstanceText {
 public:
  InstanceText(std::int64_t r, std::int64_t n, Tags& tags, std::set<std::string>& notes, double flops)
      : r_(r), n_(n), tags_(tags), notes_(notes), flops_(flops), prefix_(std::to_string(r) + ' ') {}

  std::string make(const PredictedRank& rank) {
    started_.assign(rank.calls.size(), {});
    for (std::size_t i = 0; i < rank.calls.size(); ++i) {
      const PredictedCall& c = rank.calls[i];
      compute(c.burst_ns.value_or(0));
      const mpi::CallKind kind = mpi::kind(c.function);
      if (kind == mpi::CallKind::Init || kind == mpi::CallKind::Finalize) continue;  // the trace's own init, finalize
      for (const PredictedAction& x : c.actions) action(c, x, i);
    }
    compute(rank.tail_ns.value_or(0));
    if (pending_ns_ > 0) {
      const double ns = pending_ns_;
      pending_ns_ = 0;
      line("compute " + num(ns * 1e-9 * flops_));
    }
    return std::move(text_);
  }

 private:
  void line(const std::string& s) {
    if (pending_ns_ > 0) {  // the bursts before a call that writes no action join the next one
      const double ns = pending_ns_;
      pending_ns_ = 0;
      line("compute " + num(ns * 1e-9 * flops_));
    }
    text_ += prefix_;
    text_ += s;
    text_ += '\n';
  }

  void compute(double ns) { pending_ns_ += std::max(ns, 0.0); }

  std::int64_t next(std::map<std::tuple<std::size_t, std::uint32_t, std::int64_t>, std::int64_t>& counts,
                    std::size_t comm, std::uint32_t tag, std::int64_t peer) {
    return tags_.tag(comm, tag, counts[{comm, tag, peer}]++);
  }
  std::int64_t send_tag(const CommModel* c, std::uint32_t tag, std::int64_t to) {
    return next(sent_, tags_.comm(c), tag, to);
  }
  std::int64_t recv_tag(const CommModel* c, std::uint32_t tag, std::int64_t from) {
    return next(received_, tags_.comm(c), tag, from);
  }

  /// The wait of the request of kind `kind` that call `call` started first and nothing waited for yet.
  void wait(std::int32_t call, mpi::ActionKind kind) {
    if (call < 0 || static_cast<std::size_t>(call) >= started_.size()) return;
    auto& list = started_[static_cast<std::size_t>(call)];
    const auto it = std::find_if(list.begin(), list.end(), [kind](const auto& s) { return s.first == kind; });
    if (it == list.end()) return;
    line("wait " + it->second);
    list.erase(it);
  }

  void action(const PredictedCall& c, const PredictedAction& x, std::size_t call) {
    const bool receive = x.kind == mpi::ActionKind::IrecvPost || (x.kind == mpi::ActionKind::Recv && x.started < 0);
    if (receive && (x.peer == kAnySource || x.tag == kAnyTag)) {
      throw TraceError("rank " + std::to_string(r_) + "'s " + c.call + " receives " +
                       (x.peer == kAnySource ? "from any source" : "with any tag") +
                       ", which the time-independent format cannot say");
    }
    switch (x.kind) {
      case mpi::ActionKind::Send: {
        if (x.peer < 0) return;  // MPI_PROC_NULL
        const std::int64_t t = send_tag(x.comm, x.tag, x.peer);
        const std::string args = std::to_string(x.peer) + ' ' + std::to_string(t) + ' ' + num(x.bytes);
        if (!starts_requests(c.function)) return line("send " + args);
        line("isend " + args);
        started_[call].emplace_back(x.kind,
                                    std::to_string(r_) + ' ' + std::to_string(x.peer) + ' ' + std::to_string(t));
        return;
      }
      case mpi::ActionKind::IrecvPost: {
        if (x.peer < 0) return;
        const std::int64_t t = recv_tag(x.comm, x.tag, x.peer);
        line("irecv " + std::to_string(x.peer) + ' ' + std::to_string(t) + ' ' + num(x.bytes));
        started_[call].emplace_back(x.kind,
                                    std::to_string(x.peer) + ' ' + std::to_string(r_) + ' ' + std::to_string(t));
        return;
      }
      case mpi::ActionKind::Recv:
        if (x.started >= 0) return wait(x.started, mpi::ActionKind::IrecvPost);
        if (x.peer < 0) return;
        return line("recv " + std::to_string(x.peer) + ' ' + std::to_string(recv_tag(x.comm, x.tag, x.peer)) + ' ' +
                    num(x.bytes));
      case mpi::ActionKind::IsendComplete:
        return wait(x.started, mpi::ActionKind::Send);
      case mpi::ActionKind::Collective:
      case mpi::ActionKind::NbCollRequest:
        return collective(x);
      default:
        return;  // a non-blocking collective's completion: written as the collective where it started
    }
  }

  /// The operation the format has nearest to `op`, and a note where it is not `op` itself.
  mpi::Collective nearest(mpi::Collective op) {
    using C = mpi::Collective;
    const auto as = [&](C other, const char* name) {
      notes_.insert(std::string("a ") + name + " is written as " +
                    (other == C::Allreduce ? "an allreduce" : "its regular form") +
                    " (the time-independent format has no such collective), with each member's mean block");
      return other;
    };
    switch (op) {
      case C::Gatherv:
        return as(C::Gather, "gatherv");
      case C::Scatterv:
        return as(C::Scatter, "scatterv");
      case C::Allgatherv:
        return as(C::Allgather, "allgatherv");
      case C::Alltoallv:
      case C::Alltoallw:
        return as(C::Alltoall, "alltoallv/w");
      case C::ReduceScatter:
      case C::ReduceScatterBlock:
        return as(C::Allreduce, "reduce-scatter");
      case C::Scan:
      case C::Exscan:
        return as(C::Allreduce, "scan/exscan");
      default:
        return op;
    }
  }

  void collective(const PredictedAction& x) {
    using C = mpi::Collective;
    const C op = nearest(x.collective);
    if (op != C::Barrier && op != C::Bcast && op != C::Reduce && op != C::Allreduce && op != C::Alltoall &&
        op != C::Gather && op != C::Allgather && op != C::Scatter) {
      return;  // communicator creation and destruction: no-ops in the format
    }
    if (x.comm != nullptr && x.comm->kind == CommModel::Kind::Self) return;
    if (x.comm != nullptr && x.comm->kind != CommModel::Kind::World && x.comm->size_of(r_, n_) != n_) {
      return as_messages(op, x);
    }
    const std::string b = num(x.block);
    const std::string root = std::to_string(std::max<std::int64_t>(x.root, 0));
    switch (op) {
      case C::Barrier:
        return line("barrier");
      case C::Bcast:
        return line("bcast " + b + ' ' + root);
      case C::Reduce:
        return line("reduce " + b + " 0 " + root);
      case C::Allreduce:
        return line("allreduce " + b + " 0");
      case C::Alltoall:
        return line("alltoall " + b + ' ' + b);
      case C::Gather:
        return line("gather " + b + ' ' + b + ' ' + root);
      case C::Allgather:
        return line("allgather " + b + ' ' + b);
      default:
        return line("scatter " + b + ' ' + b + ' ' + root);
    }
  }

  // A collective on a communicator of m members as messages; `v` is this rank's index relative to the root.
  void send_to(const std::vector<std::int64_t>& members, std::int64_t index, double bytes) {
    const std::int64_t to = members[static_cast<std::size_t>(index)];
    line("send " + std::to_string(to) + ' ' + std::to_string(send_tag(comm_, kCollectiveTag, to)) + ' ' + num(bytes));
  }
  void recv_from(const std::vector<std::int64_t>& members, std::int64_t index, double bytes) {
    const std::int64_t from = members[static_cast<std::size_t>(index)];
    line("recv " + std::to_string(from) + ' ' + std::to_string(recv_tag(comm_, kCollectiveTag, from)) + ' ' +
         num(bytes));
  }

  /// Binomial tree from `root`: each member receives from its parent, then sends to its children.
  void tree_bcast(const std::vector<std::int64_t>& m, std::int64_t me, std::int64_t root, double bytes) {
    const auto size = static_cast<std::int64_t>(m.size());
    const std::int64_t v = (me - root + size) % size;
    std::int64_t mask = 1;
    for (; mask < size; mask <<= 1) {
      if ((v & mask) != 0) {
        recv_from(m, (v - mask + root) % size, bytes);
        break;
      }
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
      if (v + mask < size) send_to(m, (v + mask + root) % size, bytes);
    }
  }

  /// Binomial tree to `root`: each member receives from its children, then sends to its parent.
  void tree_reduce(const std::vector<std::int64_t>& m, std::int64_t me, std::int64_t root, double bytes) {
    const auto size = static_cast<std::int64_t>(m.size());
    const std::int64_t v = (me - root + size) % size;
    for (std::int64_t mask = 1; mask < size; mask <<= 1) {
      if ((v & mask) != 0) return send_to(m, (v - mask + root) % size, bytes);
      if (v + mask < size) recv_from(m, (v + mask + root) % size, bytes);
    }
  }

  void as_messages(mpi::Collective op, const PredictedAction& x) {
    using C = mpi::Collective;
    notes_.insert(
        "collectives on communicators other than the world (which the format lacks) are written as "
        "messages among their members: binomial trees for bcast, reduce, allreduce, barrier and "
        "allgather, linear gather and scatter, pairwise alltoall");
    comm_ = x.comm;
    const std::vector<std::int64_t> m = x.comm->members(r_, n_);
    const auto size = static_cast<std::int64_t>(m.size());
    const auto at = [&](std::int64_t world) {
      return static_cast<std::int64_t>(std::find(m.begin(), m.end(), world) - m.begin()) %
             std::max<std::int64_t>(size, 1);
    };
    const std::int64_t me = at(r_);
    const std::int64_t root = x.root >= 0 ? at(x.root) : 0;
    const double b = x.block;
    switch (op) {
      case C::Bcast:
        return tree_bcast(m, me, root, b);
      case C::Reduce:
        return tree_reduce(m, me, root, b);
      case C::Barrier:
      case C::Allreduce:
        tree_reduce(m, me, 0, op == C::Barrier ? 0 : b);
        return tree_bcast(m, me, 0, op == C::Barrier ? 0 : b);
      case C::Allgather:
        if (me != 0) send_to(m, 0, b);
        for (std::int64_t i = 1; me == 0 && i < size; ++i) recv_from(m, i, b);
        return tree_bcast(m, me, 0, b * static_cast<double>(size));
      case C::Gather:
        if (me != root) return send_to(m, root, b);
        for (std::int64_t i = 0; i < size; ++i) {
          if (i != root) recv_from(m, i, b);
        }
        return;
      case C::Scatter:
        if (me != root) return recv_from(m, root, b);
        for (std::int64_t i = 0; i < size; ++i) {
          if (i != root) send_to(m, i, b);
        }
        return;
      default:
        return pairwise(m, me, b);
    }
  }

  /// Alltoall: in step k, a message to the member k after and from the member k before, both open at once.
  void pairwise(const std::vector<std::int64_t>& m, std::int64_t me, double bytes) {
    const auto size = static_cast<std::int64_t>(m.size());
    for (std::int64_t k = 1; k < size; ++k) {
      const std::int64_t to = m[static_cast<std::size_t>((me + k) % size)];
      const std::int64_t from = m[static_cast<std::size_t>((me - k + size) % size)];
      const std::int64_t rt = recv_tag(comm_, kCollectiveTag, from);
      const std::int64_t st = send_tag(comm_, kCollectiveTag, to);
      line("irecv " + std::to_string(from) + ' ' + std::to_string(rt) + ' ' + num(bytes));
      line("isend " + std::to_string(to) + ' ' + std::to_string(st) + ' ' + num(bytes));
      line("wait " + std::to_string(from) + ' ' + std::to_string(r_) + ' ' + std::to_string(rt));
      line("wait " + std::to_string(r_) + ' ' + std::to_string(to) + ' ' + std::to_string(st));
    }
  }

  std::int64_t r_;
  std::int64_t n_;
  Tags& tags_;
  std::set<std::string>& notes_;
  double flops_;
  std::string prefix_;
  std::string text_;
  double pending_ns_ = 0;            ///< bursts not written yet
  const CommModel* comm_ = nullptr;  ///< the communicator of the collective being written as messages
  std::map<std::tuple<std::size_t, std::uint32_t, std::int64_t>, std::int64_t> sent_, received_;
  std::vector<std::vector<std::pair<mpi::ActionKind, std::string>>> started_;
};

/// Adds rank r's instance of a phase to its stats.
void add_stats(TitPhaseStats& s, const PredictedRank& pr, std::int64_t n) {
  double compute = pr.tail_ns.value_or(0);
  for (const PredictedCall& c : pr.calls) {
    compute += c.burst_ns.value_or(0);
    const mpi::CallKind kind = mpi::kind(c.function);
    if (pr.rank == 0 && (kind == mpi::CallKind::Init || kind == mpi::CallKind::Finalize)) s.main_loop = false;
    for (const PredictedAction& x : c.actions) {
      if (x.kind != mpi::ActionKind::Send || x.peer < 0) continue;
      s.messages += 1;
      s.bytes += x.bytes;
    }
  }
  s.compute_ns += compute / static_cast<double>(n);
  s.compute_max_ns = std::max(s.compute_max_ns, compute);
  s.calls += static_cast<double>(pr.calls.size()) / static_cast<double>(n);
}

/// The prediction checked under the model's MPI_Dims_create rule.
CheckedPrediction checked_under_rule(const Model& model, std::int64_t n, OnInconsistency policy) {
  const ScopedDimsRule rule(model.dims_rule);
  return checked_timed_prediction(model, n, policy);
}

}  // namespace

TitWriter::TitWriter(const Model& model, std::int64_t n, OnInconsistency policy, const TitOptions& options)
    : n_(n),
      dims_rule_(model.dims_rule),
      options_(options),
      checked_(std::make_shared<CheckedPrediction>(checked_under_rule(model, n, policy))),
      stats_(model.phases.size()) {
  for (std::size_t p = 0; p < stats_.size(); ++p) stats_[p].repaired = !checked_->check.phases[p].consistent();
  rank_ = [c = checked_](std::size_t phase, std::int64_t r) {
    PredictedRank pr = c->phases[phase].rank(r);
    c->check.phases[phase].repair(pr);
    return pr;
  };
}

TitWriter::TitWriter(const St4np& trace, const TitOptions& options)
    : n_(trace.processes), dims_rule_(trace.dims_rule), options_(options), stats_(trace.phases.size()) {
  for (std::size_t p = 0; p < stats_.size(); ++p) stats_[p].repaired = trace.phases[p].repaired;
  // Ranks are written in order: one rank's lines are read once for all its phases.
  struct Lines {
    std::int64_t rank = -1;
    std::vector<PredictedRank> phases;
  };
  rank_ = [&trace, lines = std::make_shared<Lines>()](std::size_t phase, std::int64_t r) {
    if (lines->rank != r) {
      lines->phases = st4np_rank(trace, r);
      lines->rank = r;
    }
    return lines->phases.at(phase);
  };
}

const PredictionCheck& TitWriter::check() const noexcept {
  static const PredictionCheck none;
  return checked_ ? checked_->check : none;
}

TitTrace TitWriter::write(const fs::path& dir, const std::vector<PhaseRun>& order) {
  const ScopedDimsRule rule(dims_rule_);
  TitTrace out;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error("cannot create '" + dir.string() + "': " + ec.message());
  const fs::path list = dir / "traces.txt";
  fs::remove(list, ec);  // the list last: a directory whose list exists is whole
  Tags tags(n_);
  std::set<std::string> notes;
  std::vector<bool> counting(stats_.size());
  for (const PhaseRun& e : order) counting[e.phase] = !stats_[e.phase].written && e.count > 0;
  std::string files;
  const fs::path absolute = fs::absolute(dir);
  for (std::int64_t r = 0; r < n_; ++r) {
    const fs::path path = absolute / ("rank" + std::to_string(r) + ".txt");
    StreamedFile file(path);
    std::ostream& text = file.stream();
    text << r << " init\n";
    out.actions += 2;
    std::vector<std::optional<std::string>> instance(stats_.size());
    for (const PhaseRun& e : order) {
      if (e.count == 0) continue;
      if (!instance[e.phase]) {
        const PredictedRank pr = rank_(e.phase, r);
        if (counting[e.phase]) add_stats(stats_[e.phase], pr, n_);
        instance[e.phase] = InstanceText(r, n_, tags, notes, options_.flops).make(pr);
      }
      const std::string& t = *instance[e.phase];
      out.actions += static_cast<std::uint64_t>(std::count(t.begin(), t.end(), '\n')) * e.count;
      for (std::uint64_t k = 0; k < e.count; ++k) text << t;
      file.check();
    }
    text << r << " finalize\n";
    file.commit();
    files += path.string() + '\n';
  }
  for (std::size_t p = 0; p < counting.size(); ++p) stats_[p].written = stats_[p].written || counting[p];
  write_whole_file(list, files);
  out.notes.assign(notes.begin(), notes.end());
  return out;
}

TitTrace write_tit(const Model& model, std::int64_t n, const fs::path& dir, OnInconsistency policy,
                   const TitOptions& options) {
  TitWriter writer(model, n, policy, options);
  TitTrace out = writer.write(dir, order_at(model, n));
  out.check = writer.check();
  return out;
}

TitTrace write_tit(const St4np& trace, const fs::path& dir, const TitOptions& options) {
  TitWriter writer(trace, options);
  TitTrace out = writer.write(dir, trace.order);
  out.notes.insert(out.notes.end(), trace.notes.begin(), trace.notes.end());
  return out;
}

}  // namespace p3s::modeler
