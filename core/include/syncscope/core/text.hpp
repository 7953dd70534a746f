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
// newline, tab or NUL), no format character (Unicode Cf: bidi embeddings, overrides and
// isolates, zero-width characters; and the line/paragraph separators U+2028/U+2029) and have
// 1..max_chars characters (code points); a name (max_chars <= 128): max_name_bytes bytes.
inline constexpr std::size_t max_name_bytes = 255;  // NAME_MAX of ext4, XFS, tmpfs
std::optional<std::string> name_problem(std::string_view name, std::size_t max_chars = 128);

// THE escaping of every name printed to a terminal or a log (trace, kernel, step, scenario,
// task names, file names, messages quoting input): valid UTF-8 text with every control
// character (C0, DEL, C1) and every byte that is not part of valid UTF-8 written as \xNN, and
// every format character (as name_problem) as \u{XXXX}; a backslash itself stays. So a
// table or a log line stays one line, no escape sequence reaches the terminal (window title,
// clear screen) and no bidi control reorders what is shown.
std::string printable(std::string_view text);

// Whether printable(text) differs from text.
bool needs_escape(std::string_view text);

// Why `name` cannot name a file or directory we create from an option or an input (a
// scenario, task or profile name), or nullopt: name_problem's rule, and no '/', not "." or
// "..", so it stays one component inside the directory it is written in.
std::optional<std::string> file_name_problem(std::string_view name, std::size_t max_chars = 128);

// Length in code points of valid UTF-8; counts each invalid byte as one.
std::size_t utf8_length(std::string_view text);

}  // namespace syncscope
