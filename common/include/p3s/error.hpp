// SPDX-License-Identifier: BSD-3-Clause
// The exception hierarchy of the offline tools (never thrown inside the interposer).
#pragma once

#include <stdexcept>
#include <string>

namespace p3s {

/// Base of every error the p3s tools report to the user; the message says what, where, why and what to try.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A bad input file or option.
class InputError : public Error {
 public:
  using Error::Error;
};

/// A trace whose content is inconsistent (unmatched message, truncated stream).
class TraceError : public Error {
 public:
  using Error::Error;
};

/// An OTF2 library call failed.
class Otf2Error : public Error {
 public:
  using Error::Error;
};

/// Not enough points or a singular fit in the modeler.
class ModelError : public Error {
 public:
  using Error::Error;
};

}  // namespace p3s
