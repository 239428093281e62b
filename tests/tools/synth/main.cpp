// SPDX-License-Identifier: BSD-3-Clause
// p3s-synth PROGRAM.json -o DIR [--ranks N] [--seed S] [--target-events E]: a synthetic `p3s record` archive.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <optional>
#include <string>

#include "p3s/error.hpp"
#include "p3s/synth/generator.hpp"
#include "p3s/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "p3s-synth: write the OTF2 archive `p3s record` would write for an MPI program described in JSON "
      "(see tests/tools/synth/README.md)"};
  app.set_version_flag("--version", std::string("p3s-synth ") + p3s::kVersion);
  std::string program_path;
  std::string out_dir;
  std::optional<int> ranks;
  std::uint64_t seed = 1;
  std::optional<std::uint64_t> target;
  app.add_option("PROGRAM", program_path, "the program (JSON)")->required();
  app.add_option("-o,--output", out_dir, "directory that receives traces.otf2")->required();
  app.add_option("--ranks", ranks, "number of MPI processes (default: the program's \"ranks\")")
      ->check(CLI::Range(1, 1 << 24));
  app.add_option("--seed", seed, "seed of noise and jitter")->capture_default_str();
  app.add_option("--target-events", target, "resize the outermost loop to about this many events (±10 %)")
      ->check(CLI::PositiveNumber);
  try {
    app.parse(argc, argv);
    const p3s::synth::Program program = p3s::synth::load_program(program_path);
    const p3s::synth::GenerateResult r = p3s::synth::generate(
        program,
        p3s::synth::GenerateOptions{.out_dir = out_dir, .ranks = ranks, .seed = seed, .target_events = target});
    std::printf("p3s-synth: wrote %s: %d ranks, %llu events", r.archive.c_str(), r.ranks,
                static_cast<unsigned long long>(r.events));
    if (!r.scaled_loop.empty()) {
      std::printf(" (%s count %llu)", r.scaled_loop.c_str(), static_cast<unsigned long long>(r.scaled_count));
    }
    std::printf(", simulated run time %.6f s\n", static_cast<double>(r.duration_ns) * 1e-9);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const p3s::Error& e) {
    std::fprintf(stderr, "p3s-synth: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "p3s-synth: internal error: %s (please report it)\n", e.what());
    return 3;
  }
  return 0;
}
