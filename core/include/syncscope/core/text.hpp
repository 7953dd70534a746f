// Names that people read: what a printed name may be, and how arbitrary bytes are shown on
// a terminal. Scenario and model names are checked at load; printers of text we
// did not check (traces, results written by others) make it printable.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace syncscope {

// Why `name` cannot be a printed name, or nullopt when it can: it must be valid UTF-8
// (no overlong forms, no surrogates), hold no control character (C0, DEL, C1; so no
// newline, tab or NUL) and have 1..max_chars characters (code points).
std::optional<std::string> name_problem(std::string_view name, std::size_t max_chars = 128);

// Valid UTF-8 text with every control character and every byte that is not part of valid
// UTF-8 written as \xNN (a backslash itself stays), so a table or a log line stays one line
// and a terminal shows it as it is.
std::string printable(std::string_view text);

// Length in code points of valid UTF-8; counts each invalid byte as one.
std::size_t utf8_length(std::string_view text);

}  // namespace syncscope
