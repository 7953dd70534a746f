// The fix registry before any fix registers (fix_spec.hpp): every fix lives in its own folder
// and registers itself, so a program that forgets register_shipped_fixes() must hear so at
// its first lookup, not see "unknown fix packing" or a step built without a fix's operators.
// This binary links the registry alone (no tests/support/shipped_fixes.cpp).
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>

#include "syncscope/core/error.hpp"
#include "syncscope/fixes/fix_spec.hpp"

namespace syncscope {
namespace {

void expect_names_the_call(const std::function<void()>& lookup) {
  try {
    lookup();
    FAIL() << "an empty registry answered";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("register_shipped_fixes()"), std::string::npos) << e.what();
  }
}

TEST(FixRegistryEmpty, EveryLookupNamesTheCallThatFillsIt) {
  expect_names_the_call([] { (void)fixes::fix_registry(); });
  expect_names_the_call([] { (void)fixes::find_fix("packing"); });
  expect_names_the_call([] { (void)fixes::fix_spec(static_cast<fixes::Fix>(0)); });
  expect_names_the_call([] { (void)fixes::parse_variant(static_cast<fixes::Fix>(0), "cached", "a variant"); });
}

TEST(FixRegistryEmpty, FixesKeepIdOrderWhateverOrderTheyRegisterIn) {
  auto toy = [](int id, std::string name) {
    fixes::FixSpec f;
    f.id = static_cast<fixes::Fix>(id);
    f.name = std::move(name);
    f.variants = {"off", "on"};
    return f;
  };
  (void)fixes::register_fix(toy(41, "later"));
  (void)fixes::register_fix(toy(40, "earlier"));
  ASSERT_EQ(fixes::fix_registry().size(), 2u);
  EXPECT_EQ(fixes::fix_registry()[0].name, "earlier");
  EXPECT_EQ(fixes::fix_registry()[1].name, "later");
  EXPECT_THROW((void)fixes::register_fix(toy(42, "earlier")), std::invalid_argument);  // name taken
  fixes::unregister_fix(static_cast<fixes::Fix>(40));
  fixes::unregister_fix(static_cast<fixes::Fix>(41));
  EXPECT_THROW((void)fixes::fix_registry(), Error);  // empty again
}

}  // namespace
}  // namespace syncscope
