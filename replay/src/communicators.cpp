// SPDX-License-Identifier: BSD-3-Clause
#include "communicators.hpp"

#include <numeric>
#include <string>

#include "p3s/error.hpp"
#include "p3s/modeler/predict.hpp"

namespace p3s::replay::detail {

namespace {
const modeler::CommModel kWorld{};  // the world, built first: the communicator of anything the model does not name
}  // namespace

Communicators::Communicators(const std::vector<const modeler::CommModel*>& comms, std::int64_t n, std::int64_t rank)
    : n_(n), rank_(rank) {
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
  const auto world = static_cast<int>(n_);
  int status = MPI_SUCCESS;
  switch (c.kind) {
    case modeler::CommModel::Kind::World:
      status = MPI_Comm_dup(MPI_COMM_WORLD, &b.comm);
      break;
    case modeler::CommModel::Kind::Self:
      b.comm = MPI_COMM_SELF;
      break;
    default:
      status = MPI_Comm_split(MPI_COMM_WORLD, static_cast<int>(c.color(rank_, n_)), static_cast<int>(c.key(rank_, n_)),
                              &b.comm);
  }
  if (status != MPI_SUCCESS) throw Error("cannot build the communicator " + c.to_string());
  MPI_Comm_set_errhandler(b.comm, MPI_ERRORS_RETURN);
  MPI_Group world_group = MPI_GROUP_NULL;
  MPI_Group group = MPI_GROUP_NULL;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  MPI_Comm_group(b.comm, &group);
  std::vector<int> all(static_cast<std::size_t>(world));
  std::iota(all.begin(), all.end(), 0);
  b.local.assign(all.size(), MPI_UNDEFINED);
  MPI_Group_translate_ranks(world_group, world, all.data(), group, b.local.data());
  for (int& l : b.local) l = l == MPI_UNDEFINED ? -1 : l;
  MPI_Group_free(&group);
  MPI_Group_free(&world_group);
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
