// RFC 4180 CSV: fields with a comma, quote, CR or LF are quoted, quotes doubled; CRLF
// line ends.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace syncscope {

std::string csv_escape(std::string_view field);

class CsvWriter {
 public:
  void row(const std::vector<std::string>& fields);
  void row(std::initializer_list<std::string_view> fields);
  const std::string& str() const { return out_; }

 private:
  std::string out_;
};

// Parses RFC 4180 text into rows of fields (for tests and for reading our own results).
// Throws InputError with the line number on an unterminated quote.
std::vector<std::vector<std::string>> csv_parse(std::string_view text, std::string_view source_name = "<csv>");

}  // namespace syncscope
