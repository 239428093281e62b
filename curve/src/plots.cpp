// SPDX-License-Identifier: BSD-3-Clause
// The curve's plots, drawn by gnuplot (its svg and pngcairo terminals) from one script with the data inline.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "p3s/curve/curve.hpp"
#include "p3s/error.hpp"
#include "p3s/outputs.hpp"
#include "p3s/temporaries.hpp"
#include "p3s/whole_file.hpp"

namespace p3s::curve {
namespace {

namespace fs = std::filesystem;

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

/// gnuplot's string quoting (single quotes; a quote is doubled).
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (const char ch : s) out += ch == '\'' ? std::string("''") : std::string(1, ch);
  return out + "'";
}

/// The data blocks: $pred (n, time s, speedup), $meas (the same measured), $both (n, time s, error label), $ideal.
std::string data_blocks(const Curve& c) {
  std::ostringstream out;
  out << "$pred << EOD\n";
  for (const Row& r : c.rows) {
    if (r.predicted_ns)
      out << r.n << ' ' << num(*r.predicted_ns / 1e9) << ' ' << num(c.baseline_ns / *r.predicted_ns) << '\n';
  }
  out << "EOD\n$meas << EOD\n";
  for (const Row& r : c.rows) {
    if (r.measured_ns)
      out << r.n << ' ' << num(*r.measured_ns / 1e9) << ' ' << num(c.baseline_ns / *r.measured_ns) << '\n';
  }
  out << "EOD\n$both << EOD\n";
  for (const Row& r : c.rows) {
    if (r.error) {
      char label[32];
      std::snprintf(label, sizeof label, "%+.1f%%", 100 * *r.error);
      out << r.n << ' ' << num(*r.predicted_ns / 1e9) << " \"" << label << "\"\n";
    }
  }
  out << "EOD\n";
  return out.str();
}

/// Whether a data block has rows.
bool any_predicted(const Curve& c) {
  for (const Row& r : c.rows) {
    if (r.predicted_ns) return true;
  }
  return false;
}
bool any_measured(const Curve& c) {
  for (const Row& r : c.rows) {
    if (r.measured_ns) return true;
  }
  return false;
}

std::string time_plot(const Curve& c) {
  std::ostringstream out;
  out << "set title 'Run time versus processes'\nset xlabel 'processes (n)'\nset ylabel 'time (s)'\n"
      << "set logscale xy 2\nset format y '%g'\nset key top right\nset grid\n";
  const double work = c.baseline_ns / 1e9 * static_cast<double>(c.baseline);
  std::string plot = "plot " + num(work) + "/x with lines dashtype 2 lc rgb '#888888' title 'ideal'";
  if (any_predicted(c)) plot += ", $pred using 1:2 with linespoints pt 7 lc rgb '#1f77b4' title 'predicted'";
  if (any_measured(c)) plot += ", $meas using 1:2 with points pt 5 ps 1.3 lc rgb '#d62728' title 'measured'";
  bool errors = false;
  for (const Row& r : c.rows) errors = errors || r.error.has_value();
  if (errors) plot += ", $both using 1:2:3 with labels offset 0,1.2 notitle";
  out << plot << '\n';
  return out.str();
}

std::string speedup_plot(const Curve& c) {
  std::ostringstream out;
  out << "set title 'Speedup against n = " << c.baseline << "'\nset xlabel 'processes (n)'\nset ylabel 'speedup'\n"
      << "set logscale xy 2\nset format y '%g'\nset key top left\nset grid\n";
  std::string plot =
      "plot x/" + num(static_cast<double>(c.baseline)) + " with lines dashtype 2 lc rgb '#888888' title 'ideal'";
  if (any_predicted(c)) plot += ", $pred using 1:3 with linespoints pt 7 lc rgb '#1f77b4' title 'predicted'";
  if (any_measured(c)) plot += ", $meas using 1:3 with points pt 5 ps 1.3 lc rgb '#d62728' title 'measured'";
  out << plot << '\n';
  return out.str();
}

/// The phases' time stacked per predicted n (phases under the minor share together as "other").
std::string phases_plot(const Curve& c) {
  std::vector<const PhaseLimit*> shown;
  bool other = false;
  for (const PhaseLimit& l : c.phases) {
    if (l.minor) {
      other = true;
    } else {
      shown.push_back(&l);
    }
  }
  std::ostringstream out;
  out << "$phases << EOD\nn";
  for (const PhaseLimit* l : shown) out << " \"phase " << l->id << "\"";
  if (other) out << " other";
  out << '\n';
  for (std::size_t i = 0; i < c.rows.size(); ++i) {
    out << '"' << c.rows[i].n << (c.rows[i].predicted ? "" : " (m)") << '"';
    for (const PhaseLimit* l : shown) out << ' ' << num(l->time_ns[i].value_or(0) / 1e9);
    double rest = 0;
    for (const PhaseLimit& l : c.phases) rest += l.minor ? l.time_ns[i].value_or(0) / 1e9 : 0;
    if (other) out << ' ' << num(rest);
    out << '\n';
  }
  const std::size_t columns = shown.size() + (other ? 1 : 0);
  out << "EOD\nset title 'Time per phase (m: measured)'\nset xlabel 'processes (n)'\nset ylabel 'time (s)'\n"
      << "set style data histogram\nset style histogram rowstacked\nset style fill solid 0.85 border -1\n"
      << "set boxwidth 0.7\nset key outside right top\nset grid ytics\nset yrange [0:*]\n";
  out << "plot for [k=2:" << columns + 1 << "] $phases using k:xtic(1) title columnheader(k)\n";
  return out.str();
}

/// Runs gnuplot on `script`; its messages are kept for the error. @throws p3s::Error when it cannot be run or fails.
void run_gnuplot(const std::string& script, const fs::path& dir) {
  const fs::path messages = dir / ".gnuplot.p3s-log";
  const std::string command = "gnuplot 2>" + quoted(messages.string());
  FILE* pipe = ::popen(command.c_str(), "w");
  if (pipe == nullptr) throw Error("cannot run gnuplot");
  const bool written = std::fwrite(script.data(), 1, script.size(), pipe) == script.size();
  const int status = ::pclose(pipe);
  std::ifstream log(messages);
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  std::error_code ec;
  fs::remove(messages, ec);
  if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    throw Error("gnuplot is not installed (on Debian: apt-get install gnuplot-nox); the curve's plots need it");
  }
  if (!written || status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    const std::size_t cut = text.rfind('\n');
    throw Error("gnuplot failed drawing the curve's plots" +
                (text.empty() ? std::string() : ": " + (cut == std::string::npos ? text : text.substr(cut + 1))));
  }
}

}  // namespace

void draw_plots(const Curve& c, const fs::path& dir, bool force) {
  struct Plot {
    std::string name;
    std::string commands;
  };
  std::vector<Plot> plots{{"time", time_plot(c)}, {"speedup", speedup_plot(c)}};
  if (!c.phases.empty()) plots.push_back({"phases", phases_plot(c)});
  std::vector<std::pair<fs::path, fs::path>> files;  // temporary -> final
  for (const Plot& p : plots) {
    for (const char* ext : {".svg", ".png"}) {
      const fs::path out = dir / (p.name + ext);
      refuse_existing(out, force, "plot");
      files.emplace_back(dir / ("." + p.name + ext + ".p3s-tmp"), out);
    }
  }
  OutputDirectory made(dir);
  std::string script = data_blocks(c);
  std::size_t f = 0;
  std::vector<int> slots;
  for (const Plot& p : plots) {
    for (const char* terminal : {"svg size 900,560 dynamic background '#ffffff' font 'sans,13'",
                                 "pngcairo size 900,560 background '#ffffff' font 'sans,11'"}) {
      slots.push_back(temporaries::add(files[f].first.string()));
      script += "reset\nset terminal " + std::string(terminal) + "\nset output " + quoted(files[f].first.string()) +
                "\n" + p.commands + "unset output\n";
      ++f;
    }
  }
  try {
    run_gnuplot(script, dir);
    for (const auto& [tmp, out] : files) move_into_place(tmp, out);
  } catch (...) {
    std::error_code ec;
    for (const auto& [tmp, out] : files) fs::remove(tmp, ec);
    for (const int s : slots) temporaries::remove(s);
    throw;
  }
  for (const int s : slots) temporaries::remove(s);
  made.keep();
}

}  // namespace p3s::curve
