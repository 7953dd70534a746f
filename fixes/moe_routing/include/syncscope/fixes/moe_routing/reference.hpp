// The MoE routing fix's CPU reference: the routing bookkeeping (counts, offsets and the stable
// expert order the sorted and device variants rely on) and the device variant's capacity
// layout, what its CUDA histogram (src/cuda/moe_histogram.cu) and its LibTorch code compute.
// Plain C++, no torch. Throws InputError on inconsistent inputs.
#pragma once

#include <cstdint>
#include <vector>

namespace syncscope::fixes::moe_routing {

struct Routing {
  std::vector<std::int64_t> counts;   // E: tokens routed to each expert (slots counted)
  std::vector<std::int64_t> offsets;  // E+1: exclusive prefix sums of counts
  std::vector<std::int64_t> order;    // T*k: flat (token*k + slot) indices, stably sorted by expert
};

// `expert_ids` is the flat [T*k] top-k expert index array (row-major over tokens);
// each id must lie in [0, num_experts).
Routing route(const std::vector<std::int64_t>& expert_ids, int num_experts);

// Destination row of each flat entry in the device variant's capacity-padded layout
// [E, capacity, H]: expert * capacity + rank of the entry among its expert's entries in
// flat order. capacity must be >= the largest count (capacity = T always is).
std::vector<std::int64_t> capacity_rows(const std::vector<std::int64_t>& expert_ids, int num_experts,
                                        std::int64_t capacity);

}  // namespace syncscope::fixes::moe_routing
