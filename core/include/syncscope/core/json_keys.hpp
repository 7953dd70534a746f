// The strict JSON policy for the files syncscope writes and reads back (results.json,
// timelines.json, sweep.json, status files, calibration output): a key given twice in one
// object is refused, naming file:line:column. nlohmann::json keeps the last value silently,
// so {"mode": "simulated", "mode": "measured"} would read as measured; a file that says two
// things is not one to trust (RFC 8259 section 4: names "SHOULD be unique"; behaviour with
// duplicates is unpredictable across parsers).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace syncscope {

struct DuplicateKey {
  std::size_t line = 0;    // 1-based, of the second occurrence
  std::size_t column = 0;  // 1-based, in bytes
  std::string path;        // JSON path of the key: "$.variants[2].mode"
  std::string key;
};

// The first duplicate key in `json`, or nullopt. Scans the text once with no tree; expects
// JSON that a parser accepted (on malformed text it stops without a result, and the parser
// names the error). Keys compare after unescaping ("a" and "\u0061" are one key).
std::optional<DuplicateKey> find_duplicate_key(std::string_view json);

// Throws InputError "FILE:LINE:COL: duplicate key 'K' (at PATH): give each key once" when
// `json` holds a duplicate key.
void refuse_duplicate_keys(std::string_view json, std::string_view file);

}  // namespace syncscope
