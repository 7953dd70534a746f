// The fix registry: one FixSpec per fix (packing, offload, MoE routing, logging) holding
// everything the layers need to know about it: its names and aliases, its typed variants and
// baseline, and hooks for the step options, the step program, the LibTorch step, the trace
// detector, the closed-form predictor, the replay edit and the published figures. The scenario
// parser, the run plan, the step program, `predict` and the results loop over fix_registry()
// instead of naming fixes.
//
// Layering: this header and its library (syncscope_fixes, the top-level fixes/ folder) depend
// on core only, so the scenario loader, the step programs (kernels/) and the model can all
// reach it; the layers' types the hooks take are only declared here (scripts/check-layers
// keeps the folders acyclic: fixes/ includes nothing above core).
//
// Each fix lives in a folder of its own, fixes/<name>/, above the layers it plugs into: its
// registry_entry.cpp registers its identity with its hooks filled (register_fix), and
// fixes/shipped/src/shipped.cpp has its one line in register_shipped_fixes(), which the
// executable, the Python module, the library entry points (api/, pipeline/), the benchmarks,
// the fuzz targets and every test that builds a step or predicts call before using the
// registry (an empty registry throws, naming that call). A fix's LibTorch hooks
// (torch_step_point, torch_layer_point, torch_step_setup) are built only with LibTorch
// (fixes/<name>'s syncscope_fix_<name>_torch) and installed by register_shipped_torch_steps()
// (fixes/shipped/src/shipped_torch.cpp), which whoever builds a ReferenceStep calls.
// tests/pipeline/test_fix_registry.cpp registers a toy fix from the test alone and runs it
// through scenario parsing, the run plan, the step program and predict.
//
// Every fix's part of the step options is keyed by its id (StepOptions::fix_variants,
// fix_numbers, fix_words), read and written typed only by its folder; its id, typed variants
// and their names are its folder's too (fixes/<name>/include/syncscope/fixes/<name>/<name>.hpp:
// kFix, Variant, variant_name, to_variant). docs/fix-registry.md lists what of the first
// three fixes is still in the layers.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "syncscope/core/bounds.hpp"

namespace syncscope::scenario {
struct Scenario;      // syncscope/scenario/scenario.hpp
struct FixSelection;  // syncscope/scenario/scenario.hpp
}  // namespace syncscope::scenario
namespace syncscope::program {
struct StepOptions;         // syncscope/program/step_options.hpp
class ProgramLayerBuilder;  // syncscope/program/program_layer.hpp
enum class ProgramPoint : std::uint8_t;
struct ProgramSchedule;
}  // namespace syncscope::program

namespace syncscope::model {
struct PredictionReport;       // syncscope/model/predict.hpp
struct ExplicitPredictInputs;  // syncscope/model/predict_inputs.hpp
struct TracePredictOptions;    // syncscope/model/trace_predict.hpp
namespace detail {
class TraceFacts;  // syncscope/model/trace_predict_facts.hpp (detail: the detectors' shared facts)
}
}  // namespace syncscope::model

namespace syncscope::fixes {

// Which fix: an id each fix folder declares for itself (fixes/<name>/<name>.hpp's kFix; the
// shipped ones take 0.., in the order outputs list them). Ids from kFirstAddedFix on are for
// fixes added outside the shipped set (a test's toy fix): only those can be unregistered, as
// register_shipped_fixes() registers the shipped ones once per process. Code outside a fix's
// folder never names one: it loops over fix_registry().
enum class Fix : std::uint8_t {};
inline constexpr std::uint8_t kFirstAddedFix = 32;

// What the replay engine hands a fix's replay edit (syncscope/replay/replay_edit.hpp): the
// trace, its replay graph, predict --trace's facts, the edit as spelled and what it selected.
struct ReplayEditContext;
// What the LibTorch reference step hands a fix's torch_step_point hook (its options, trainable
// parameters, loss, sync counts, ranges, device, step index and the fix's state across
// steps): opaque here (fixes/ includes no torch), defined in the torch layer's
// syncscope/kernels/torch_step_point.hpp.
struct TorchStepContext;
// What it hands a fix's torch_layer_point hook inside a layer (the packed batch and the
// attention window in, the mask out; the tokens, router choice and expert weights in, the
// experts' output out) and its torch_step_setup hook (the step options and the device to
// resolve from, the layer schedule out): opaque here too, defined in the same header.
struct TorchLayerContext;
struct TorchStepSetup;

// A what-if edit a fix answers to, beside the engine's own (remove-syncs, pin-memory):
// `--what-if EDIT` or `--what-if EDIT:ARG` applies `variant` of this fix to a replayed trace.
struct WhatIfSpelling {
  std::string edit;      // e.g. "logging-every"
  std::string variant;   // the variant it models, one of FixSpec::variants
  std::string argument;  // what :ARG means, for messages ("N, the steps per read"); "": none taken
  // Throws InputError for an :ARG the edit does not take, when the edit is parsed (before any
  // trace is read); empty: any argument is checked when the edit is applied.
  std::function<void(const std::string& text, const std::string& argument)> check_argument;
};

// The inputs a fix's step-option setter sees: the scenario, and the variant under test when
// this fix is the one under test (nullopt: the fix takes its default for runs of other fixes).
struct StepOptionContext {
  const scenario::Scenario& scenario;
  std::optional<std::uint8_t> variant;
};

// An option of `syncscope predict` that a fix declares for its closed form from explicit
// values (cli/cmd_predict.cpp adds one per entry, looping over the registry). What is given is
// kept as text in ExplicitPredictInputs::values under `flag`; predict_explicit checks it
// against `kind` and `range` before any fix runs, and the fix's has_inputs / predict hooks read
// it (ExplicitPredictInputs::interval, integer, number), so a fix not asked for never rejects
// an option it does not use. Flags are unique across fixes (register_fix).
struct PredictOption {
  enum class Kind : std::uint8_t {
    Time,     // "V", "V:LO:HI" or "V+-D" in the unit the help names, parsed by the fix
    Integer,  // an integer within `range`
    Number,   // a number within `range`, in the unit the help names
  };
  std::string flag;  // without its dashes: "per-layer-ms" is --per-layer-ms
  Kind kind = Kind::Time;
  std::string help;               // shown by --help: the fix's name first ("packing: s, ...")
  bounds::Range range{0, 0, ""};  // Integer and Number only
  std::string default_value;      // shown by --help; "": none
  // Integer and Number only, non-empty: `predict --trace` (and Python's predict(), as the flag
  // with '_' for '-') takes it too, checked against `range`, and hands it to this fix's
  // detector and replay edits as TracePredictOptions::fix_numbers[name][trace_key]
  // (offload's --prefetch-depth, MoE's --top-k).
  std::string trace_key;
};

// What a run hands every registered fix before it predicts from its baseline's trace
// (pipeline/src/prediction.cpp, FixSpec::run_prediction_setup), whether its scenario tests the
// fix or not: the scenario, the baseline job's step options, how the run ran, the options the
// fix's detector will read, and the results' environment notes it may add to.
struct RunPredictionContext {
  const scenario::Scenario& scenario;
  const program::StepOptions& options;
  std::string mode;  // "simulated" or "measured"
  model::TracePredictOptions& predict;
  std::map<std::string, std::string>& environment;
  // Measured runs only (empty otherwise): what the measured backend's LibTorch resolves on the
  // device for this fix and the options given (its torch_device_choice hook, across the
  // backend ABI), with why when it is not the first choice; "" when the backend has no LibTorch.
  std::function<std::string(const program::StepOptions&, std::string* why)> device_choice;
};

// A scenario a fix cannot run in, as its check_scenario hook says: the field to name (a
// scenario key path, e.g. "offload"), what it expects and what the scenario has. The scenario
// loader reports it with the field's file:line:column.
struct ScenarioProblem {
  std::string field, expected, got;
};

// A published speedup of this fix (the blog's figures), as printed.
struct PublishedFigure {
  std::string model, variant, training;
  double forward_speedup = 0;  // e.g. 1.433 for "+43.3% forward"; 0: not published
  double step_speedup = 0;     // whole step; 0: not published
  std::string source;
};

// A published figure of this fix beside the run of its scenario in scenarios/published/, as
// `validate --published` and the report print it (model/analytic/src/published_table.cpp loops
// over every fix's list, in registry order). Gains are speedup - 1; "rebuild_ms" is a cost.
struct PublishedScenarioFigure {
  std::string figure;    // "Llama-3.2-1B packing cache, step"
  std::string scenario;  // scenarios/published/*.yaml `name`
  std::string variant;
  std::string what;                      // "step" | "forward" | "backward" | "rebuild_ms"
  double published = 0, lo = 0, hi = 0;  // gain (fraction) or ms; a published range lo..hi, else all equal
  bool independent = true;               // false: a profile value was fitted to this figure (said so)
  std::string assumptions;               // what the comparison rests on, beyond the scenario's header
  std::string source;                    // docs/sources.md anchor
};

struct FixSpec {
  Fix id{};
  std::string name;                   // scenario key (fixes.<name>), results.json "fix"
  std::string option_name;            // in step-option keys and program names ("moe"); "": name
  std::vector<std::string> aliases;   // other spellings `predict --fix` accepts
  std::vector<std::string> variants;  // variant names, baseline first (index = typed enum)
  std::string baseline_meaning;       // what the baseline is, for messages
  // Keys beside `variants` and `tolerance` a scenario may give under fixes.<name>.
  std::vector<std::string> scenario_keys;
  // Those of scenario_keys whose value is a word from a list, the default first (packing's
  // rebuild_form): the scenario parser checks the word and keeps it in FixSelection::words.
  // The fix's other keys are numbers (FixSelection::numbers).
  struct WordKey {
    std::string key;
    std::vector<std::string> values;
  };
  std::vector<WordKey> word_keys;
  // Those of scenario_keys whose value is a number, with their bounds, checked when the scenario
  // is loaded (file:line:column and the range's reason), and their default
  // (FixSelection::number): offload's prefetch_depth and prefetch_budget_gib, logging's
  // logging_steps. A key in neither list is a number the fix checks itself.
  struct NumberKey {
    std::string key;
    bounds::Range range;
    bool integer = false;
    const char* unit = "";  // in the refusal: "GiB"
    double default_value = 0;
  };
  std::vector<NumberKey> number_keys;
  // This fix's settings in the step options beside its variant (StepOptions::fix_numbers /
  // fix_words), declared so the layers check and carry them without naming the fix:
  // program::validate refuses a key not declared here, a number outside its range (or not an
  // integer where `integer`) and a word not in its list. Its folder's accessors read them with
  // their defaults (offload's prefetch_depth and min_bytes, MoE's expert_gemm).
  std::vector<NumberKey> step_number_keys;
  std::vector<WordKey> step_word_keys;
  // Predicted variants: which non-baseline variants the closed-form predictor covers.
  std::vector<std::string> predicted_variants;
  // The report's one-layer timeline strip centres on host copies (reloads) rather than
  // kernels when its run is of this fix.
  bool timeline_shows_copies = false;

  // ---- hooks (empty: this fix has nothing in that layer; each is named by the layer that
  // calls it, and implemented in the fix's folder) ----
  // scenarios/: what selecting this fix implies for a scenario file that does not say
  // (offload: `offload: true`); `given(key)` is whether the file has that top-level key.
  std::function<void(scenario::Scenario&, const std::function<bool(const std::string&)>& given)> imply_scenario;
  // scenarios/: a scenario this fix cannot run in, checked when it loads (offload without
  // `offload: true`, MoE routing on a dense model); nullopt: none.
  std::function<std::optional<ScenarioProblem>(const scenario::Scenario&)> check_scenario;
  // kernels/: set this fix's field of the step options (program and LibTorch step).
  std::function<void(program::StepOptions&, const StepOptionContext&)> set_step_option;
  // kernels/: this fix's variant as the step options hold it ("off" where not applied), for
  // the run plan's job keys.
  std::function<std::string(const program::StepOptions&)> step_option_name;
  // kernels/: this fix's operators at a point of each layer of the step program (packing's
  // metadata before attention, MoE's routing and experts), emitted through the builder.
  std::function<void(program::ProgramLayerBuilder&, program::ProgramPoint)> build_program_layer;
  // kernels/: the step's layer schedule when this fix reorders it (offload's reload
  // choreography); false leaves the plain schedule. The first fix that schedules wins.
  std::function<bool(const program::StepOptions&, program::ProgramSchedule&)> build_program_schedule;
  // kernels/ (torch layer): this fix's LibTorch code at the reference step's points
  // (BeforeOptimizer, AfterOptimizer; ReferenceStep calls it at both, in registry order, as
  // the step program calls build_program_layer), running the operations build_program_layer
  // describes there and counting the host syncs it makes; built only with LibTorch
  // (fixes/logging: src/torch_step.cpp).
  std::function<void(TorchStepContext&, program::ProgramPoint)> torch_step_point;
  // kernels/ (torch layer): this fix's LibTorch code inside each layer's forward and its
  // checkpoint recompute, at BeforeAttention (it sets the attention mask: fixes/packing) and
  // ExpertDispatch (it sets the experts' output: fixes/moe_routing), as build_program_layer
  // emits its operators there; built only with LibTorch.
  std::function<void(TorchLayerContext&, program::ProgramPoint)> torch_layer_point;
  // kernels/ (torch layer): once when a reference step is built: what this fix resolves from
  // the device (offload's budget, MoE's expert GEMM) and the layer schedule when it reorders
  // the layers (offload's reload choreography, as build_program_schedule gives the program's;
  // the first that sets one wins). Built only with LibTorch.
  std::function<void(TorchStepSetup&)> torch_step_setup;
  // kernels/ (torch layer): what this fix resolves on the device for `options` (MoE "device"'s
  // expert GEMM: "grouped" or "padded", and why not grouped), for a run that asks the measured
  // backend (RunPredictionContext::device_choice). Built only with LibTorch.
  std::function<std::string(const program::StepOptions&, std::string* why)> torch_device_choice;
  // pipeline/: what a run tells predict --trace about this fix when it predicts from its
  // baseline's trace: the scenario's selection of this fix and the baseline job's step
  // options (offload's prefetch depth, packing's attention windows in issue order).
  std::function<void(const scenario::FixSelection&, const program::StepOptions&, model::TracePredictOptions&)>
      trace_predict_options;
  // pipeline/: what every run, whether it tests this fix or not, tells predict --trace and the
  // results' environment about it (MoE routing on an MoE model: the device variant's expert
  // GEMM and its padding price).
  std::function<void(RunPredictionContext&)> run_prediction_setup;
  // pipeline/: a note for a run whose scenario does not test this fix but whose step it still
  // shapes (MoE routing on an MoE model: the loop baseline's syncs stay), from the scenario and
  // a job's step options; nullopt: nothing to say.
  std::function<std::optional<std::string>(const scenario::Scenario&, const program::StepOptions&)> untested_note;
  // model/: find this fix in a trace and predict its variants (predict --trace).
  std::function<void(const model::detail::TraceFacts&, model::PredictionReport&)> detect;
  // model/: whether explicit values give this fix's inputs (predict without --fix predicts
  // every fix whose inputs are given).
  std::function<bool(const model::ExplicitPredictInputs&)> has_inputs;
  // model/: the closed-form prediction from explicit values (predict --fix ...).
  std::function<void(const model::ExplicitPredictInputs&, model::PredictionReport&)> predict;
  // cli/ (through model/): the options `predict` takes for this fix's closed form.
  std::vector<PredictOption> predict_options;
  // model/: what `predict --scenario` implies for this fix's options left unset (packing's
  // cached rebuilds from the layers' windows, offload's reload bytes and prefetch depth, MoE's
  // experts and routed layers): sets ExplicitPredictInputs values and notes.
  std::function<void(const scenario::Scenario&, model::ExplicitPredictInputs&)> predict_from_scenario;
  // model/replay/src: apply one of this fix's what-if edits (what_if_edits) to a replayed
  // trace: `predict --trace --what-if`, `diff --what-if`, and predict's default list, where
  // it stands beside this fix's closed form (each fix folder's src/replay_edit.cpp; the
  // engine's own edits are remove-syncs and pin-memory).
  std::vector<WhatIfSpelling> what_if_edits;
  std::function<void(ReplayEditContext&)> replay_edit;
  // reports/: why the count L this fix's closed form multiplies (its fitted "L", counted in
  // the baseline's trace) is not the number of decoder layers run, for the report's note
  // under the fitted parameters (packing: 2 per layer, a rebuild in each layer's forward and
  // again in its checkpoint recompute); nullopt: nothing known beyond the trace's count.
  std::function<std::optional<std::string>(double count, int layers)> layer_count_note;
  // model/: the published speedups of this fix (validate, report).
  std::function<std::vector<PublishedFigure>()> published;
  // model/: its figures beside the runs of scenarios/published/ (validate --published).
  std::vector<PublishedScenarioFigure> published_scenarios;

  const std::string& baseline() const { return variants.front(); }
  // Index of a variant name, nullopt when the fix has no such variant.
  std::optional<std::uint8_t> variant_index(std::string_view name) const;
  const std::string& variant_name(std::uint8_t index) const;  // throws std::out_of_range
};

// Every registered fix, in id order (stable whatever order the folders register in: the order
// outputs list fixes in). Throws syncscope::Error when no fix is registered (nobody called
// register_shipped_fixes()); so do fix_spec, find_fix and mutable_fix_spec.
const std::deque<FixSpec>& fix_registry();
// The entry of `fix`; throws std::out_of_range for a value nobody registered.
const FixSpec& fix_spec(Fix fix);
// The fix named `name` or one of its aliases, nullopt when none.
std::optional<Fix> find_fix(std::string_view name_or_alias);
// Adds a fix (its id must be new) and returns its entry; for fixes defined outside the
// shipped set (tests). Not thread-safe, and an entry inserted before others (by id) moves
// them: register before running.
const FixSpec& register_fix(FixSpec spec);
// Adds hooks to a registered fix (a folder's model half over its step half: each
// register_<name>_fix() over register_<name>_fix_step()), checked as register_fix checks a new
// entry: `add` may fill hooks and declarations, not change the id or the name. The LibTorch
// hooks a folder installs with mutable_fix_spec are kept.
const FixSpec& extend_fix(Fix fix, const std::function<void(FixSpec&)>& add);
// Removes a fix added by register_fix with an id from kFirstAddedFix on; for tests (a toy
// fix). The shipped fixes stay (nothing would register them again).
void unregister_fix(Fix fix);
// An entry to change (a test that swaps a hook).
FixSpec& mutable_fix_spec(Fix fix);

// Parses a variant name of the given fix; InputError naming `what` and the accepted names
// (each folder's to_variant() gives its typed variant through this).
std::uint8_t parse_variant(Fix fix, std::string_view name, std::string_view what);

}  // namespace syncscope::fixes
