#include "syncscope/io/nsys_sqlite.hpp"

#include <fstream>

#include "nsys_reader.hpp"
#include "sqlite_db.hpp"

namespace syncscope {

bool is_sqlite_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  char head[16] = {};
  in.read(head, sizeof head);
  return in.gcount() == static_cast<std::streamsize>(sizeof head) &&
         nsys_detail::has_sqlite_magic(std::string_view(head, sizeof head));
}

namespace {

Trace read_db(const nsys_detail::Db& db) {
  Trace trace;
  nsys_detail::Reader(db, trace).run();
  return trace;
}

}  // namespace

Trace read_nsys_sqlite(const std::filesystem::path& path, std::string_view display_name) {
  const std::string name = display_name.empty() ? path.string() : std::string(display_name);
  Trace t = read_db(nsys_detail::Db::open_file(path, name));
  t.meta.trace_name = std::filesystem::path(name).filename().string();
  return t;
}

Trace read_nsys_sqlite_memory(std::string_view image, std::string_view source_name) {
  Trace t = read_db(nsys_detail::Db::open_memory(image, std::string(source_name)));
  t.meta.trace_name = std::string(source_name);
  return t;
}

}  // namespace syncscope
