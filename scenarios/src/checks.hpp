// Rules shared by the YAML loader, the Hugging Face config reader and validate_scenario():
// one place says what a possible scenario is, and each caller says where a field came from.
#pragma once

#include <functional>
#include <string>

#include "syncscope/scenario/scenario.hpp"

namespace syncscope::scenario::detail {

// Maps a dotted field name ("batch.packed_tokens") to the location prefix of an error
// message: "file:line:column" when the field's position is known, else the file name.
using Locator = std::function<std::string(const std::string& field)>;

// Throws InputError "<where>: <field>: expected <form>, got <value>".
[[noreturn]] void fail(const Locator& where, const std::string& field, const std::string& expected,
                       const std::string& got);

// Fills defaults that depend on other fields (kv heads = heads, head_dim = hidden/heads)
// and checks the shape. `prefix` is "model." for scenarios, "" for config.json.
void check_model(scenario::ModelShape& model, const Locator& where, const std::string& prefix);
void check_scenario(scenario::Scenario& scenario, const Locator& where);
// The fields of training as Unsloth does it (training mode, LoRA, tied embeddings, gpt-oss clamp, prefetch budget).
void check_model_training_keys(const scenario::ModelShape& model, const Locator& where, const std::string& prefix);
void check_training(scenario::Scenario& scenario, const Locator& where);

}  // namespace syncscope::scenario::detail
