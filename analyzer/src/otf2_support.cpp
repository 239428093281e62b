// SPDX-License-Identifier: BSD-3-Clause
// OTF2 error capture (interpose's, shared by every p3s part in a process): OTF2 prints its errors to stderr by
// default, which would garble the one-line messages the tools promise; they are folded into the exception text.
#include "otf2_support.hpp"

#include "p3s/interpose/archive_writer.hpp"

namespace p3s::analyzer::detail {

void capture_otf2_errors() { interpose::capture_otf2_errors(); }

void forget_otf2_errors() noexcept { (void)interpose::take_otf2_message(); }

std::string otf2_error_text(OTF2_ErrorCode code) {
  std::string text = OTF2_Error_GetName(code);
  const std::string said = interpose::take_otf2_message();
  if (!said.empty()) text += ": " + said;
  return text;
}

std::string otf2_failure_text() {
  const std::string said = interpose::take_otf2_message();
  return said.empty() ? "OTF2 gave no reason" : said;
}

}  // namespace p3s::analyzer::detail
