// SPDX-License-Identifier: BSD-3-Clause
#include "p3s/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <thread>

namespace p3s {
namespace {

volatile std::sig_atomic_t g_child = 0;   // the child's process group while one runs
volatile std::sig_atomic_t g_signal = 0;  // the first stopping signal that reached p3s

extern "C" void pass_on(int sig) {
  if (g_signal == 0) g_signal = sig;
  if (g_child > 0) ::kill(-static_cast<pid_t>(g_child), sig);
}

/// The handlers for the stopping signals while a child runs, and the old ones back afterwards.
class PassOn {
 public:
  PassOn() {
    struct sigaction sa {};
    sa.sa_handler = pass_on;
    ::sigemptyset(&sa.sa_mask);
    for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &sa, &old_[i]);
  }
  ~PassOn() {
    for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &old_[i], nullptr);
  }
  PassOn(const PassOn&) = delete;
  PassOn& operator=(const PassOn&) = delete;

 private:
  static constexpr std::array<int, 3> kSignals{SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> old_{};
};

[[noreturn]] void exec_child(const std::vector<std::string>& argv, int out) {
  ::setpgid(0, 0);
  const int in = ::open("/dev/null", O_RDONLY);
  if (in >= 0) ::dup2(in, 0);
  ::dup2(out, 1);
  ::dup2(out, 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  const std::string why = "p3s: cannot run '" + argv[0] + "': " + std::strerror(errno) + "\n";
  [[maybe_unused]] const ssize_t w = ::write(2, why.data(), why.size());
  ::_exit(127);
}

}  // namespace

int run_child(const std::vector<std::string>& argv, const std::filesystem::path& log,
              const std::function<void()>& tick) {
  const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) throw Error("cannot write '" + log.string() + "': " + std::strerror(errno));
  g_signal = 0;
  PassOn handlers;
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(out);
    throw Error(std::string("cannot start a process: ") + std::strerror(errno));
  }
  if (pid == 0) exec_child(argv, out);
  ::close(out);
  ::setpgid(pid, pid);  // also here: a signal may come before the child has made its group
  g_child = pid;
  int status = 0;
  auto last_tick = std::chrono::steady_clock::now();
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (std::chrono::steady_clock::now() - last_tick >= std::chrono::seconds(1)) {
      last_tick = std::chrono::steady_clock::now();
      if (tick) tick();
    }
  }
  g_child = 0;
  if (g_signal != 0) {
    throw Interrupted(std::string("interrupted by ") + ::strsignal(g_signal) +
                          "; what was done is kept: run the same command again to go on",
                      g_signal);
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

std::string last_line(const std::filesystem::path& log) {
  std::ifstream in(log);
  std::string line;
  std::string last;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  return last.size() > 300 ? last.substr(0, 297) + "..." : last;
}

}  // namespace p3s
