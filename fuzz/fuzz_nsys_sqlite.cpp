// libFuzzer target for the Nsight Systems SQLite reader on corrupt databases. Random bytes
// are almost never a SQLite file, so most inputs are edits to a valid export: at start-up
// the 2024.6 fixture (tests/fixtures/nsys/nsys_2024_6.sql) is built in memory and
// serialized; an input is then a list of 4-byte edits (3 bytes little-endian offset into the
// image, 1 byte value), and a trailing single byte, if any, cuts the image to that many
// 256ths of its size. An input that itself starts with the SQLite header is read whole.
// Every image is loaded with sqlite3_deserialize (read-only). Properties checked:
// - it never crashes, hangs or trips ASan/UBSan; it either throws InputError or returns a
//   trace (any other exception fails);
// - a trace it returns is analyzable, and what the writer makes of it reads back as JSON.
#include <sqlite3.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/io/nsys_sqlite.hpp"
#include "syncscope/io/trace_io.hpp"

namespace {

using namespace syncscope;

[[noreturn]] void die(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_nsys_sqlite: %s: %s\n", what, detail.c_str());
  std::abort();
}

std::string build_base_image() {
  std::ifstream in(SYNCSCOPE_NSYS_FUZZ_SQL, std::ios::binary);
  if (!in) die("cannot read the seed export's SQL", SYNCSCOPE_NSYS_FUZZ_SQL);
  std::ostringstream sql;
  sql << in.rdbuf();
  sqlite3* db = nullptr;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) die("sqlite3_open", "");
  char* err = nullptr;
  if (sqlite3_exec(db, sql.str().c_str(), nullptr, nullptr, &err) != SQLITE_OK) die("seed SQL", err ? err : "");
  sqlite3_int64 size = 0;
  unsigned char* bytes = sqlite3_serialize(db, "main", &size, 0);
  if (bytes == nullptr) die("sqlite3_serialize", "");
  std::string image(reinterpret_cast<const char*>(bytes), static_cast<std::size_t>(size));
  sqlite3_free(bytes);
  sqlite3_close(db);
  return image;
}

const std::string& base_image() {
  static const std::string image = build_base_image();
  return image;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)base_image();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  std::string image;
  if (in.size() >= 16 && in.substr(0, 16) == std::string_view("SQLite format 3\0", 16)) {
    image.assign(in);
  } else {
    image = base_image();
    std::size_t i = 0;
    for (; i + 4 <= size; i += 4) {
      const std::size_t offset =
          (std::size_t{data[i]} | std::size_t{data[i + 1]} << 8 | std::size_t{data[i + 2]} << 16) % image.size();
      image[offset] = static_cast<char>(data[i + 3]);
    }
    if (size - i == 1) image.resize(image.size() * data[i] / 256);
  }
  Trace trace;
  try {
    trace = read_nsys_sqlite_memory(image, "fuzz");
  } catch (const InputError&) {
    return 0;
  }
  (void)analyze(trace, {});
  const std::string json = chrome_json_string(trace);
  try {
    (void)parse_chrome_json(json, "our own output");
  } catch (const InputError& e) {
    die("our own output does not read back", e.what());
  }
  return 0;
}
