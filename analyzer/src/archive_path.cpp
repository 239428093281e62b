// SPDX-License-Identifier: BSD-3-Clause
// From what the user typed to an OTF2 anchor file, with an error that says what to pass instead.
#include "p3s/analyzer/trace_reader.hpp"
#include "p3s/error.hpp"
#include "p3s/trace/schema.hpp"

#include <fstream>
#include <string>
#include <system_error>
#include <vector>

namespace p3s::analyzer {
namespace fs = std::filesystem;
namespace {

constexpr const char* kWhatToPass =
    "pass the directory given to `p3s record -o` (or a Score-P experiment directory) or its .otf2 anchor file";

/// OTF2 anchor files start with a two-byte header followed by "OTF2".
bool looks_like_anchor(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  char head[6] = {};
  in.read(head, sizeof head);
  return in.gcount() == static_cast<std::streamsize>(sizeof head) && std::string(head + 2, 4) == "OTF2";
}

}  // namespace

fs::path find_anchor(const fs::path& path) {
  std::error_code ec;
  const fs::path abs = fs::absolute(path, ec).lexically_normal();
  const fs::file_status st = fs::status(abs, ec);
  if (ec || !fs::exists(st)) {
    throw InputError("trace '" + path.string() + "': no such file or directory; " + kWhatToPass);
  }
  fs::path anchor = abs;
  if (fs::is_directory(st)) {
    anchor = abs / (std::string(trace::kArchiveName) + ".otf2");
    if (!fs::is_regular_file(anchor, ec)) {
      std::vector<fs::path> found;
      for (const fs::directory_entry& e : fs::directory_iterator(abs, ec)) {
        if (e.path().extension() == ".otf2" && e.is_regular_file(ec)) found.push_back(e.path());
      }
      if (found.size() != 1) {
        std::string why = found.empty() ? "holds no OTF2 archive (no traces.otf2 anchor file)"
                                        : "holds " + std::to_string(found.size()) + " OTF2 anchor files";
        if (fs::is_directory(abs / trace::kRawDir, ec)) {
          why += "; it has raw logs of a run that died, rebuild the archive with `p3s recover " + path.string() + "`";
          throw InputError("trace '" + path.string() + "' " + why);
        }
        throw InputError("trace '" + path.string() + "' " + why + "; " + kWhatToPass);
      }
      anchor = found.front();
    }
  } else if (!fs::is_regular_file(st)) {
    throw InputError("trace '" + path.string() + "' is neither a directory nor a file; " + kWhatToPass);
  }
  if (!looks_like_anchor(anchor)) {
    throw InputError("trace '" + anchor.string() + "' is not an OTF2 anchor file; " + kWhatToPass);
  }
  return anchor;
}

}  // namespace p3s::analyzer
