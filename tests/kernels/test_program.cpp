// The step programs: offload plan and choreography, sync counts per variant, ranges, and the
// schedule checker over the real schedules (and deliberately broken ones).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "syncscope/core/error.hpp"
#include "syncscope/fixes/moe_routing/options.hpp"
#include "syncscope/fixes/offload/options.hpp"
#include "syncscope/fixes/offload/plan.hpp"
#include "syncscope/fixes/packing/options.hpp"
#include "syncscope/program/layer_schedule.hpp"
#include "syncscope/program/step_program.hpp"
#include "tiny_shapes.hpp"

namespace syncscope::kernels {
namespace {

using program::OpKind;
using program::Program;
using test::tiny_dense;
using test::tiny_moe;
using test::tiny_options;

TEST(PlanOffload, SingleAndDoubleKeepTheLastLayerAsUnslothDoes) {
  // unsloth_zoo gradient_checkpointing.py: the first pass offloads every layer (and counts
  // them); from the second step the last layer's input stays on the device.
  const fixes::offload::OffloadPlan s =
      fixes::offload::plan_offload(fixes::offload::Variant::Single, 8, 100, 1e12, 2, false, 0);
  EXPECT_EQ(s.first_resident, 7);
  EXPECT_TRUE(s.is_offloaded(6));
  EXPECT_FALSE(s.is_offloaded(7));
  EXPECT_EQ(s.ring_buffers, 1);
  EXPECT_EQ(s.depth, 0);
  const fixes::offload::OffloadPlan d =
      fixes::offload::plan_offload(fixes::offload::Variant::Double, 8, 100, 1e12, 2, false, 0);
  EXPECT_EQ(d.first_resident, 7);
  EXPECT_EQ(d.ring_buffers, 2);
  EXPECT_EQ(fixes::offload::plan_offload(fixes::offload::Variant::Double, 8, 100, 0, 2, /*first_pass=*/true, 0)
                .first_resident,
            8);
  EXPECT_EQ(fixes::offload::plan_offload(fixes::offload::Variant::Double, 2, 100, 0, 2, false, 0).ring_buffers, 1);
  // One layer: nothing left to offload once the last is kept.
  EXPECT_EQ(fixes::offload::plan_offload(fixes::offload::Variant::Double, 1, 100, 0, 2, false, 0).ring_buffers, 0);
  EXPECT_EQ(fixes::offload::plan_offload(fixes::offload::Variant::Double, 1, 100, 0, 2, false, 0).first_resident, 0);
}

TEST(PlanOffload, SmallLayerInputsStayOnTheDevice) {
  // MINIMUM_SIZE = 2 MiB / element size, compared with the element count: an input of
  // exactly 2 MiB stays, one byte more is offloaded (default threshold).
  const double mib2 = 2.0 * 1024 * 1024;
  EXPECT_EQ(fixes::offload::plan_offload(fixes::offload::Variant::Single, 8, mib2, 0, 2).first_resident, 0);
  EXPECT_EQ(fixes::offload::plan_offload(fixes::offload::Variant::Single, 8, mib2, 0, 2).ring_buffers, 0);
  EXPECT_EQ(fixes::offload::plan_offload(fixes::offload::Variant::Double, 8, mib2 + 2, 0, 2).first_resident, 7);
  // Qwen3-0.6B at T = 2048 in bf16: 2048 * 1024 * 2 = 4 MiB, offloaded.
  EXPECT_EQ(fixes::offload::plan_offload(fixes::offload::Variant::Double, 28, 2048.0 * 1024 * 2, 0, 2).first_resident,
            27);
}

TEST(PlanOffload, PrefetchKeepsLastLayersResidentWithinBudget) {
  // L = 8 layers of a = 100 bytes, k = 2: the ring takes 3a; the rest holds resident layers.
  EXPECT_EQ(fixes::offload::plan_offload(fixes::offload::Variant::Prefetch, 8, 100, 800, 2).first_resident,
            0);  // 8a fits: no offload
  EXPECT_EQ(fixes::offload::plan_offload(fixes::offload::Variant::Prefetch, 8, 100, 800, 2).ring_buffers, 0);
  const fixes::offload::OffloadPlan p = fixes::offload::plan_offload(fixes::offload::Variant::Prefetch, 8, 100, 550,
                                                                     2);  // (550 - 300) / 100 -> 2 resident
  EXPECT_EQ(p.first_resident, 6);
  EXPECT_EQ(p.ring_buffers, 3);
  EXPECT_EQ(p.depth, 2);
  EXPECT_FALSE(p.is_offloaded(6));
  EXPECT_TRUE(p.is_offloaded(5));
  EXPECT_EQ(fixes::offload::plan_offload(fixes::offload::Variant::Prefetch, 8, 100, 750, 2).first_resident,
            4);  // (750 - 300) / 100 -> 4
  EXPECT_EQ(fixes::offload::plan_offload(fixes::offload::Variant::Prefetch, 8, 100, 0, 2).first_resident, 8);
  EXPECT_EQ(fixes::offload::plan_offload(fixes::offload::Variant::Prefetch, 8, 100, -5, 2).first_resident,
            8);  // negative budget: none
  // k larger than the offloaded layers is clamped to them.
  const fixes::offload::OffloadPlan c = fixes::offload::plan_offload(fixes::offload::Variant::Prefetch, 3, 100, 0, 10);
  EXPECT_EQ(c.depth, 3);
  EXPECT_EQ(c.ring_buffers, 4);
  // Deterministic: same inputs, same plan.
  const fixes::offload::OffloadPlan again =
      fixes::offload::plan_offload(fixes::offload::Variant::Prefetch, 8, 100, 550, 2);
  EXPECT_EQ(again.first_resident, p.first_resident);
  EXPECT_EQ(again.ring_buffers, p.ring_buffers);
}

TEST(PlanOffload, RejectsBadInput) {
  EXPECT_THROW(fixes::offload::plan_offload(static_cast<fixes::offload::Variant>(7), 8, 100, 0, 2), InputError);
  EXPECT_THROW(fixes::offload::plan_offload(fixes::offload::Variant::Single, 0, 100, 0, 2), InputError);
  EXPECT_THROW(fixes::offload::plan_offload(fixes::offload::Variant::Single, 4, 0, 0, 2), InputError);
  EXPECT_THROW(fixes::offload::plan_offload(fixes::offload::Variant::Prefetch, 4, 100, 0, 0), InputError);
}

// Every layer runs forward in order and backward in reverse; every offloaded layer is
// reloaded exactly once, into the buffer its backward reads, and the main stream waits for
// that buffer's load before.
void check_choreography(const program::Choreography& c) {
  const program::LayerPlan& p = c.plan;
  std::vector<int> fwd, bwd;
  std::map<int, int> reloads;        // layer -> count
  std::map<int, int> loaded_buffer;  // buffer -> layer whose reload was recorded last
  std::map<int, bool> main_waited;   // buffer -> main waited since its last load
  for (const program::ChoreoStep& s : c.steps) {
    switch (s.kind) {
      case program::ChoreoKind::ForwardLayer: fwd.push_back(s.layer); break;
      case program::ChoreoKind::ReloadCopy:
        ++reloads[s.layer];
        loaded_buffer[s.buffer] = s.layer;
        main_waited[s.buffer] = false;
        break;
      case program::ChoreoKind::MainWaits:
        if (s.buffer >= 0) main_waited[s.buffer] = true;
        break;
      case program::ChoreoKind::BackwardLayer:
        bwd.push_back(s.layer);
        if (p.is_offloaded(s.layer)) {
          ASSERT_GE(s.buffer, 0);
          EXPECT_EQ(loaded_buffer[s.buffer], s.layer) << "layer " << s.layer;
          EXPECT_TRUE(main_waited[s.buffer]) << "layer " << s.layer;
        } else {
          EXPECT_EQ(s.buffer, -1);
        }
        break;
      default: break;
    }
  }
  ASSERT_EQ(static_cast<int>(fwd.size()), p.layers);
  ASSERT_EQ(static_cast<int>(bwd.size()), p.layers);
  for (int l = 0; l < p.layers; ++l) {
    EXPECT_EQ(fwd[static_cast<std::size_t>(l)], l);
    EXPECT_EQ(bwd[static_cast<std::size_t>(l)], p.layers - 1 - l);
    EXPECT_EQ(reloads[l], p.is_offloaded(l) ? 1 : 0) << "layer " << l;
  }
}

TEST(Choreography, EveryVariantReloadsEachOffloadedLayerOnce) {
  for (const std::string& v : scenario::fix_variants(fixes::offload::kFix))
    for (int L : {1, 2, 5})
      for (int k : {1, 2, 3})
        for (double budget : {0.0, 300.0, 1e9}) {
          SCOPED_TRACE(testing::Message() << v << " L=" << L << " k=" << k << " budget=" << budget);
          check_choreography(fixes::offload::build_choreography(
              fixes::offload::plan_offload(fixes::offload::to_variant(v), L, 100, budget, k, false, 0)));
          check_choreography(fixes::offload::build_choreography(
              fixes::offload::plan_offload(fixes::offload::to_variant(v), L, 100, budget, k, true, 0)));
        }
}

TEST(Choreography, PrefetchIssuesTheFirstReloadsBeforeTheHead) {
  const program::Choreography c = fixes::offload::build_choreography(
      fixes::offload::plan_offload(fixes::offload::Variant::Prefetch, 6, 100, 0, 3, false, 0));
  int before_head = 0;
  for (const program::ChoreoStep& s : c.steps) {
    if (s.kind == program::ChoreoKind::Head) break;
    if (s.kind == program::ChoreoKind::ReloadCopy) ++before_head;
  }
  EXPECT_EQ(before_head, 3);
  const program::Choreography d = fixes::offload::build_choreography(
      fixes::offload::plan_offload(fixes::offload::Variant::Double, 6, 100, 0, 3, false, 0));
  for (const program::ChoreoStep& s : d.steps) {
    if (s.kind == program::ChoreoKind::Head) break;
    EXPECT_NE(s.kind, program::ChoreoKind::ReloadCopy);  // Unsloth's: no explicit prefetch
  }
}

int count(const Program& p, OpKind kind, const std::string& name = "") {
  return static_cast<int>(std::count_if(p.ops.begin(), p.ops.end(), [&](const program::Op& op) {
    return op.kind == kind && (name.empty() || op.name == name);
  }));
}

TEST(StepProgram, HostSyncsPerPackingVariant) {
  // Unsloth's baseline reads back 3 values per attention layer (lengths.max().item(),
  // seq_lengths.sum().item(), seq_lengths.tolist()); the cache reads them once per batch;
  // ours never. Every variant reads the loss once at the end.
  const int L = 3;
  program::StepOptions o = tiny_options();
  fixes::packing::set_variant(o, fixes::packing::Variant::Rebuild);
  EXPECT_EQ(program::program_stats(program::build_step_program(o)).host_syncs, 3 * L + 1);
  fixes::packing::set_variant(o, fixes::packing::Variant::Cached);
  EXPECT_EQ(program::program_stats(program::build_step_program(o)).host_syncs, 3 + 1);
  fixes::packing::set_variant(o, fixes::packing::Variant::Device);
  EXPECT_EQ(program::program_stats(program::build_step_program(o)).host_syncs, 1);
  // With checkpointing the baseline rebuilds again in every recompute; the cache does not.
  fixes::offload::set_variant(o, fixes::offload::Variant::Double);
  fixes::packing::set_variant(o, fixes::packing::Variant::Rebuild);
  EXPECT_EQ(program::program_stats(program::build_step_program(o)).host_syncs, 2 * 3 * L + 1);
  fixes::packing::set_variant(o, fixes::packing::Variant::Cached);
  EXPECT_EQ(program::program_stats(program::build_step_program(o)).host_syncs, 3 + 1);
}

TEST(StepProgram, HostSyncsPerMoeVariantWithSlidingWindow) {
  // tiny_moe: L = 2 (layer 0 sliding, layer 1 full), E = 4. Packing "device": 0 syncs, so
  // the MoE counts stand alone: loop E per layer, sorted 3 per layer (bincount's min and max
  // reads plus the tolist), device none.
  program::StepOptions o = tiny_options(tiny_moe());
  fixes::packing::set_variant(o, fixes::packing::Variant::Device);
  const int L = 2, E = 4;
  fixes::moe_routing::set_variant(o, fixes::moe_routing::Variant::Loop);
  EXPECT_EQ(program::program_stats(program::build_step_program(o)).host_syncs, E * L + 1);
  fixes::moe_routing::set_variant(o, fixes::moe_routing::Variant::Sorted);
  EXPECT_EQ(program::program_stats(program::build_step_program(o)).host_syncs, 3 * L + 1);
  fixes::moe_routing::set_variant(o, fixes::moe_routing::Variant::Device);
  EXPECT_EQ(program::program_stats(program::build_step_program(o)).host_syncs, 1);
  // Two windows: the cache holds one mask per window, so 1 metadata read + 2 per mask.
  fixes::packing::set_variant(o, fixes::packing::Variant::Cached);
  EXPECT_EQ(program::program_stats(program::build_step_program(o)).host_syncs, 1 + 2 * 2 + 1);
  // Ours builds one mask per window with our kernel.
  fixes::packing::set_variant(o, fixes::packing::Variant::Device);
  EXPECT_EQ(count(program::build_step_program(o), OpKind::Kernel, "syncscope::packed_mask_kernel"), 2);
}

TEST(StepProgram, GemmFlopsFollowTheShape) {
  program::StepOptions o = tiny_options(test::tiny_qwen3());
  const Program p = program::build_step_program(o);
  const double T = 96, H = 64, q = 4 * 24, kv = 2 * 24, I = 128;
  std::map<std::string, double> flops;
  for (const auto& op : p.ops)
    if (op.kind == OpKind::Kernel) flops[op.name] += op.flops;
  const int L = 3;
  EXPECT_DOUBLE_EQ(flops["q_proj"], L * 2 * T * q * H);
  EXPECT_DOUBLE_EQ(flops["k_proj"], L * 2 * T * kv * H);
  EXPECT_DOUBLE_EQ(flops["gate_proj"], L * 2 * T * I * H);
  EXPECT_DOUBLE_EQ(flops["q_proj.backward_dgrad"], flops["q_proj"]);
  EXPECT_DOUBLE_EQ(flops["lm_head"], 2 * T * 256 * H);
  // Qwen3's q/k norms are there; Llama's are not.
  EXPECT_GT(count(p, OpKind::Kernel, "q_norm.pow"), 0);
  EXPECT_EQ(count(program::build_step_program(tiny_options()), OpKind::Kernel, "q_norm.pow"), 0);
}

// Forward expert gate-projection FLOPs of the program built from `o`.
double forward_gate_flops(const program::StepOptions& o) {
  double f = 0;
  for (const auto& op : program::build_step_program(o).ops)
    if (op.kind == OpKind::Kernel && op.name.find(".gate") != std::string::npos &&
        op.name.find("backward") == std::string::npos)
      f += op.flops;
  return f;
}

TEST(StepProgram, MoeDevicePaddedPaysCapacityPadding) {
  // C = T rows per expert: E*T instead of T*k rows, E/k times the expert GEMM flops.
  program::StepOptions o = tiny_options(tiny_moe());
  fixes::moe_routing::set_variant(o, fixes::moe_routing::Variant::Sorted);
  const double sorted = forward_gate_flops(o);
  fixes::moe_routing::set_variant(o, fixes::moe_routing::Variant::Device);
  fixes::moe_routing::set_expert_gemm(o, "padded");
  double device = 0;
  for (const auto& op : program::build_step_program(o).ops)
    if (op.kind == OpKind::Kernel && op.name == "experts.bmm_gate") device += op.flops;
  ASSERT_GT(sorted, 0);
  EXPECT_DOUBLE_EQ(device / sorted, 4.0 / 2.0);
}

TEST(StepProgram, MoeDeviceGroupedHasTheBaselinesExpertFlopsAndNoPadding) {
  // "auto" (the default) models at::_grouped_mm over the T*k sorted rows.
  program::StepOptions o = tiny_options(tiny_moe());
  fixes::moe_routing::set_variant(o, fixes::moe_routing::Variant::Sorted);
  const double sorted = forward_gate_flops(o);
  fixes::moe_routing::set_variant(o, fixes::moe_routing::Variant::Device);
  ASSERT_EQ(fixes::moe_routing::expert_gemm(o), "auto");
  const double grouped = forward_gate_flops(o);
  ASSERT_GT(sorted, 0);
  EXPECT_DOUBLE_EQ(grouped, sorted);
  bool pad = false, grouped_op = false;
  for (const auto& op : program::build_step_program(o).ops) {
    pad |= op.name.find("xpad") != std::string::npos;
    grouped_op |= op.name == "experts.grouped_mm.gate";
  }
  EXPECT_FALSE(pad);
  EXPECT_TRUE(grouped_op);
  fixes::moe_routing::set_expert_gemm(o, "sideways");
  EXPECT_THROW(validate(o), InputError);
}

// A fix's settings in the step options are checked against what its registry entry declares
// (step_number_keys / step_word_keys), each refusal naming the fix, the key and what it takes.
TEST(StepOptions, FixSettingsAreCheckedAgainstTheirDeclarations) {
  auto refusal = [](const program::StepOptions& o) {
    try {
      validate(o);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  const program::StepOptions base = tiny_options(tiny_moe());
  EXPECT_EQ(refusal(base), "(accepted)");
  program::StepOptions o = base;
  fixes::moe_routing::set_expert_gemm(o, "sideways");
  EXPECT_NE(refusal(o).find(
                "fix_words[moe_routing].expert_gemm: expected one of auto, grouped, padded, got \"sideways\""),
            std::string::npos)
      << refusal(o);
  o = base;
  fixes::offload::set_prefetch_depth(o, 0);
  EXPECT_NE(refusal(o).find("fix_numbers[offload].prefetch_depth: expected an integer in 1..1024"), std::string::npos)
      << refusal(o);
  o = base;
  o.fix_numbers[fixes::offload::kFix]["prefetch_depth"] = 2.5;  // an integer key
  EXPECT_NE(refusal(o).find("fix_numbers[offload].prefetch_depth"), std::string::npos) << refusal(o);
  o = base;
  fixes::offload::set_min_bytes(o, -1);
  EXPECT_NE(refusal(o).find("fix_numbers[offload].min_bytes"), std::string::npos) << refusal(o);
  o = base;
  o.fix_numbers[fixes::offload::kFix]["prefetch_dpeth"] = 2;  // a key the fix does not declare
  EXPECT_NE(refusal(o).find("fix_numbers[offload].prefetch_dpeth: expected one of the fix's numbers: prefetch_depth, "
                            "budget_bytes, min_bytes"),
            std::string::npos)
      << refusal(o);
  o = base;
  o.fix_words[fixes::packing::kFix]["rebuild_from"] = "reference";
  EXPECT_NE(refusal(o).find("fix_words[packing].rebuild_from: expected a word the fix declares"), std::string::npos)
      << refusal(o);
  o = base;
  o.fix_variants[static_cast<fixes::Fix>(200)] = 0;  // nobody registered it
  EXPECT_NE(refusal(o).find("fix_variants: expected a registered fix, got fix id 200"), std::string::npos)
      << refusal(o);
  o = base;
  fixes::packing::set_variant(o, static_cast<fixes::packing::Variant>(9));
  EXPECT_NE(refusal(o).find("fix_variants[packing]: expected one of rebuild, cached, device, got 9"), std::string::npos)
      << refusal(o);
  // What the accessors give when the options do not say: each fix's documented default.
  EXPECT_EQ(fixes::packing::variant(base), fixes::packing::Variant::Rebuild);
  EXPECT_EQ(fixes::packing::rebuild_form(base), "reference");
  EXPECT_EQ(fixes::moe_routing::variant(base), fixes::moe_routing::Variant::Loop);
  const program::StepOptions plain;  // tiny_options sets offload's sizes for tiny shapes
  EXPECT_EQ(fixes::offload::prefetch_depth(plain), 2);
  EXPECT_EQ(fixes::offload::min_bytes(plain), fixes::offload::kUnslothMinOffloadBytes);
  EXPECT_LT(fixes::offload::budget_bytes(plain), 0);  // left to the device
  EXPECT_FALSE(fixes::offload::variant(plain));
  program::StepOptions asked = base;
  fixes::offload::set_budget_bytes(asked, 5e9);
  fixes::offload::set_budget_bytes(asked, -1);  // back to the device's choice
  EXPECT_LT(fixes::offload::budget_bytes(asked), 0);
}

TEST(StepProgram, RangesAreBalancedAndNamed) {
  program::StepOptions o = tiny_options(tiny_moe());
  fixes::offload::set_variant(o, fixes::offload::Variant::Prefetch);
  const Program p = program::build_step_program(o);
  int depth = 0;
  std::map<std::string, int> pushes;
  for (const auto& op : p.ops) {
    if (op.kind == OpKind::RangePush) {
      ++depth;
      ++pushes[op.name];
    } else if (op.kind == OpKind::RangePop) {
      ASSERT_GT(depth, 0);
      --depth;
    }
  }
  EXPECT_EQ(depth, 0);
  for (const char* r : {"step", "forward", "backward", "optimizer"}) EXPECT_EQ(pushes[r], 1) << r;
  EXPECT_EQ(pushes["layer_00"], 2);  // forward and backward
  EXPECT_EQ(pushes["layer_01"], 2);
  EXPECT_EQ(pushes["packing_metadata"], 4);  // 2 forward + 2 recompute
  EXPECT_EQ(pushes["moe_routing"], 4);
  EXPECT_GT(pushes["offload_reload"], 0);
}

TEST(StepProgram, OffloadCopiesUseThePinnedCopyStream) {
  program::StepOptions o = tiny_options();
  fixes::offload::set_variant(o, fixes::offload::Variant::Single);
  const Program p = program::build_step_program(o);
  ASSERT_EQ(p.streams.size(), 2u);
  EXPECT_FALSE(p.streams[0].non_blocking);  // LibTorch's legacy default stream
  EXPECT_TRUE(p.streams[1].non_blocking);
  int d2h = 0, h2d = 0;
  for (const auto& op : p.ops)
    if (op.kind == OpKind::Copy && op.stream == 1) {
      EXPECT_EQ(op.host_memory, MemoryKind::Pinned);
      EXPECT_DOUBLE_EQ(op.bytes, 96.0 * 64 * 4);
      (op.copy == CopyKind::DtoH ? d2h : h2d)++;
    }
  EXPECT_EQ(d2h, 2);  // L = 3: the last layer's input stays on the device
  EXPECT_EQ(h2d, 2);
  EXPECT_EQ(program::build_step_program(tiny_options()).streams.size(), 1u);
}

TEST(StepProgram, EveryVariantIsBufferSafe) {
  for (const auto& model : {tiny_dense(), tiny_moe()})
    for (const char* off : {"", "single", "double", "prefetch"})
      for (int k : {1, 2, 4})
        for (double budget : {0.0, 96.0 * 64 * 4 * 4}) {
          program::StepOptions o = tiny_options(model);
          fixes::offload::set_variant(o, *off ? std::optional(fixes::offload::to_variant(off)) : std::nullopt);
          fixes::offload::set_prefetch_depth(o, k);
          fixes::offload::set_budget_bytes(o, budget);
          fixes::packing::set_variant(o, fixes::packing::Variant::Cached);
          const Program p = program::build_step_program(o);
          const auto v = program::check_buffer_safety(p);
          EXPECT_TRUE(v.empty()) << p.name << " k=" << k << ": " << (v.empty() ? "" : v.front().message);
        }
}

// Removes the first op matching `pred` (a deliberately broken schedule).
template <typename Pred>
Program without(Program p, Pred pred) {
  auto it = std::find_if(p.ops.begin(), p.ops.end(), pred);
  EXPECT_NE(it, p.ops.end());
  if (it != p.ops.end()) p.ops.erase(it);
  return p;
}

int event_named(const Program& p, const std::string& name) {
  for (std::size_t i = 0; i < p.event_names.size(); ++i)
    if (p.event_names[i] == name) return static_cast<int>(i);
  ADD_FAILURE() << "no event " << name;
  return -1;
}

bool has(const std::vector<program::BufferViolation>& v, program::BufferViolation::Kind kind,
         const std::string& buffer_prefix, const Program& p) {
  return std::any_of(v.begin(), v.end(), [&](const program::BufferViolation& x) {
    return x.kind == kind && p.buffer_names[static_cast<std::size_t>(x.buffer)].rfind(buffer_prefix, 0) == 0;
  });
}

TEST(ScheduleChecker, CatchesBrokenOffloadSchedules) {
  using K = program::BufferViolation::Kind;
  program::StepOptions o = tiny_options();
  o.model.num_hidden_layers = 4;  // 3 offloaded layers: the third reload waits for ring 0's reader
  fixes::offload::set_variant(o, fixes::offload::Variant::Double);
  // No host reads: with the baseline's .item() calls in every recompute the host would
  // drain the main stream before each reload, which hides these hazards.
  fixes::packing::set_variant(o, fixes::packing::Variant::Device);
  const Program good = program::build_step_program(o);
  ASSERT_TRUE(program::check_buffer_safety(good).empty());

  // The copy stream no longer waits for ring 0's last reader before reloading into it.
  const int freed0 = event_named(good, "freed ring 0");
  const Program no_free_wait = without(good, [&](const program::Op& op) {
    return op.kind == OpKind::StreamWait && op.stream == 1 && op.event == freed0;
  });
  auto v = program::check_buffer_safety(no_free_wait);
  EXPECT_TRUE(has(v, K::WriteAfterRead, "ring_0", good)) << v.size();
  ASSERT_FALSE(v.empty());
  EXPECT_NE(v.front().message.find("ring_0"), std::string::npos) << v.front().message;

  // The same broken schedule under the baseline packing: its .item() in each recompute
  // drains the main stream before the host issues the next reload, so the hazard hides
  // (the serialization the fixes remove is also what made this bug invisible).
  program::StepOptions with_syncs = o;
  fixes::packing::set_variant(with_syncs, fixes::packing::Variant::Rebuild);
  const Program synced = program::build_step_program(with_syncs);
  const int synced_freed0 = event_named(synced, "freed ring 0");
  EXPECT_TRUE(program::check_buffer_safety(without(synced, [&](const program::Op& op) {
                return op.kind == OpKind::StreamWait && op.stream == 1 && op.event == synced_freed0;
              })).empty());

  // Recompute no longer waits for the reload of ring 1.
  const int loaded1 = event_named(good, "loaded ring 1");
  v = program::check_buffer_safety(without(good, [&](const program::Op& op) {
    return op.kind == OpKind::StreamWait && op.stream == 0 && op.event == loaded1;
  }));
  EXPECT_TRUE(has(v, K::ReadAfterWrite, "ring_1", good));

  // A layer input goes back to the allocator before its D2H offload finished.
  const int off1 = event_named(good, "offloaded layer_01");
  v = program::check_buffer_safety(without(good, [&](const program::Op& op) {
    return op.kind == OpKind::StreamWait && op.stream == 0 && op.event == off1;
  }));
  EXPECT_TRUE(has(v, K::WriteAfterRead, "act_01", good));

  // single: the copy stream no longer waits for the whole main stream.
  fixes::offload::set_variant(o, fixes::offload::Variant::Single);
  const Program single = program::build_step_program(o);
  ASSERT_TRUE(program::check_buffer_safety(single).empty());
  const int main_all = event_named(single, "main stream so far");
  // Drop the second wait (the first reload has nothing to wait for).
  Program broken = single;
  int seen = 0;
  for (auto it = broken.ops.begin(); it != broken.ops.end(); ++it)
    if (it->kind == OpKind::StreamWait && it->event == main_all && ++seen == 2) {
      broken.ops.erase(it);
      break;
    }
  ASSERT_EQ(seen, 2);
  EXPECT_TRUE(has(program::check_buffer_safety(broken), K::WriteAfterRead, "ring_0", single));
}

TEST(StepProgram, RejectsInvalidOptions) {
  program::StepOptions o = tiny_options();
  fixes::packing::set_variant(o, static_cast<fixes::packing::Variant>(9));  // no such variant
  EXPECT_THROW(program::build_step_program(o), InputError);
  o = tiny_options();
  fixes::offload::set_variant(o, static_cast<fixes::offload::Variant>(7));
  EXPECT_THROW(program::build_step_program(o), InputError);
  o = tiny_options();
  o.model.num_key_value_heads = 3;
  EXPECT_THROW(program::build_step_program(o), InputError);
  o = tiny_options();
  o.batch.lengths = {20, 20};
  EXPECT_THROW(program::build_step_program(o), InputError);
  o = tiny_options(tiny_moe());
  o.model.num_experts_per_tok = 5;
  EXPECT_THROW(program::build_step_program(o), InputError);
}

TEST(StepOptions, NextBatchesDifferAndStayReproducible) {
  program::StepOptions o = tiny_options();
  EXPECT_EQ(program::batch_lengths(o, 0), (std::vector<int>{20, 31, 9, 36}));
  EXPECT_EQ(program::batch_lengths(o, 1), (std::vector<int>{31, 9, 36, 20}));
  o.batch.distribution = "uniform";
  o.batch.min_len = 5;
  o.batch.max_len = 40;
  const auto a = program::batch_lengths(o, 1), b = program::batch_lengths(o, 2);
  EXPECT_NE(a, b);
  EXPECT_EQ(a, program::batch_lengths(o, 1));
  for (const auto& l : {a, b}) {
    int sum = 0;
    for (int x : l) sum += x;
    EXPECT_EQ(sum, 96);
  }
}

}  // namespace
}  // namespace syncscope::kernels
