// SPDX-License-Identifier: BSD-3-Clause
// Running a command under the recorder: environment, fork/exec, and recovery of a run that died.
#include "p3s/interpose/record.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <otf2/otf2.h>

#include "archive_io.hpp"
#include "dir_lock.hpp"
#include "p3s/error.hpp"
#include "p3s/interpose/counters.hpp"
#include "p3s/shell_words.hpp"
#include "p3s/trace/schema.hpp"

namespace p3s::interpose {
namespace fs = std::filesystem;
namespace {

/// The traced command while it runs, for the termination handler.
volatile pid_t g_child = 0;

/// SIGTERM and SIGHUP (a batch scheduler ending the job, a closed terminal) go to the traced command, which
/// decides how to end; p3s record stays to wait for it and recover its trace.
extern "C" void forward_to_child(int sig) {
  if (g_child > 0) ::kill(g_child, sig);
}

/// Whether the file system of `dir` has (nearly) no room left: less than 1 MiB for an unprivileged writer.
bool full_disk(const std::string& dir) {
  std::error_code ec;
  const fs::space_info room = fs::space(dir, ec);
  return !ec && room.available < (std::uintmax_t{1} << 20);
}

void set(std::vector<std::string>& env, const std::string& name, const std::string& value) {
  const std::string prefix = name + "=";
  for (std::string& e : env) {
    if (e.rfind(prefix, 0) == 0) {
      e = prefix + value;
      return;
    }
  }
  env.push_back(prefix + value);
}

std::string get(const std::vector<std::string>& env, const std::string& name) {
  const std::string prefix = name + "=";
  for (const std::string& e : env) {
    if (e.rfind(prefix, 0) == 0) return e.substr(prefix.size());
  }
  return {};
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> p;
  for (std::string& s : strings) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

/// Replaces this process with the command (execvpe searches PATH of the new environment).
[[noreturn]] void exec(const RecordOptions& o, std::vector<std::string> env) {
  std::vector<std::string> argv = o.command;
  auto args = pointers(argv);
  auto envp = pointers(env);
  execvpe(args[0], args.data(), envp.data());
  std::fprintf(stderr, "p3s record: cannot run '%s': %s\n", o.command.front().c_str(), std::strerror(errno));
  _exit(127);
}

}  // namespace

std::string default_preload_path(const std::string& executable) {
  const fs::path bin = fs::path(executable).parent_path();
  for (const fs::path& candidate :
       {bin / ".." / "lib" / "libp3s-interpose.so", bin / ".." / "lib64" / "libp3s-interpose.so",
        bin / P3S_REL_LIBDIR / "libp3s-interpose.so"}) {
    std::error_code ec;
    if (fs::exists(candidate, ec)) return fs::weakly_canonical(candidate, ec).string();
  }
  return (bin / ".." / "lib" / "libp3s-interpose.so").lexically_normal().string();
}

std::vector<std::string> record_environment(const RecordOptions& o) {
  std::vector<std::string> env = o.environment;
  const std::string preload = get(env, "LD_PRELOAD");
  set(env, "LD_PRELOAD", preload.empty() ? o.preload : o.preload + ":" + preload);
  set(env, "P3S_TRACE_DIR", fs::absolute(o.dir).lexically_normal().string());
  set(env, "P3S_COUNTERS", std::string(to_string(o.counters)));
  set(env, "P3S_CALLSITE", o.callsite ? "1" : "0");
  set(env, "P3S_BUFFER_MB", std::to_string(o.buffer_mb));
  set(env, "P3S_KEEP_RAW", o.keep_raw ? "1" : "0");
  set(env, "P3S_COMMAND", join_words(o.command));  // quoted: an argument holding a space stays one
  return env;
}

bool inside_mpi_launch(const std::vector<std::string>& env) {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "MPI_LOCALRANKID"}) {
    if (!get(env, v).empty()) return true;
  }
  return false;
}

std::map<std::string, std::string> archive_properties(const std::string& dir) {
  std::map<std::string, std::string> props;
  const std::string anchor = (fs::path(dir) / (std::string(trace::kArchiveName) + ".otf2")).string();
  std::error_code ec;
  if (!fs::exists(anchor, ec)) return props;
  OTF2_Reader* reader = OTF2_Reader_Open(anchor.c_str());
  if (reader == nullptr) return props;
  uint32_t n = 0;
  char** names = nullptr;
  if (OTF2_Reader_GetPropertyNames(reader, &n, &names) == OTF2_SUCCESS) {
    for (uint32_t i = 0; i < n; ++i) {
      char* value = nullptr;
      if (OTF2_Reader_GetProperty(reader, names[i], &value) == OTF2_SUCCESS && value != nullptr) {
        props[names[i]] = value;
        free(value);
      }
    }
    free(names);
  }
  OTF2_Reader_Close(reader);
  return props;
}

namespace {

/// Refuses what cannot be recorded: no command, PAPI counters that cannot be read, a missing recorder library.
void check_record_options(const RecordOptions& o) {
  if (o.command.empty()) throw InputError("p3s record: no command given; usage: p3s record -o DIR -- COMMAND...");
  if (o.counters == CountersRequest::Papi) {
    const CounterProbe probe = probe_counters(CountersRequest::Papi);
    if (!probe.error.empty()) {
      throw InputError("p3s record: --counters papi: " + probe.error +
                       "; use --counters auto (falls back to thread CPU time) or --counters cputime");
    }
  }
  std::error_code ec;
  if (!fs::exists(o.preload, ec)) {
    throw InputError("p3s record: the recorder library '" + o.preload +
                     "' is missing; reinstall p3s or pass --preload PATH");
  }
}

/// Makes the trace directory ready and takes its lock, which `env` hands to the ranks: refuses a trace already there
/// unless --force, which removes it and what was derived from it. Returns the lock, held for the whole run.
std::unique_ptr<DirLock> prepare_directory(const RecordOptions& o, const fs::path& anchor,
                                           std::vector<std::string>& env) {
  std::error_code ec;
  if (fs::exists(anchor, ec) && !o.force) {
    throw InputError("p3s record: '" + o.dir + "' already holds a trace (" + anchor.filename().string() +
                     "); choose another -o DIR or pass --force to replace it");
  }
  fs::create_directories(o.dir, ec);
  if (ec) throw InputError("p3s record: cannot create '" + o.dir + "': " + ec.message());
  // Held for the whole run; the ranks share it through the token (a job preloading the recorder by hand into DIR
  // meanwhile is refused by its own recorder, and one that holds DIR already makes this record refuse).
  std::string lock_error;
  std::unique_ptr<DirLock> lock = DirLock::take(o.dir, "", lock_error);
  if (!lock) throw InputError("p3s record: " + lock_error + "; wait for it to end or choose another -o DIR");
  set(env, "P3S_RECORD_LOCK", lock->token());
  std::string error;
  if (o.force && !clear_archive(o.dir, error)) throw InputError("p3s record: " + error);
  // What was derived from the replaced trace goes with it: a stale signature would describe another run.
  if (o.force) {
    const fs::path signature = fs::path(o.dir) / "signature.json";
    fs::remove(signature, ec);
    if (ec) throw InputError("p3s record: cannot remove '" + signature.string() + "': " + ec.message());
  }
  return lock;
}

/// Runs the command in a child process and waits for it to end. Returns its wait status.
int run_command(const RecordOptions& o, std::vector<std::string>& env) {
  const pid_t child = fork();
  if (child < 0) throw Error(std::string("p3s record: fork failed: ") + std::strerror(errno));
  if (child == 0) exec(o, std::move(env));
  // Like a shell waiting for a job: the terminal's Ctrl-C goes to the command, which decides what to do.
  struct sigaction ignore {};
  struct sigaction old_int {};
  struct sigaction old_quit {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  g_child = child;
  struct sigaction forward {};
  struct sigaction old_term {};
  struct sigaction old_hup {};
  forward.sa_handler = forward_to_child;
  sigemptyset(&forward.sa_mask);
  sigaction(SIGTERM, &forward, &old_term);
  sigaction(SIGHUP, &forward, &old_hup);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGHUP, &old_hup, nullptr);
  g_child = 0;
  return status;
}

/// What the run left: its exit code and archive, rebuilt from the raw logs where the run died before writing it.
RecordResult run_result(const RecordOptions& o, const fs::path& anchor, int status) {
  std::error_code ec;
  RecordResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.archive = anchor.string();
  if (has_raw_logs(o.dir) && !fs::exists(anchor, ec)) {
    // The run died before MPI_Finalize (or its conversion failed): rebuild from what was flushed.
    try {
      result.recovery = recover(o.dir);
      result.recovered = true;
    } catch (const Error& e) {
      std::error_code ignored;
      fs::remove_all(partial_dir(o.dir), ignored);
      result.failure = full_disk(o.dir) ? "no space left on " + o.dir : e.what();
    }
  }
  result.archive_written = fs::exists(anchor, ec);
  result.properties = archive_properties(o.dir);
  return result;
}

}  // namespace

RecordResult record(const RecordOptions& o) {
  check_record_options(o);
  std::vector<std::string> env = record_environment(o);
  if (inside_mpi_launch(o.environment)) exec(o, std::move(env));
  const fs::path anchor = fs::path(o.dir) / (std::string(trace::kArchiveName) + ".otf2");
  const std::unique_ptr<DirLock> lock = prepare_directory(o, anchor, env);
  const int status = run_command(o, env);
  return run_result(o, anchor, status);
}

}  // namespace p3s::interpose
