// The measured backend's wire formats (backend_wire.hpp). Each struct's fields are listed
// once (visit_*), and the same list writes and reads them, so the two directions cannot
// disagree; tests/pipeline/test_backend_abi.cpp round-trips every field.
#include "syncscope/pipeline/backend_wire.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "syncscope/core/error.hpp"
#include "syncscope/io/trace_io.hpp"

namespace syncscope::pipeline {

namespace {

using json = nlohmann::json;

// Writes each visited field into a JSON object.
struct Writer {
  json& j;
  template <class T>
  void operator()(const char* key, const T& v) {
    j[key] = v;
  }
};

// Reads each visited field from a JSON object: a missing field or one of another type is an
// Error naming it (the other side was built from another tree).
struct Reader {
  const json& j;
  std::string what;
  template <class T>
  void operator()(const char* key, T& v) {
    const auto it = j.find(key);
    if (it == j.end()) throw Error(fmt::format("measured backend wire: {}.{} is missing", what, key));
    try {
      v = it->get<T>();
    } catch (const json::exception& e) {
      throw Error(fmt::format("measured backend wire: {}.{}: {}", what, key, e.what()));
    }
  }
};

template <class F, class M>
void visit_model(F&& f, M& m) {
  f("name", m.name);
  f("num_hidden_layers", m.num_hidden_layers);
  f("hidden_size", m.hidden_size);
  f("num_attention_heads", m.num_attention_heads);
  f("num_key_value_heads", m.num_key_value_heads);
  f("head_dim", m.head_dim);
  f("intermediate_size", m.intermediate_size);
  f("vocab_size", m.vocab_size);
  f("num_local_experts", m.num_local_experts);
  f("num_experts_per_tok", m.num_experts_per_tok);
  f("rms_norm_eps", m.rms_norm_eps);
  f("rope_theta", m.rope_theta);
  f("sliding_window", m.sliding_window);
  f("tie_word_embeddings", m.tie_word_embeddings);
  f("model_type", m.model_type);
  f("swiglu_limit", m.swiglu_limit);
}

template <class F, class B>
void visit_batch(F&& f, B& b) {
  f("packed_tokens", b.packed_tokens);
  f("distribution", b.distribution);
  f("min_len", b.min_len);
  f("max_len", b.max_len);
  f("lengths", b.lengths);
  f("seed", b.seed);
}

template <class F, class T>
void visit_training(F&& f, T& t) {
  f("mode", t.mode);
  f("lora_rank", t.lora_rank);
  f("lora_alpha", t.lora_alpha);
  f("target_modules", t.target_modules);
  f("double_quant", t.double_quant);
}

// Every StepOptions field but the nested structs and the typed variants (written by name).
template <class F, class O>
void visit_options(F&& f, O& o) {
  f("dtype", o.dtype);
  f("device", o.device);
  f("layers", o.layers);
  f("seed", o.seed);
  f("nvtx", o.nvtx);
  f("learning_rate", o.learning_rate);
  f("weight_decay", o.weight_decay);
  f("first_step", o.first_step);
  f("gpt_oss_unsloth_form", o.gpt_oss_unsloth_form);
}

template <class F, class M>
void visit_measurements(F&& f, M& m) {
  f("gpu_name", m.gpu_name);
  f("driver_version", m.driver_version);
  f("cuda_driver_api", m.cuda_driver_api);
  f("cuda_runtime", m.cuda_runtime);
  f("compute_major", m.compute_major);
  f("compute_minor", m.compute_minor);
  f("sm_count", m.sm_count);
  f("memory_bytes", m.memory_bytes);
  f("unified_memory", m.unified_memory);
  f("sync_round_trip_ns", m.sync_round_trip_ns);
  f("launch_overhead_ns", m.launch_overhead_ns);
  f("launch_latency_ns", m.launch_latency_ns);
  f("h2d_pinned_bytes_per_s", m.h2d_pinned_bytes_per_s);
  f("d2h_pinned_bytes_per_s", m.d2h_pinned_bytes_per_s);
  f("h2d_pageable_bytes_per_s", m.h2d_pageable_bytes_per_s);
  f("d2h_pageable_bytes_per_s", m.d2h_pageable_bytes_per_s);
  f("dram_bytes_per_s", m.dram_bytes_per_s);
  f("bf16_flops_per_s", m.bf16_flops_per_s);
  f("fp32_flops_per_s", m.fp32_flops_per_s);
  f("copy_compute_slowdown", m.copy_compute_slowdown);
  f("method", m.method);
  f("wall_seconds", m.wall_seconds);
}

json options_json(const program::StepOptions& o) {
  json j = json::object();
  visit_options(Writer{j}, o);
  json model = json::object(), batch = json::object(), training = json::object();
  visit_model(Writer{model}, o.model);
  visit_batch(Writer{batch}, o.batch);
  visit_training(Writer{training}, o.training);
  j["model"] = model;
  j["batch"] = batch;
  j["training"] = training;
  // The fixes' parts by fix id, as they are: {"<id>": variant}, {"<id>": {"<key>": value}}
  // (doubles are exact in JSON's text) and {"<id>": {"<key>": "word"}}. Both sides check them
  // (program::validate) against the same registry.
  json variants = json::object(), numbers = json::object(), words = json::object();
  for (const auto& [fix, v] : o.fix_variants) variants[std::to_string(static_cast<int>(fix))] = v;
  for (const auto& [fix, values] : o.fix_numbers) numbers[std::to_string(static_cast<int>(fix))] = values;
  for (const auto& [fix, values] : o.fix_words) words[std::to_string(static_cast<int>(fix))] = values;
  j["fix_variants"] = variants;
  j["fix_numbers"] = numbers;
  j["fix_words"] = words;
  return j;
}

// A fix id as the wire spells it (a decimal key), or Error.
fixes::Fix fix_id(const std::string& id, const std::string& what) {
  if (id.empty() || id.size() > 3 || id.find_first_not_of("0123456789") != std::string::npos || std::stoi(id) > 255)
    throw Error(fmt::format("measured backend wire: {}: \"{}\" is not a fix id", what, id));
  return static_cast<fixes::Fix>(std::stoi(id));
}

const json& member(const json& j, const char* key, const std::string& what) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_object())
    throw Error(fmt::format("measured backend wire: {}.{} is missing or not an object", what, key));
  return *it;
}

program::StepOptions options_from_json(const json& j, const std::string& what) {
  program::StepOptions o;
  visit_options(Reader{j, what}, o);
  visit_model(Reader{member(j, "model", what), what + ".model"}, o.model);
  visit_batch(Reader{member(j, "batch", what), what + ".batch"}, o.batch);
  visit_training(Reader{member(j, "training", what), what + ".training"}, o.training);
  for (const auto& [id, v] : member(j, "fix_variants", what).items()) {
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() > 255)
      throw Error(fmt::format("measured backend wire: {}.fix_variants.{} is not a variant index", what, id));
    o.fix_variants[fix_id(id, what)] = v.get<std::uint8_t>();
  }
  for (const auto& [id, values] : member(j, "fix_numbers", what).items()) {
    const std::string where = what + ".fix_numbers." + id;
    if (!values.is_object()) throw Error(fmt::format("measured backend wire: {} is not an object", where));
    auto& into = o.fix_numbers[fix_id(id, what)];
    for (const auto& [key, v] : values.items()) {
      if (!v.is_number()) throw Error(fmt::format("measured backend wire: {}.{} is not a number", where, key));
      into[key] = v.get<double>();
    }
  }
  for (const auto& [id, values] : member(j, "fix_words", what).items()) {
    const std::string where = what + ".fix_words." + id;
    if (!values.is_object()) throw Error(fmt::format("measured backend wire: {} is not an object", where));
    auto& into = o.fix_words[fix_id(id, what)];
    for (const auto& [key, v] : values.items()) {
      if (!v.is_string()) throw Error(fmt::format("measured backend wire: {}.{} is not a string", where, key));
      into[key] = v.get<std::string>();
    }
  }
  return o;
}

json parse(std::string_view bytes, const char* what) {
  json j = json::parse(bytes.begin(), bytes.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    throw Error(fmt::format("measured backend wire: the {} is not a JSON object", what));
  int wire = 0;
  Reader{j, what}("wire", wire);
  if (wire != kBackendWireVersion)
    throw Error(fmt::format("measured backend wire: the {} is of wire version {}, this side reads {}", what, wire,
                            kBackendWireVersion));
  return j;
}

std::string dump(json j) {
  j["wire"] = kBackendWireVersion;
  return j.dump();
}

}  // namespace

std::string to_wire(const program::StepOptions& options) { return dump(options_json(options)); }

std::string to_wire(const MeasureRequest& r) {
  json j = json::object();
  j["options"] = options_json(r.options);
  j["warmup_steps"] = r.warmup_steps;
  j["repeat_steps"] = r.repeat_steps;
  j["trace_name"] = r.trace_name;
  return dump(j);
}

std::string to_wire(const RuntimeVersions& v) {
  return dump({{"driver", v.driver}, {"cuda_runtime", v.cuda_runtime}, {"libtorch", v.libtorch}});
}

std::string to_wire(const model::CalibrationOptions& o) { return dump({{"device", o.device}, {"quick", o.quick}}); }

std::string to_wire(const model::CalibrationMeasurements& m) {
  json j = json::object();
  visit_measurements(Writer{j}, m);
  return dump(j);
}

std::string trace_to_wire(const Trace& trace) { return chrome_json_string(trace); }

program::StepOptions step_options_from_wire(std::string_view bytes) {
  return options_from_json(parse(bytes, "step options"), "step options");
}

MeasureRequest measure_request_from_wire(std::string_view bytes) {
  const json j = parse(bytes, "measure request");
  MeasureRequest r;
  r.options = options_from_json(member(j, "options", "measure request"), "measure request.options");
  Reader rd{j, "measure request"};
  rd("warmup_steps", r.warmup_steps);
  rd("repeat_steps", r.repeat_steps);
  rd("trace_name", r.trace_name);
  return r;
}

RuntimeVersions runtime_versions_from_wire(std::string_view bytes) {
  const json j = parse(bytes, "runtime versions");
  RuntimeVersions v;
  Reader rd{j, "runtime versions"};
  rd("driver", v.driver);
  rd("cuda_runtime", v.cuda_runtime);
  rd("libtorch", v.libtorch);
  return v;
}

model::CalibrationOptions calibration_options_from_wire(std::string_view bytes) {
  const json j = parse(bytes, "calibration options");
  model::CalibrationOptions o;
  Reader rd{j, "calibration options"};
  rd("device", o.device);
  rd("quick", o.quick);
  return o;
}

model::CalibrationMeasurements calibration_measurements_from_wire(std::string_view bytes) {
  const json j = parse(bytes, "calibration measurements");
  model::CalibrationMeasurements m;
  visit_measurements(Reader{j, "calibration measurements"}, m);
  return m;
}

Trace trace_from_wire(std::string_view bytes) { return parse_chrome_json(bytes, "<measured backend trace>"); }

}  // namespace syncscope::pipeline
