// Links syncscope::pipeline from an install and loads the installed measured backend
// (syncscope::backend, a module) by its path: it must load from the install tree (its
// RPATH finds LibTorch and CUDA) and pass the build-key check. Without a GPU it reports why
// it cannot measure; exit 1 when it does not load.
#include <cstdio>
#include <string>

#include "syncscope/pipeline/backend.hpp"
int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const syncscope::pipeline::BackendLoad r = syncscope::pipeline::load_measured_backend(argv[1]);
  if (!r.backend) {
    std::printf("pipeline consumer: %s\n", r.error.c_str());
    return 1;
  }
  std::string why;
  const bool device = r.backend->device_available(&why);
  std::printf("pipeline consumer: backend %s (%s): %s\n", r.backend->file().c_str(), r.backend->description().c_str(),
              device ? "a CUDA device is present" : why.c_str());
  return 0;
}
