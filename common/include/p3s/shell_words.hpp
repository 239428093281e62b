// SPDX-License-Identifier: BSD-3-Clause
// A command line as one string that keeps its arguments' boundaries: words quoted as a POSIX shell reads them.
#pragma once

#include <string>
#include <vector>

namespace p3s {

/// `word` as a shell reads it back as one argument: as it is where it holds only characters no shell treats
/// specially, else in single quotes (a quote inside written '\'').
[[nodiscard]] inline std::string quote_word(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of(
                                          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789@%+=:,./_-") == std::string::npos;
  if (plain) return word;
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// The words joined by spaces, each quoted as needed.
[[nodiscard]] inline std::string join_words(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : " ") + quote_word(w);
  return s;
}

/// The words of a line that join_words() wrote (or of any line without quotes: split at white space): single
/// and double quotes group, a backslash outside single quotes escapes the next character.
[[nodiscard]] inline std::vector<std::string> split_words(const std::string& line) {
  std::vector<std::string> out;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) out.push_back(word);
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\'') {
      const std::size_t end = line.find('\'', i + 1);
      word += line.substr(i + 1, (end == std::string::npos ? line.size() : end) - i - 1);
      i = end == std::string::npos ? line.size() : end;
    } else if (c == '"') {
      for (++i; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] == '\\' && i + 1 < line.size()) ++i;
        word += line[i];
      }
    } else if (c == '\\' && i + 1 < line.size()) {
      word += line[++i];
    } else {
      word += c;
    }
  }
  if (in_word) out.push_back(word);
  return out;
}

}  // namespace p3s
