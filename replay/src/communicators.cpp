// SPDX-License-Identifier: BSD-3-Clause
#include "communicators.hpp"

#include <numeric>
#include <string>
#include <utility>

#include "p3s/error.hpp"
#include "p3s/modeler/predict.hpp"

namespace p3s::replay::detail {

namespace {
const modeler::CommModel kWorld{};  // the world, built first: the communicator of anything the model does not name
}  // namespace

Communicators::Communicators(const std::vector<const modeler::CommModel*>& comms, std::int64_t n, std::int64_t rank,
                             Layout layout)
    : n_(n), rank_(rank), layout_(std::move(layout)) {
  index_[&kWorld] = find_or_build(kWorld);
  for (const modeler::CommModel* c : comms) index_[c] = find_or_build(*c);
}

Communicators::~Communicators() {
  for (Built& b : comms_) {
    if (b.comm != MPI_COMM_NULL && b.comm != MPI_COMM_SELF) MPI_Comm_free(&b.comm);
  }
}

std::size_t Communicators::find_or_build(const modeler::CommModel& c) {
  for (std::size_t i = 0; i < comms_.size(); ++i) {
    if (comms_[i].model->same_at(c, n_)) return i;
  }
  Built b;
  b.model = &c;
  int status = MPI_SUCCESS;
  switch (c.kind) {
    case modeler::CommModel::Kind::World:
      status = MPI_Comm_dup(layout_.base, &b.comm);
      break;
    case modeler::CommModel::Kind::Self:
      b.comm = MPI_COMM_SELF;
      break;
    default:
      status = MPI_Comm_split(layout_.base, static_cast<int>(c.color(rank_, n_)), static_cast<int>(c.key(rank_, n_)),
                              &b.comm);
  }
  if (status != MPI_SUCCESS) throw Error("cannot build the communicator " + c.to_string());
  MPI_Comm_set_errhandler(b.comm, MPI_ERRORS_RETURN);
  // Each predicted rank's rank in the base, then in the communicator.
  std::vector<int> in_base(static_cast<std::size_t>(n_));
  if (layout_.full()) {
    std::iota(in_base.begin(), in_base.end(), 0);
  } else {
    in_base = layout_.base_rank;
  }
  std::vector<int> known;
  std::vector<std::size_t> at;
  for (std::size_t p = 0; p < in_base.size(); ++p) {
    if (in_base[p] < 0) continue;
    known.push_back(in_base[p]);
    at.push_back(p);
  }
  std::vector<int> translated(known.size(), MPI_UNDEFINED);
  MPI_Group base_group = MPI_GROUP_NULL;
  MPI_Group group = MPI_GROUP_NULL;
  MPI_Comm_group(layout_.base, &base_group);
  MPI_Comm_group(b.comm, &group);
  MPI_Group_translate_ranks(base_group, static_cast<int>(known.size()), known.data(), group, translated.data());
  MPI_Group_free(&group);
  MPI_Group_free(&base_group);
  b.local.assign(in_base.size(), -1);
  for (std::size_t k = 0; k < known.size(); ++k) b.local[at[k]] = translated[k] == MPI_UNDEFINED ? -1 : translated[k];
  comms_.push_back(std::move(b));
  return comms_.size() - 1;
}

MPI_Comm Communicators::comm(const modeler::CommModel* c) const { return comms_[index_of(c)].comm; }

std::size_t Communicators::index_of(const modeler::CommModel* c) const {
  const auto it = index_.find(c);
  return it == index_.end() ? 0 : it->second;
}

std::string Communicators::describe(std::size_t i) const {
  const modeler::CommModel* m = comms_.at(i).model;
  return m != nullptr ? m->to_string() : std::string("world");
}

Route Communicators::route(const modeler::CommModel* c, std::int64_t world) const {
  if (!layout_.full() && world >= 0 && static_cast<std::size_t>(world) < layout_.base_rank.size() &&
      layout_.base_rank[static_cast<std::size_t>(world)] < 0) {
    if (layout_.hole < 0) {
      throw Error("rank " + std::to_string(rank_) + ": a message with rank " + std::to_string(world) +
                  ", outside the measured ranges, and no black hole to stand in for it");
    }
    return {layout_.holes, layout_.hole, true};
  }
  return {comm(c), rank_in(c, world), false};
}

int Communicators::root_in(const modeler::CommModel* c, std::int64_t world) const {
  if (!layout_.full() && world >= 0 && static_cast<std::size_t>(world) < layout_.base_rank.size() &&
      layout_.base_rank[static_cast<std::size_t>(world)] < 0) {
    return 0;
  }
  return rank_in(c, world);
}

int Communicators::rank_in(const modeler::CommModel* c, std::int64_t world) const {
  // MPI's own peers; a root of -1 (none) reads as MPI_PROC_NULL, which a collective takes as rank 0.
  if (world == modeler::kProcNull) return MPI_PROC_NULL;
  if (world == modeler::kAnySource) return MPI_ANY_SOURCE;
  const auto it = index_.find(c);
  const Built& b = it == index_.end() ? comms_.front() : comms_[it->second];
  const int local =
      world >= 0 && static_cast<std::size_t>(world) < b.local.size() ? b.local[static_cast<std::size_t>(world)] : -1;
  // Never a silent wildcard (-1 is MPI_ANY_SOURCE in some MPIs): the check of a prediction refuses such a peer.
  if (local < 0) {
    throw Error("rank " + std::to_string(rank_) + ": rank " + std::to_string(world) + " is not in the communicator " +
                (b.model != nullptr ? b.model->to_string() : std::string("world")));
  }
  return local;
}

}  // namespace p3s::replay::detail
