#include "syncscope/core/csv.hpp"

#include "syncscope/core/error.hpp"

namespace syncscope {

namespace {

// A cell a spreadsheet would take as a formula: it starts with '=', '+', '-', '@', a tab or a
// carriage return (OWASP, "CSV Injection") and is not a plain number such as -1.5 or +3e9.
bool formula_like(std::string_view f) {
  if (f.empty() || std::string_view("=+-@\t\r").find(f.front()) == std::string_view::npos) return false;
  if (f == "-" || f == "+") return false;  // a placeholder, not a formula
  std::size_t i = (f.front() == '+' || f.front() == '-') ? 1 : 0;
  if (i == 1 && (f.substr(1) == "inf" || f.substr(1) == "nan")) return false;  // as fmt prints them
  bool digit = false, dot = false, exp = false;
  for (; i < f.size(); ++i) {
    const char c = f[i];
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if (c == '.' && !dot && !exp) {
      dot = true;
    } else if ((c == 'e' || c == 'E') && digit && !exp) {
      exp = true;
      digit = false;
      if (i + 1 < f.size() && (f[i + 1] == '+' || f[i + 1] == '-')) ++i;
    } else {
      return true;
    }
  }
  return !digit;
}

}  // namespace

std::string csv_escape(std::string_view f) {
  // A formula-like cell is prefixed with an apostrophe (spreadsheets show it as text) and quoted.
  const bool formula = formula_like(f);
  if (!formula && f.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(f);
  std::string out = formula ? "\"'" : "\"";
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
  SYNCSCOPE_INPUT_ERROR_IF(quoted,
                           std::string(source_name) + ":" + std::to_string(quote_line) + ": unterminated quoted field");
  if (field_started || !row.empty()) {
    end_field();
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace syncscope
