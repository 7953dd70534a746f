#include "syncscope/trace/api_classes.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace syncscope {
namespace {

struct CbidName {
  std::int32_t cbid;
  const char* name;
};

// Callback ids of the calls the analysis classifies, from CUDA 13.0's
// include/cupti_runtime_cbid.h and include/cupti_driver_cbid.h (CUPTI 13.0.1; ids are
// stable across releases: CUPTI only appends). Runtime names drop CUPTI's _vNNNN suffix
// because the runtime reports calls without it. Generated from the headers, not typed.
constexpr CbidName kRuntimeCbids[] = {
    {31, "cudaMemcpy"},
    {32, "cudaMemcpy2D"},
    {33, "cudaMemcpyToArray"},
    {34, "cudaMemcpy2DToArray"},
    {35, "cudaMemcpyFromArray"},
    {36, "cudaMemcpy2DFromArray"},
    {37, "cudaMemcpyArrayToArray"},
    {38, "cudaMemcpy2DArrayToArray"},
    {39, "cudaMemcpyToSymbol"},
    {40, "cudaMemcpyFromSymbol"},
    {41, "cudaMemcpyAsync"},
    {42, "cudaMemcpyToArrayAsync"},
    {43, "cudaMemcpyFromArrayAsync"},
    {44, "cudaMemcpy2DAsync"},
    {45, "cudaMemcpy2DToArrayAsync"},
    {46, "cudaMemcpy2DFromArrayAsync"},
    {47, "cudaMemcpyToSymbolAsync"},
    {48, "cudaMemcpyFromSymbolAsync"},
    {126, "cudaThreadSynchronize"},
    {131, "cudaStreamSynchronize"},
    {132, "cudaStreamQuery"},
    {137, "cudaEventSynchronize"},
    {138, "cudaEventQuery"},
    {144, "cudaMemcpy3D"},
    {145, "cudaMemcpy3DAsync"},
    {147, "cudaStreamWaitEvent"},
    {160, "cudaMemcpyPeer"},
    {161, "cudaMemcpyPeerAsync"},
    {162, "cudaMemcpy3DPeer"},
    {163, "cudaMemcpy3DPeerAsync"},
    {165, "cudaDeviceSynchronize"},
    {211, "cudaLaunchKernel"},
    {214, "cudaLaunchKernel_ptsz"},
    {215, "cudaMemcpy_ptds"},
    {216, "cudaMemcpy2D_ptds"},
    {217, "cudaMemcpyToArray_ptds"},
    {218, "cudaMemcpy2DToArray_ptds"},
    {219, "cudaMemcpyFromArray_ptds"},
    {220, "cudaMemcpy2DFromArray_ptds"},
    {221, "cudaMemcpyArrayToArray_ptds"},
    {222, "cudaMemcpy2DArrayToArray_ptds"},
    {223, "cudaMemcpyToSymbol_ptds"},
    {224, "cudaMemcpyFromSymbol_ptds"},
    {225, "cudaMemcpyAsync_ptsz"},
    {226, "cudaMemcpyToArrayAsync_ptsz"},
    {227, "cudaMemcpyFromArrayAsync_ptsz"},
    {228, "cudaMemcpy2DAsync_ptsz"},
    {229, "cudaMemcpy2DToArrayAsync_ptsz"},
    {230, "cudaMemcpy2DFromArrayAsync_ptsz"},
    {231, "cudaMemcpyToSymbolAsync_ptsz"},
    {232, "cudaMemcpyFromSymbolAsync_ptsz"},
    {239, "cudaStreamSynchronize_ptsz"},
    {240, "cudaStreamQuery_ptsz"},
    {245, "cudaMemcpy3D_ptds"},
    {246, "cudaMemcpy3DAsync_ptsz"},
    {247, "cudaStreamWaitEvent_ptsz"},
    {249, "cudaMemcpy3DPeer_ptds"},
    {250, "cudaMemcpy3DPeerAsync_ptsz"},
    {311, "cudaGraphLaunch"},
    {312, "cudaGraphLaunch_ptsz"},
    {430, "cudaLaunchKernelExC"},
    {431, "cudaLaunchKernelExC_ptsz"},
    {482, "cudaMemcpyBatchAsync"},
    {483, "cudaMemcpyBatchAsync_ptsz"},
    {484, "cudaMemcpy3DBatchAsync"},
    {485, "cudaMemcpy3DBatchAsync_ptsz"},
    {509, "cudaMemcpyBatchAsync"},
    {510, "cudaMemcpyBatchAsync_ptsz"},
    {511, "cudaMemcpy3DBatchAsync"},
    {512, "cudaMemcpy3DBatchAsync_ptsz"},
};
constexpr CbidName kDriverCbids[] = {
    {17, "cuCtxSynchronize"},
    {43, "cuMemcpyHtoD"},
    {45, "cuMemcpyDtoH"},
    {47, "cuMemcpyDtoD"},
    {49, "cuMemcpyDtoA"},
    {51, "cuMemcpyAtoD"},
    {53, "cuMemcpyHtoA"},
    {54, "cuMemcpyAtoH"},
    {55, "cuMemcpyAtoA"},
    {56, "cuMemcpy2D"},
    {57, "cuMemcpy2DUnaligned"},
    {58, "cuMemcpy3D"},
    {60, "cuMemcpyHtoDAsync"},
    {62, "cuMemcpyDtoHAsync"},
    {64, "cuMemcpyDtoDAsync"},
    {66, "cuMemcpyHtoAAsync"},
    {67, "cuMemcpyAtoHAsync"},
    {68, "cuMemcpy2DAsync"},
    {69, "cuMemcpy3DAsync"},
    {120, "cuEventQuery"},
    {121, "cuEventSynchronize"},
    {125, "cuStreamQuery"},
    {126, "cuStreamSynchronize"},
    {248, "cuMemcpy_v2"},
    {276, "cuMemcpyHtoD_v2"},
    {277, "cuMemcpyHtoDAsync_v2"},
    {278, "cuMemcpyDtoH_v2"},
    {279, "cuMemcpyDtoHAsync_v2"},
    {280, "cuMemcpyDtoD_v2"},
    {281, "cuMemcpyDtoDAsync_v2"},
    {282, "cuMemcpyAtoH_v2"},
    {283, "cuMemcpyAtoHAsync_v2"},
    {284, "cuMemcpyAtoD_v2"},
    {285, "cuMemcpyDtoA_v2"},
    {286, "cuMemcpyAtoA_v2"},
    {287, "cuMemcpy2D_v2"},
    {288, "cuMemcpy2DUnaligned_v2"},
    {289, "cuMemcpy2DAsync_v2"},
    {290, "cuMemcpy3D_v2"},
    {291, "cuMemcpy3DAsync_v2"},
    {292, "cuMemcpyHtoA_v2"},
    {293, "cuMemcpyHtoAAsync_v2"},
    {295, "cuStreamWaitEvent"},
    {305, "cuMemcpy"},
    {306, "cuMemcpyAsync"},
    {307, "cuLaunchKernel"},
    {318, "cuMemcpyPeer"},
    {319, "cuMemcpyPeerAsync"},
    {320, "cuMemcpy3DPeer"},
    {321, "cuMemcpy3DPeerAsync"},
    {397, "cuMemcpyHtoD_v2_ptds"},
    {398, "cuMemcpyDtoH_v2_ptds"},
    {399, "cuMemcpyDtoD_v2_ptds"},
    {400, "cuMemcpyDtoA_v2_ptds"},
    {401, "cuMemcpyAtoD_v2_ptds"},
    {402, "cuMemcpyHtoA_v2_ptds"},
    {403, "cuMemcpyAtoH_v2_ptds"},
    {404, "cuMemcpyAtoA_v2_ptds"},
    {405, "cuMemcpy2D_v2_ptds"},
    {406, "cuMemcpy2DUnaligned_v2_ptds"},
    {407, "cuMemcpy3D_v2_ptds"},
    {408, "cuMemcpy_ptds"},
    {409, "cuMemcpyPeer_ptds"},
    {410, "cuMemcpy3DPeer_ptds"},
    {418, "cuMemcpyAsync_ptsz"},
    {419, "cuMemcpyHtoAAsync_v2_ptsz"},
    {420, "cuMemcpyAtoHAsync_v2_ptsz"},
    {421, "cuMemcpyHtoDAsync_v2_ptsz"},
    {422, "cuMemcpyDtoHAsync_v2_ptsz"},
    {423, "cuMemcpyDtoDAsync_v2_ptsz"},
    {424, "cuMemcpy2DAsync_v2_ptsz"},
    {425, "cuMemcpy3DAsync_v2_ptsz"},
    {426, "cuMemcpyPeerAsync_ptsz"},
    {427, "cuMemcpy3DPeerAsync_ptsz"},
    {436, "cuStreamWaitEvent_ptsz"},
    {439, "cuStreamQuery_ptsz"},
    {440, "cuStreamSynchronize_ptsz"},
    {442, "cuLaunchKernel_ptsz"},
    {514, "cuGraphLaunch"},
    {515, "cuGraphLaunch_ptsz"},
    {652, "cuLaunchKernelEx"},
    {653, "cuLaunchKernelEx_ptsz"},
    {776, "cuMemcpyBatchAsync"},
    {777, "cuMemcpyBatchAsync_ptsz"},
    {778, "cuMemcpy3DBatchAsync"},
    {779, "cuMemcpy3DBatchAsync_ptsz"},
    {796, "cuMemcpyBatchAsync_v2"},
    {797, "cuMemcpyBatchAsync_v2_ptsz"},
    {798, "cuMemcpy3DBatchAsync_v2"},
    {799, "cuMemcpy3DBatchAsync_v2_ptsz"},
    {800, "cuCtxSynchronize_v2"},
};

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

const char* cbid_name(ApiKind kind, std::int32_t cbid) {
  auto find = [cbid](const auto& table) -> const char* {
    for (const auto& e : table)
      if (e.cbid == cbid) return e.name;
    return nullptr;
  };
  return kind == ApiKind::Driver ? find(kDriverCbids) : find(kRuntimeCbids);
}

// CUDA runtime and driver names, and HIP's (ROCm builds of PyTorch write HIP runtime calls
// under "cuda_runtime"). HIP semantics from the HIP runtime API reference:
// hipDeviceSynchronize, hipStreamSynchronize ("host-synchronous: the host will block until
// all operations on the specified stream ... are completed") and hipEventSynchronize block the
// host; hipMemcpyWithStream is "akin to hipMemcpyAsync + hipStreamSynchronize ... a sync API";
// hipMemcpyAsync from or to memory that is not pinned "will be performed synchronously";
// hipStreamWaitEvent makes a stream wait, not the host; queries never block.
ApiClass classify_base(std::string_view b) {
  static constexpr std::array<std::string_view, 3> kStreamSync = {"cudaStreamSynchronize", "cuStreamSynchronize",
                                                                  "hipStreamSynchronize"};
  static constexpr std::array<std::string_view, 5> kDeviceSync = {"cudaDeviceSynchronize", "cudaThreadSynchronize",
                                                                  "cuCtxSynchronize", "hipDeviceSynchronize",
                                                                  "hipCtxSynchronize"};
  static constexpr std::array<std::string_view, 3> kEventSync = {"cudaEventSynchronize", "cuEventSynchronize",
                                                                 "hipEventSynchronize"};
  static constexpr std::array<std::string_view, 6> kQuery = {"cudaStreamQuery", "cudaEventQuery", "cuStreamQuery",
                                                             "cuEventQuery",    "hipStreamQuery", "hipEventQuery"};
  static constexpr std::array<std::string_view, 3> kWait = {"cudaStreamWaitEvent", "cuStreamWaitEvent",
                                                            "hipStreamWaitEvent"};
  // CUDA docs, "API synchronization behavior": "For transfers from device memory to device
  // memory, no host-side synchronization is performed"; the peer forms are documented as
  // asynchronous with respect to the host. Array<->device and array<->array copies are
  // device-to-device transfers. HIP's DtoD/peer/array forms likewise.
  static constexpr std::array<std::string_view, 16> kDeviceOnly = {"cudaMemcpyArrayToArray", "cudaMemcpy2DArrayToArray",
                                                                   "cudaMemcpyPeer",         "cudaMemcpy3DPeer",
                                                                   "cuMemcpyDtoD",           "cuMemcpyDtoA",
                                                                   "cuMemcpyAtoD",           "cuMemcpyAtoA",
                                                                   "cuMemcpyPeer",           "cuMemcpy3DPeer",
                                                                   "hipMemcpyDtoD",          "hipMemcpyPeer",
                                                                   "hipMemcpyAtoA",          "hipMemcpyAtoD",
                                                                   "hipMemcpyDtoA",          "hipMemcpy3DPeer"};
  auto in = [b](const auto& names) { return std::find(names.begin(), names.end(), b) != names.end(); };
  if (in(kStreamSync)) return ApiClass::StreamSync;
  if (in(kDeviceSync)) return ApiClass::DeviceSync;
  if (in(kEventSync)) return ApiClass::EventSync;
  if (in(kQuery)) return ApiClass::Query;
  if (in(kWait)) return ApiClass::StreamWaitEvent;
  if (starts_with(b, "cudaMemcpy") || starts_with(b, "cuMemcpy") || starts_with(b, "hipMemcpy")) {
    if (ends_with(b, "Async")) return ApiClass::AsyncCopy;
    if (in(kDeviceOnly)) return ApiClass::DeviceCopy;
    return ApiClass::SyncCopy;  // hipMemcpyWithStream too
  }
  if (b.find("Launch") != std::string_view::npos) return ApiClass::Enqueue;  // also cudaGraphLaunch, hip*LaunchKernel
  if (starts_with(b, "cudaMemset") || starts_with(b, "cuMemset") || starts_with(b, "hipMemset"))
    return ApiClass::Enqueue;
  return ApiClass::Other;
}

}  // namespace

std::string_view api_base_name(std::string_view name) {
  for (;;) {
    if (ends_with(name, "_ptsz") || ends_with(name, "_ptds")) {  // CUDA per-thread default stream
      name.remove_suffix(5);
      continue;
    }
    if (ends_with(name, "_spt")) {  // HIP's per-thread default stream forms
      name.remove_suffix(4);
      continue;
    }
    // _v<digits>
    std::size_t i = name.size();
    while (i > 0 && std::isdigit(static_cast<unsigned char>(name[i - 1]))) --i;
    if (i < name.size() && i >= 2 && name[i - 1] == 'v' && name[i - 2] == '_') {
      name = name.substr(0, i - 2);
      continue;
    }
    return name;
  }
}

ApiClass classify_api(ApiKind kind, std::string_view name, std::int32_t cbid) {
  if (name.empty()) {
    const char* n = cbid >= 0 ? cbid_name(kind, cbid) : nullptr;
    if (n == nullptr) return ApiClass::Other;
    name = n;
  }
  return classify_base(api_base_name(name));
}

std::string api_display_name(ApiKind kind, std::string_view name, std::int32_t cbid) {
  if (!name.empty()) return std::string(name);
  if (const char* n = cbid >= 0 ? cbid_name(kind, cbid) : nullptr) return n;
  return "cbid:" + std::to_string(cbid);
}

CopyKind copy_kind_from_name(std::string_view b) {
  if (ends_with(b, "Async")) b.remove_suffix(5);
  if (ends_with(b, "HtoD") || ends_with(b, "HtoA")) return CopyKind::HtoD;
  if (ends_with(b, "DtoH") || ends_with(b, "AtoH")) return CopyKind::DtoH;
  if (ends_with(b, "DtoD") || ends_with(b, "DtoA") || ends_with(b, "AtoD") || ends_with(b, "AtoA"))
    return CopyKind::DtoD;
  return CopyKind::Unknown;
}

}  // namespace syncscope
