#include <array>
#include <string>

#include "syncscope/core/error.hpp"
#include "syncscope/tracer/activities.hpp"

namespace syncscope {
namespace {

struct ActivityName {
  const char* name;
  std::uint32_t bit;
};
constexpr std::array<ActivityName, 9> kActivityNames = {{
    {"kernel", kActivityKernel},
    {"memcpy", kActivityMemcpy},
    {"memset", kActivityMemset},
    {"sync", kActivitySync},
    {"event", kActivityEvent},
    {"runtime", kActivityRuntime},
    {"driver", kActivityDriver},
    {"nvtx", kActivityNvtx},
    {"overhead", kActivityOverhead},
}};

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

}  // namespace

std::uint32_t parse_activities(std::string_view list) {
  std::uint32_t result = 0;
  bool any = false;
  std::size_t pos = 0;
  while (pos <= list.size()) {
    const std::size_t comma = list.find(',', pos);
    std::string word = trim(list.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
    pos = comma == std::string_view::npos ? list.size() + 1 : comma + 1;
    if (word.empty()) continue;
    bool remove = false;
    if (word.front() == '-') {
      remove = true;
      word.erase(0, 1);
    }
    std::uint32_t bits = 0;
    if (word == "all") bits = kAllActivities;
    else if (word == "default") bits = kDefaultActivities;
    else {
      for (const auto& a : kActivityNames)
        if (word == a.name) bits = a.bit;
    }
    if (bits == 0) {
      std::string known = "all, default";
      for (const auto& a : kActivityNames) known += std::string(", ") + a.name;
      throw InputError("--activities: unknown activity '" + word + "' in '" + std::string(list) +
                       "'; use a comma-separated list of: " + known + " (a leading '-' removes one)");
    }
    if (remove) result &= ~bits;
    else result |= bits;
    any = true;
  }
  SYNCSCOPE_INPUT_ERROR_IF(!any || result == 0, "--activities: '" + std::string(list) +
                                                    "' selects nothing; e.g. 'all' or 'kernel,memcpy,sync,runtime'");
  return result;
}

std::string activities_to_string(std::uint32_t activities) {
  if ((activities & kAllActivities) == kAllActivities) return "all";
  std::string out;
  for (const auto& a : kActivityNames) {
    if (activities & a.bit) {
      if (!out.empty()) out += ',';
      out += a.name;
    }
  }
  return out;
}

}  // namespace syncscope
