// Links syncscope::tracer from an install. Without a GPU, start() refuses with CudaError and
// the program says so; with one, it traces nothing in particular and reports the trace.
#include <cstdio>
#include "syncscope/core/error.hpp"
#include "syncscope/tracer/tracer.hpp"
int main() {
  syncscope::Tracer tracer;
  try {
    tracer.start();
  } catch (const syncscope::Error& e) {
    std::printf("tracer consumer: no tracing here (%s)\n", e.what());
    return 0;
  }
  tracer.stop();
  const syncscope::Trace t = tracer.take();
  std::printf("tracer consumer: %llu records\n", static_cast<unsigned long long>(t.record_count()));
  return 0;
}
