#include "syncscope/core/csv.hpp"

#include "syncscope/core/error.hpp"

namespace syncscope {

std::string csv_escape(std::string_view f) {
  if (f.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(f);
  std::string out = "\"";
  for (char c : f) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

void CsvWriter::row(const std::vector<std::string>& fields) {
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) out_ += ',';
    out_ += csv_escape(fields[i]);
  }
  out_ += "\r\n";
}

void CsvWriter::row(std::initializer_list<std::string_view> fields) {
  bool first = true;
  for (auto f : fields) {
    if (!first) out_ += ',';
    first = false;
    out_ += csv_escape(f);
  }
  out_ += "\r\n";
}

std::vector<std::vector<std::string>> csv_parse(std::string_view text, std::string_view source_name) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, field_started = false;
  std::size_t line = 1, quote_line = 0;
  auto end_field = [&] {
    row.push_back(std::move(field));
    field.clear();
    field_started = false;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"' && !field_started) {
      quoted = field_started = true;
      quote_line = line;
    } else if (c == ',') {
      end_field();
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      continue;
    } else if (c == '\n') {
      end_field();
      rows.push_back(std::move(row));
      row.clear();
      ++line;
    } else {
      field += c;
      field_started = true;
    }
  }
  SYNCSCOPE_INPUT_ERROR_IF(quoted, std::string(source_name) + ":" + std::to_string(quote_line) +
                                       ": unterminated quoted field");
  if (field_started || !row.empty()) {
    end_field();
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace syncscope
