// Bad input: every case must throw InputError whose one-line message names the input and
// where (event index or byte offset), never crash, never return a partial trace.
#include <gtest/gtest.h>

#include "io_test_util.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/io/trace_io.hpp"

namespace syncscope {
namespace {

std::string error_of(std::string_view text, std::size_t chunk = std::size_t{1} << 20) {
  ReadOptions o;
  o.chunk_bytes = chunk;
  try {
    parse_chrome_json(text, "bad.json", o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}

// The message for a bad input, checked to be one line that names the source, and the same
// whatever the read size.
std::string expect_error(std::string_view text) {
  const std::string msg = error_of(text);
  EXPECT_NE(msg, "<no error>") << text;
  EXPECT_EQ(msg.rfind("bad.json: ", 0), 0u) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  EXPECT_EQ(error_of(text, 3), msg) << "chunked read reports differently";
  return msg;
}

std::string event(std::string_view body) {
  return std::string(R"({"traceEvents": [{"ph":"X","cat":"cpu_op","name":"ok","pid":1,"tid":1,"ts":1,"dur":1},)") +
         std::string(body) + "]}";
}

TEST(ChromeErrors, WrongTypesNameTheFieldAndTheEvent) {
  auto m = expect_error(event(R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":true,"dur":1})"));
  EXPECT_NE(m.find("traceEvents[1]"), std::string::npos) << m;
  EXPECT_NE(m.find("field \"ts\""), std::string::npos) << m;
  EXPECT_NE(m.find("got a boolean"), std::string::npos) << m;
  EXPECT_NE(m.find("byte 86"), std::string::npos) << m;  // where traceEvents[1] starts

  m = expect_error(event(R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":"x"})"));
  EXPECT_NE(m.find("field \"dur\""), std::string::npos) << m;
  EXPECT_NE(m.find("\"x\""), std::string::npos) << m;

  m = expect_error(event(R"({"ph":"X","cat":"kernel","name":7,"pid":0,"tid":7,"ts":1,"dur":1})"));
  EXPECT_NE(m.find("field \"name\": expected a string, got a number"), std::string::npos) << m;
  // (pid, tid, args and argument values of other types are counted warnings: test_generous.cpp.)
  m = expect_error(event(R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":7,"ts":1e400,"dur":1})"));
  EXPECT_NE(m.find("field \"ts\""), std::string::npos) << m;
  m = expect_error(event(R"([1,2])"));
  EXPECT_NE(m.find("expected an event object, got an array"), std::string::npos) << m;
  m = expect_error(event(R"({"ph":"XY","name":"a","ts":1})"));
  EXPECT_NE(m.find("one-letter"), std::string::npos) << m;
}

TEST(ChromeErrors, MissingRequiredFields) {
  auto m = expect_error(event(R"({"cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1})"));
  EXPECT_NE(m.find("missing required field \"ph\""), std::string::npos) << m;
  m = expect_error(event(R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"dur":1})"));
  EXPECT_NE(m.find("missing required field \"ts\""), std::string::npos) << m;
  m = expect_error(event(R"({"ph":"X","cat":"cuda_runtime","name":"k","pid":0,"tid":7,"ts":1})"));
  EXPECT_NE(m.find("missing required field \"dur\""), std::string::npos) << m;
  m = expect_error(event(R"({"ph":"X","cat":"kernel","pid":0,"tid":7,"ts":1,"dur":1})"));
  EXPECT_NE(m.find("missing required field \"name\""), std::string::npos) << m;
  m = expect_error(event(R"({"ph":"i","name":"n","pid":0,"tid":7})"));
  EXPECT_NE(m.find("missing required field \"ts\""), std::string::npos) << m;
  m = expect_error(event(R"({"ph":"M","pid":0,"tid":7,"args":{"name":"x"}})"));
  EXPECT_NE(m.find("missing required field \"name\""), std::string::npos) << m;
  m = expect_error(R"({"traceName": "x"})");
  EXPECT_NE(m.find("no \"traceEvents\" array"), std::string::npos) << m;
}

TEST(ChromeErrors, NegativeDurationsAndTimestamps) {
  auto m = expect_error(event(R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":-0.5})"));
  EXPECT_NE(m.find("negative \"dur\""), std::string::npos) << m;
  EXPECT_NE(m.find("traceEvents[1]"), std::string::npos) << m;
  m = expect_error(event(R"({"ph":"X","cat":"Trace","name":"k","pid":"a","tid":"b","ts":2,"dur":-1})"));
  EXPECT_NE(m.find("negative \"dur\""), std::string::npos) << m;
  // Negative after rebasing (no base here): reported with the offending event.
  m = expect_error(event(R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":-3,"dur":1})"));
  EXPECT_NE(m.find("negative timestamp"), std::string::npos) << m;
  EXPECT_NE(m.find("traceEvents[1]"), std::string::npos) << m;
  m = expect_error(R"({"baseTimeNanoseconds": 1000, "traceEvents": [{"ph":"i","name":"n","ts":-1.001}]})");
  EXPECT_NE(m.find("negative timestamp"), std::string::npos) << m;
  m = expect_error(R"({"baseTimeNanoseconds": -5, "traceEvents": []})");
  EXPECT_NE(m.find("baseTimeNanoseconds"), std::string::npos) << m;
  m = expect_error(R"({"baseTimeNanoseconds": 9223372036854775000, "traceEvents": [{"ph":"i","name":"n","ts":100}]})");
  EXPECT_NE(m.find("overflows"), std::string::npos) << m;
}

TEST(ChromeErrors, UnsortedInputIsFine) {
  const Trace t = parse_chrome_json(
      R"([{"ph":"X","cat":"kernel","name":"b","pid":0,"tid":7,"ts":9,"dur":1},
          {"ph":"X","cat":"kernel","name":"a","pid":0,"tid":7,"ts":2,"dur":1}])",
      "unsorted.json");
  ASSERT_EQ(t.kernels.size(), 2u);
  EXPECT_EQ(t.str(t.kernels[0].name), "a");
  EXPECT_EQ(t.kernels[0].start, 2000);
}

TEST(ChromeErrors, MalformedJson) {
  const std::string good = event(R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1})");
  for (const char* body : {
           R"({"ph":"X" "cat":"kernel"})",  // missing comma
           R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"x":[1,,2]}})",
           R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"zz":tru})",
           R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"zz":[}])",
           R"({"ph":"X","cat":"cpu_op","name":"a\x","pid":1,"tid":1,"ts":1,"dur":1})",  // bad escape
           R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":01,"dur":1})",
       }) {
    auto m = expect_error(event(body));
    EXPECT_NE(m.find("traceEvents[1]"), std::string::npos) << body << " -> " << m;
  }
  expect_error(std::string(R"([{"ph":"i","name":")") + "\xff\xfe" + R"(","ts":1}])");  // invalid UTF-8
  expect_error(std::string(R"([{"ph":"i","name":"a)") + "\x01" + R"(","ts":1}])");     // raw control character
  auto m = expect_error(R"({"traceEvents": [{"ph":"i","name":"a","ts":1},]})");
  EXPECT_NE(m.find("trailing ','"), std::string::npos) << m;
  m = expect_error(R"({"traceEvents": [{"ph":"i","name":"a","ts":1} {"ph":"i","name":"a","ts":1}]})");
  EXPECT_NE(m.find("expected ',' or ']' after traceEvents[0]"), std::string::npos) << m;
  m = expect_error(R"({"traceEvents": []} x)");
  EXPECT_NE(m.find("after the end of the JSON document"), std::string::npos) << m;
  m = expect_error(R"({"traceEvents": [], "a" 1})");
  EXPECT_NE(m.find("expected ':'"), std::string::npos) << m;
  m = expect_error(R"({traceEvents: []})");
  EXPECT_NE(m.find("expected a quoted key"), std::string::npos) << m;
  m = expect_error(R"({"traceEvents": {}})");
  EXPECT_NE(m.find("must be an array"), std::string::npos) << m;
  m = expect_error(R"({"schemaVersion": 1.5e400, "traceEvents": []})");
  EXPECT_NE(m.find("top-level key \"schemaVersion\""), std::string::npos) << m;
  m = expect_error(R"({"deviceProperties": [{"id": 1e400}], "traceEvents": []})");
  EXPECT_NE(m.find("top-level key \"deviceProperties\""), std::string::npos) << m;
  m = expect_error(R"({"traceEvents": [], "traceEvents": []})");
  EXPECT_NE(m.find("appears twice"), std::string::npos) << m;
  m = expect_error(R"({"syncscope": {"schema_version": 99}, "traceEvents": []})");
  EXPECT_NE(m.find("newer than this build"), std::string::npos) << m;
  m = expect_error(R"({"syncscope": {"schema_version": 1, "clock": "sundial"}, "traceEvents": []})");
  EXPECT_NE(m.find("unknown clock"), std::string::npos) << m;
  m = expect_error(event(
      R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"syncscope":{"range_kind":"bogus"}}})"));
  EXPECT_NE(m.find("unknown range kind"), std::string::npos) << m;
}

TEST(ChromeErrors, TruncatedInputAtEveryLength) {
  const std::string text = test::slurp(test::trace_fixture("kineto_all_categories.json"));
  // Cut everywhere in the first and last few hundred bytes and at a stride in between.
  const std::size_t complete = text.find_last_of('}');  // cutting after this leaves valid JSON
  std::size_t checked = 0;
  for (std::size_t n = 0; n <= complete; n += (n < 400 || n + 400 > complete) ? 1 : 97) {
    const std::string_view cut(text.data(), n);
    if (cut.find_first_not_of(" \n\r\t") == std::string_view::npos) {
      EXPECT_NE(error_of(cut).find("empty file"), std::string::npos);
      continue;
    }
    const std::string m = error_of(cut, 1 + n % 7);
    ASSERT_EQ(m.rfind("bad.json: ", 0), 0u) << "cut at " << n << ": " << m;
    ++checked;
  }
  EXPECT_GT(checked, 800u);
  auto m = error_of(text.substr(0, text.size() / 2));
  EXPECT_NE(m.find("truncated"), std::string::npos) << m;
  EXPECT_NE(m.find("byte "), std::string::npos) << m;
}

TEST(ChromeErrors, FilesThatAreNotTraces) {
  test::TempDir dir;
  auto err = [&](const std::string& name, std::string_view content) {
    test::spit(dir / name, content);
    try {
      read_trace(dir / name);
    } catch (const InputError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find((dir / name).string()), std::string::npos) << m;
      return m;
    }
    ADD_FAILURE() << name << ": no error";
    return std::string();
  };
  EXPECT_NE(err("empty.json", "").find("empty file"), std::string::npos);
  EXPECT_NE(err("text.json", "hello world").find("not a trace file"), std::string::npos);
  EXPECT_NE(err("binary.bin", std::string("\x7f"
                                          "ELF\x02\x01\x01\0\0\0",
                                          10))
                .find("not a trace file"),
            std::string::npos);
  EXPECT_NE(err("number.json", "42").find("not a trace file"), std::string::npos);

  const std::string text = test::slurp(test::trace_fixture("kineto_all_categories.json"));
  test::spit_gz(dir / "good.json.gz", text);
  std::string gz = test::slurp(dir / "good.json.gz");
  auto m = err("truncated.json.gz", gz.substr(0, gz.size() / 2));
  EXPECT_NE(m.find("truncated gzip"), std::string::npos) << m;
  std::string corrupt = gz;
  for (std::size_t i = 20; i < 60 && i < corrupt.size(); ++i) corrupt[i] = static_cast<char>(corrupt[i] ^ 0x5a);
  m = err("corrupt.json.gz", corrupt);
  EXPECT_TRUE(m.find("gzip") != std::string::npos || m.find("byte") != std::string::npos) << m;
  m = err("trailing.json.gz", gz + "garbage!");
  EXPECT_NE(m.find("gzip"), std::string::npos) << m;

  try {
    read_trace(dir / "missing.json");
    ADD_FAILURE() << "no error for a missing file";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no such file"), std::string::npos);
  }
  EXPECT_THROW(read_trace(dir.path()), InputError);  // a directory
  ReadOptions binary;
  binary.format = TraceFormat::Binary;
  EXPECT_THROW(read_trace(test::trace_fixture("chrome_array.json"), binary), InputError);
}

}  // namespace
}  // namespace syncscope
