// SPDX-License-Identifier: BSD-3-Clause
#include "p3s/user_text.hpp"

#include <gtest/gtest.h>

#include <string>

#include "p3s/shell_words.hpp"

namespace p3s {
namespace {

TEST(UserText, DropsTheJsonLibrarysExceptionIds) {
  EXPECT_EQ(user_text("model 'm': [json.exception.type_error.302] type must be number, but is string"),
            "model 'm': type must be number, but is string");
}

TEST(UserText, KeepsUtf8AndReplacesWhatIsNot) {
  EXPECT_EQ(user_text("caf\xc3\xa9 \xe2\x86\x92 ok"), "caf\xc3\xa9 \xe2\x86\x92 ok");
  // A damaged input's bytes: a lone continuation byte, a lead byte without its continuation, an overlong form.
  EXPECT_EQ(user_text("a\x80z"), "a?z");
  EXPECT_EQ(user_text("a\xc3"), "a?");
  EXPECT_EQ(user_text("a\xc0\xafz"), "a??z");
  EXPECT_EQ(user_text("one\ntwo\tthree"), "one\\ntwo?three");
}

TEST(ShellWords, QuotedWordsReadBackWhole) {
  EXPECT_EQ(join_words({"./app", "-i", "in.dat"}), "./app -i in.dat");
  EXPECT_EQ(join_words({"./app", "x y"}), "./app 'x y'");
  EXPECT_EQ(split_words("./app 'x y' \"a b\" c\\ d"), (std::vector<std::string>{"./app", "x y", "a b", "c d"}));
}

}  // namespace
}  // namespace p3s
