#pragma once

#include <string_view>

namespace syncscope {

// Shell-style match of a whole name: `*` any run, `?` one character, `[abc]`/`[a-z]`/`[!x]`
// a class. Used for --step-range and --layer-range (e.g. "ProfilerStep#*", "layer_*").
bool glob_match(std::string_view pattern, std::string_view name);

}  // namespace syncscope
