// SPDX-License-Identifier: BSD-3-Clause
// `p3s record`: run a command with the recorder preloaded, then make sure an archive exists.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "p3s/interpose/config.hpp"
#include "p3s/interpose/recover.hpp"

namespace p3s::interpose {

struct RecordOptions {
  std::string dir;  ///< trace directory (-o)
  CountersRequest counters = CountersRequest::Auto;
  bool callsite = false;
  std::uint32_t buffer_mb = 8;
  bool keep_raw = false;
  bool force = false;                    ///< replace an existing archive in dir
  std::vector<std::string> command;      ///< what to run (mpirun ... ./app, or ./app under mpirun)
  std::string preload;                   ///< path of libp3s-interpose.so
  std::vector<std::string> environment;  ///< the environment to extend, as NAME=value
};

struct RecordResult {
  int exit_code = 0;             ///< the command's exit status (128+signal if it was killed)
  bool archive_written = false;  ///< the run wrote its archive at MPI_Finalize
  bool recovered = false;        ///< the archive was rebuilt from the raw logs (the run died, or writing failed)
  RecoverReport recovery;
  /// Not empty when the recorder ran but no archive could be written, even from the raw logs: why (a full disk
  /// says "no space left on DIR"). The raw logs stay for `p3s recover`; the command's exit status is kept.
  std::string failure;
  std::map<std::string, std::string> properties;  ///< the archive's P3S:: properties
  std::string archive;                            ///< path of traces.otf2
};

/// Where libp3s-interpose.so lives relative to the p3s executable (build tree and install tree alike).
[[nodiscard]] std::string default_preload_path(const std::string& executable);

/// The environment the command runs with: `options.environment` plus LD_PRELOAD and the P3S_* settings.
[[nodiscard]] std::vector<std::string> record_environment(const RecordOptions& options);

/// True when the environment says this process is itself an MPI rank (p3s record placed after mpirun).
[[nodiscard]] bool inside_mpi_launch(const std::vector<std::string>& environment);

/// Runs the command and returns once it ended, with an archive in place (recovered if the run died).
/// When called inside an MPI launch it replaces this process with the command and does not return.
/// @throws p3s::InputError for bad options (no command, existing archive without --force, PAPI demanded
///         but unavailable, missing preload library).
RecordResult record(const RecordOptions& options);

/// The P3S:: properties of an archive (empty when `dir` holds none).
[[nodiscard]] std::map<std::string, std::string> archive_properties(const std::string& dir);

}  // namespace p3s::interpose
