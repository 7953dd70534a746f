// Issue 39: the strict JSON policy's pieces in core: duplicate keys found with line:column,
// and files we read back refused unless regular (a FIFO must not hang the reader).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <new>

#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/json_keys.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

TEST(DuplicateKeys, FoundWithLineColumnAndPath) {
  const std::string text = "{\n  \"variants\": [\n    {\"a\": 1},\n    {\"mode\": 1, \"b\": {}, \"mode\": 2}\n  ]\n}\n";
  auto d = find_duplicate_key(text);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->line, 4u);
  EXPECT_EQ(d->column, 26u);
  EXPECT_EQ(d->path, "$.variants[1].mode");
  EXPECT_EQ(d->key, "mode");
}

TEST(DuplicateKeys, EscapedSpellingsAreOneKey) {
  EXPECT_TRUE(find_duplicate_key(R"({"mode": "simulated", "m\u006fde": "measured"})"));
  EXPECT_TRUE(find_duplicate_key(R"({"\ud83d\ude00": 1, "😀": 2})"));
}

TEST(DuplicateKeys, NoFalseAlarms) {
  // The same key in sibling objects, keys that look alike, strings holding braces and quotes.
  EXPECT_FALSE(find_duplicate_key(R"({"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 1}, {"x": 2}]})"));
  EXPECT_FALSE(find_duplicate_key(R"({"a": "{\"a\": 1, \"a\": 2}", "A": 1, "a ": 2})"));
  EXPECT_FALSE(find_duplicate_key(R"(["a", "a", {"k": "a", "v": "a"}])"));
}

TEST(DuplicateKeys, RefusalNamesFileLineColumn) {
  try {
    refuse_duplicate_keys("{\"mode\": \"simulated\",\n \"mode\": \"measured\"}", "r/results.json");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("r/results.json:2:2: duplicate key 'mode' (at $.mode)"), std::string::npos)
        << e.what();
  }
}

TEST(ReadRegularFile, FifoRefusedWithoutWaiting) {
  test::TempDir dir;
  const auto fifo = dir / "results.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // A blocking open would wait here for a writer forever (the issue's hang).
  try {
    (void)read_regular_file(fifo);
    FAIL() << "a FIFO was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is a FIFO (named pipe), expected a regular file"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW((void)read_regular_file(dir.path()), InputError);  // a directory
  EXPECT_THROW((void)read_regular_file("-"), InputError);         // standard input
}

TEST(ReadRegularFile, ReadsAndRecordsProgress) {
  test::TempDir dir;
  std::ofstream(dir / "a.json") << "{\"x\": 1}";
  EXPECT_EQ(read_regular_file(dir / "a.json"), "{\"x\": 1}");
  const ReadingNow now = reading_now();
  EXPECT_EQ(now.file, (dir / "a.json").string());
  EXPECT_EQ(now.bytes, 8u);
}

}  // namespace
}  // namespace syncscope
