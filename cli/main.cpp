// SPDX-License-Identifier: BSD-3-Clause
// p3s: predict how an MPI application scales from a few small traced runs.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include "p3s/error.hpp"
#include "p3s/user_text.hpp"
#include "p3s/version.hpp"
#include "subcommands.hpp"

using p3s::user_text;

int main(int argc, char** argv) {
  CLI::App app{"p3s: predict how an MPI application scales from a few small traced runs"};
  app.set_version_flag("--version", std::string("p3s ") + p3s::kVersion);
  app.require_subcommand(1);
  p3s::cli::add_record(app);
  p3s::cli::add_analyze(app);
  p3s::cli::add_model(app);
  p3s::cli::add_predict(app);
  p3s::cli::add_curve(app);
  p3s::cli::add_scale(app);
  p3s::cli::add_simulate(app);
  p3s::cli::add_calibrate(app);
  p3s::cli::add_report(app);
  p3s::cli::add_recover(app);
  p3s::cli::add_summary(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const p3s::Error& e) {
    std::fprintf(stderr, "%s\n", user_text(e.what()).c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "p3s: internal error: %s (please report it)\n", user_text(e.what()).c_str());
    return 3;
  }
  // What was printed must have reached its destination: a full disk or a closed pipe is an error, not exit 0.
  std::cout.flush();
  if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    // The stream keeps no errno: one more byte, written where the output is lost anyway, tells why.
    std::clearerr(stdout);
    errno = 0;
    const bool again = std::fputc('\n', stdout) != EOF && std::fflush(stdout) == 0;
    std::fprintf(stderr, "p3s: cannot write to standard output: %s\n",
                 !again && errno != 0 ? std::strerror(errno) : "write error");
    return 1;
  }
  return p3s::cli::g_exit_code;
}
