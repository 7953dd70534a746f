#include "syncscope/api/defaults.hpp"

namespace syncscope::api {

std::string option_name(Spelling spelling, const std::string& python_name) {
  if (spelling == Spelling::Python) return python_name;
  std::string cli = "--" + python_name;
  for (char& c : cli)
    if (c == '_') c = '-';
  return cli;
}

std::string python_name(const std::string& flag) {
  std::string name = flag;
  for (char& c : name)
    if (c == '-') c = '_';
  return name;
}

}  // namespace syncscope::api
