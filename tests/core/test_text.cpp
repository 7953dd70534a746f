// core/text.hpp, issue 39: the one escaping of printed names (format and bidi characters too)
// and the name rule for names that become files (option names, scenario names).
#include <gtest/gtest.h>

#include <string>

#include "syncscope/core/text.hpp"

using namespace syncscope;

TEST(Escaping, TerminalEscapeSequencesAreShownNotSent) {
  // The hostile kernel name of the issue: sets the window title and clears the screen.
  const std::string evil = "k\x1b]0;owned\x07\x1b[2J";
  EXPECT_EQ(printable(evil), "k\\x1B]0;owned\\x07\\x1B[2J");
  EXPECT_TRUE(needs_escape(evil));
  EXPECT_EQ(printable("del\x7F"), "del\\x7F");
  EXPECT_EQ(printable("csi\xC2\x9B"), "csi\\xC2\\x9B");  // C1 CSI
  EXPECT_FALSE(needs_escape("aten::mm é 日本"));
}

TEST(Escaping, BidiAndFormatCharactersAsCodePoints) {
  EXPECT_EQ(printable("ab\u202Ecd"), "ab\\u{202E}cd");  // right-to-left override
  EXPECT_EQ(printable("\u2066x\u2069"), "\\u{2066}x\\u{2069}");
  EXPECT_EQ(printable("zero\u200Bwidth"), "zero\\u{200B}width");
  EXPECT_EQ(printable("bom\uFEFF"), "bom\\u{FEFF}");
  EXPECT_EQ(printable("line\u2028sep"), "line\\u{2028}sep");
  EXPECT_EQ(printable("tag\U000E0041"), "tag\\u{E0041}");
  for (const char* ok : {"\u202A", "\u202B", "\u202C", "\u202D", "\u2067", "\u2068", "\u00AD"})
    EXPECT_TRUE(needs_escape(ok)) << ok;
  EXPECT_FALSE(needs_escape("\u2010"));  // a hyphen: printed as it is
}

TEST(Names, FormatCharactersRefused) {
  auto p = name_problem("qwen\u202Eyaml");
  ASSERT_TRUE(p);
  EXPECT_NE(p->find("U+202E"), std::string::npos) << *p;
  EXPECT_NE(p->find("format character"), std::string::npos) << *p;
  EXPECT_TRUE(name_problem("a\u2066b"));
  EXPECT_FALSE(name_problem("Qwen3-0.6B é"));
}

TEST(Names, ByteLimitOfAFileName) {
  // 128 two-byte characters: within the character count, 256 bytes: over NAME_MAX.
  std::string two_byte;
  for (int i = 0; i < 128; ++i) two_byte += "é";
  auto p = name_problem(two_byte);
  ASSERT_TRUE(p);
  EXPECT_NE(p->find("256 bytes"), std::string::npos) << *p;
  std::string ok;
  for (int i = 0; i < 127; ++i) ok += "é";
  EXPECT_FALSE(name_problem(ok));  // 254 bytes
}

TEST(Names, FileNameRule) {
  EXPECT_FALSE(file_name_problem("my-calibration"));
  for (const char* bad : {"../x", "/abs/name", "a/b", ".", "..", ""}) EXPECT_TRUE(file_name_problem(bad)) << bad;
  EXPECT_NE(file_name_problem("../x")->find("'/'"), std::string::npos);
  EXPECT_TRUE(file_name_problem("x\x1b[2J"));
}
