// SPDX-License-Identifier: BSD-3-Clause
// `p3s report`: one self-contained HTML page (no network, no script) of a `p3s scale` directory: the application
// and its runs, the recommendation, the curve and its plots, where phases stop scaling, the validation, the phases
// with their laws, and what the prediction cost against the runs it replaces.
#pragma once

#include <filesystem>

#include "p3s/curve/curve.hpp"

namespace p3s::report {

struct ReportOptions {
  std::filesystem::path dir;     ///< a `p3s scale` directory
  std::filesystem::path output;  ///< the page
  bool force = false;
  curve::Options curve;
};

/// Writes the page whole. @throws p3s::InputError when DIR holds no curve's points or the output exists without
/// force; p3s::Error when it cannot be written (or gnuplot cannot draw the plots).
void write_report(const ReportOptions& o);

}  // namespace p3s::report
