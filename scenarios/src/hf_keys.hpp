// What hf_config.cpp reads beyond the dense decoder's shape (hf_architecture.cpp): the MoE
// layout with shared experts and dense layers, multi-head latent attention, chunked
// attention, a multimodal config's text defaults and its vision tower.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "checks.hpp"
#include "syncscope/scenario/model_traits.hpp"
#include "syncscope/scenario/scenario.hpp"

namespace syncscope::scenario::detail {

// One config object's keys, read strictly: a key of the wrong type is an InputError naming
// the file, line and column (where()).
struct HfKeys {
  const nlohmann::json& j;
  std::string file;
  Locator where;
  bool has(const char* key) const { return j.contains(key) && !j[key].is_null(); }
  bool given(const char* key) const { return j.contains(key); }  // present, even as null
  std::optional<int> integer(const char* key) const;             // nullopt: absent or null
  std::optional<bool> boolean(const char* key) const;
  std::optional<std::vector<int>> int_list(const char* key) const;
};

// A multimodal config's text_config states only what differs from its text class: the
// class's defaults are filled in for the shape keys it leaves out (Gemma3TextConfig's),
// and each filled key is named in the returned notes.
std::vector<std::string> apply_text_defaults(nlohmann::json& text, const std::string& family);

// The routed experts of a family whose config class defines them by default (DeepSeek V2/V3:
// n_routed_experts 64 / 256, num_experts_per_tok V3 8): sets m.num_local_experts (already read
// from num_local_experts / num_experts / n_routed_experts) and m.num_experts_per_tok, and
// returns the keys read as the class's defaults ("n_routed_experts 64"). A DeepSeek-V2 MoE
// config without num_experts_per_tok (its class's default is None) is an InputError naming the
// file, the key and the fix.
std::vector<std::string> read_routed_experts(const HfKeys& keys, ModelShape& m, const std::string& family);

// A known family's warning naming each key read as its config class's default, and the class
// ("" when none was, or for an unknown model_type: `family` "").
std::string class_defaults_warning(const std::vector<std::string>& keys, const std::string& family);

// The architecture beyond the dense shape: routed and shared experts, dense layers of an
// MoE model, MLA's ranks, Llama 4's chunked attention. Sets the shape's fields and the
// layout inputs of `in`; a contradiction (shared experts without a size,
// first_k_dense_replace >= num_hidden_layers, an MLA rank above hidden_size) is an
// InputError naming the file, key and constraint. `family` is the resolved family name.
void read_architecture(const HfKeys& keys, ModelShape& m, TraitInputs& in, const std::string& family);

// A config whose layers are not all softmax attention (state-space / Mamba mixers, hybrid
// layouts, linear attention, recurrent blocks): an InputError naming the file, the position
// of the first such key, every such key, the model_type and what syncscope cannot model.
// Checked before the shape keys, so a pure state-space config is refused for what it is,
// not for a missing num_attention_heads.
void refuse_unmodellable(const nlohmann::json& j, const std::string& file, const std::string& model_type,
                         const Locator& where);

// A multimodal config's vision tower (vision_config): named, left out of the step, and its
// parameter count with its projector when its form is known (SigLIP, as Gemma 3 uses).
void read_vision_tower(const nlohmann::json& outer, const std::string& outer_type, ModelShape& m);

}  // namespace syncscope::scenario::detail
