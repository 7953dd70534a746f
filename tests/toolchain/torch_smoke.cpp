// LibTorch and a raw CUDA kernel on the same tensor, ordered on the default stream.
#include <cuda_runtime.h>
#include <torch/torch.h>
#include <iostream>
int raw_add_one(float* p, long n, cudaStream_t s);
int main() {
  std::cout << "libtorch " << TORCH_VERSION_MAJOR << "." << TORCH_VERSION_MINOR << "." << TORCH_VERSION_PATCH
            << " cuda available " << torch::cuda::is_available() << "\n";
  if (!torch::cuda::is_available()) {
    std::cout << "skipped: no CUDA device\n";
    return 0;
  }
  auto t = torch::zeros({1024}, torch::TensorOptions().device(torch::kCUDA).dtype(torch::kFloat32));
  if (raw_add_one(t.data_ptr<float>(), t.numel(), nullptr) != 0) return 1;
  auto s = t.sum().item<float>();
  auto a = torch::randn({64, 64}, torch::TensorOptions().device(torch::kCUDA).dtype(torch::kBFloat16));
  auto q = a.view({1, 1, 64, 64});
#if TORCH_VERSION_MAJOR >= 2
  auto o = at::scaled_dot_product_attention(q, q, q);
  std::cout << "sdpa " << o.sizes() << "\n";
#endif
  std::cout << "sum after raw kernel " << s << " (expect 1024)\n";
  return s == 1024.f ? 0 : 1;
}
