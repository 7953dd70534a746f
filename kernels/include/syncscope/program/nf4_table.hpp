// The NF4 codebook: the one definition that the CPU reference (reference.cpp), the LibTorch
// step (torch/model.cpp) and the CUDA dequantization kernels (src/cuda/nf4_dequant.cu, whose
// __constant__ copy is initialized from kNf4Codebook at compile time) all read. C++17 and
// free of other includes, so nvcc compiles it too.
//
// The 16 values are QLoRA's 4-bit NormalFloat (Dettmers et al., "QLoRA: Efficient Finetuning
// of Quantized LLMs", 2023, arXiv:2305.14314, appendix E), the same literal table as
// bitsandbytes' get_4bit_type("nf4") (bitsandbytes-foundation/bitsandbytes,
// bitsandbytes/functional.py). tests/kernels/test_nf4_table.cpp pins them to the paper's
// values and to their construction (normal quantiles, offset 0.9677083).
//
// The other table the NF4 path uses, the signed dynamic map of double quantization
// (bitsandbytes' create_dynamic_map(signed=True)), has one source too:
// kernels::dynamic_map_signed() (reference.hpp) computes it on the host, and the CUDA path
// uploads that (ss_nf4_absmax takes it as `code_map`); no .cu file holds a copy.
#pragma once

namespace syncscope::program {

struct Nf4Codebook {
  float values[16];
};

inline constexpr Nf4Codebook kNf4Codebook = {
    {-1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f, -0.28444138169288635f,
     -0.18477343022823334f, -0.09105003625154495f, 0.0f, 0.07958029955625534f, 0.16093020141124725f,
     0.24611230194568634f, 0.33791524171829224f, 0.44070982933044434f, 0.5626170039176941f, 0.7229568362236023f, 1.0f}};

// The codebook as a plain array (code c decodes to kNf4Values[c] x the block's absmax).
inline constexpr const float (&kNf4Values)[16] = kNf4Codebook.values;

}  // namespace syncscope::program
