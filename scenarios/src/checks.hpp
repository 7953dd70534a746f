// Rules shared by the YAML loader, the Hugging Face config reader and validate_scenario():
// one place says what a possible scenario is, and each caller says where a field came from.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "syncscope/core/bounds.hpp"
#include "syncscope/scenario/scenario.hpp"

namespace syncscope::scenario::detail {

// Maps a dotted field name ("batch.packed_tokens") to the location prefix of an error
// message: "file:line:column" when the field's position is known, else the file name.
using Locator = std::function<std::string(const std::string& field)>;

// Throws InputError "<where>: <field>: expected <form>, got <value>".
[[noreturn]] void fail(const Locator& where, const std::string& field, const std::string& expected,
                       const std::string& got);

// Throws unless `v` is within `r` (core/bounds.hpp says why each bound is what it is): below
// the range, the plain form ("a positive integer"); above it, the bound and its reason.
void in_range(const Locator& where, const std::string& field, long long v, const bounds::Range& r);
// "a, b, c": the items with `sep` between them.
std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");
// "packing, offload, moe_routing" and "packing, offload and/or moe_routing": the registry's names.
std::string fix_names(const char* last_sep);
// The scenario's fix selections (fix_checks.cpp): each fix once, its variants and tolerance,
// its own keys and the scenarios it cannot run in.
void check_fix_selections(const scenario::Scenario& scenario, const Locator& where);

// Fills defaults that depend on other fields (kv heads = heads, head_dim = hidden/heads)
// and checks the shape. `prefix` is "model." for scenarios, "" for config.json.
void check_model(scenario::ModelShape& model, const Locator& where, const std::string& prefix);
void check_scenario(scenario::Scenario& scenario, const Locator& where);
// The fields of training as Unsloth does it (training mode, LoRA, tied embeddings, gpt-oss clamp, prefetch budget).
void check_model_training_keys(const scenario::ModelShape& model, const Locator& where, const std::string& prefix);
void check_training(scenario::Scenario& scenario, const Locator& where);

}  // namespace syncscope::scenario::detail
