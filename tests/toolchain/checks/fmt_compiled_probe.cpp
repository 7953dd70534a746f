// The fmt check's negative control: compiled fmt (fmt::fmt, no FMT_HEADER_ONLY), so this
// object has undefined fmt symbols the check must report.
#include <fmt/format.h>

#include <string>

std::string syncscope_fmt_compiled_probe(int v) { return fmt::format("{}", v); }
