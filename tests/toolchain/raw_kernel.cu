#include <cuda_runtime.h>
__global__ void add_one(float* p, long n) {
  long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
  if (i < n) p[i] += 1.f;
}
int raw_add_one(float* p, long n, cudaStream_t s) {
  add_one<<<unsigned((n + 255) / 256), 256, 0, s>>>(p, n);
  return int(cudaGetLastError());
}
