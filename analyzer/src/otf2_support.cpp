// SPDX-License-Identifier: BSD-3-Clause
// OTF2 error capture: OTF2 prints its errors to stderr by default, which would garble the one-line messages
// the tools promise; the messages are kept and folded into the exception text instead.
#include "otf2_support.hpp"

#include <cstdarg>
#include <cstdio>
#include <mutex>

namespace p3s::analyzer::detail {
namespace {

thread_local std::string t_last_message;

OTF2_ErrorCode keep_message(void* /*user_data*/, const char* /*file*/, uint64_t /*line*/, const char* /*function*/,
                            OTF2_ErrorCode code, const char* format, va_list args) {
  char text[512];
  std::vsnprintf(text, sizeof text, format, args);
  // OTF2 reports a failure once per layer it crosses; the innermost (first) message is the informative one.
  if (t_last_message.empty()) t_last_message = text;
  return code;
}

}  // namespace

void capture_otf2_errors() {
  static std::once_flag once;
  std::call_once(once, [] { OTF2_Error_RegisterCallback(&keep_message, nullptr); });
}

void forget_otf2_errors() noexcept { t_last_message.clear(); }

std::string otf2_error_text(OTF2_ErrorCode code) {
  std::string text = OTF2_Error_GetName(code);
  if (!t_last_message.empty()) text += ": " + t_last_message;
  t_last_message.clear();
  return text;
}

std::string otf2_failure_text() {
  std::string text = t_last_message.empty() ? "OTF2 gave no reason" : t_last_message;
  t_last_message.clear();
  return text;
}

}  // namespace p3s::analyzer::detail
