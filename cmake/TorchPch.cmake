# One precompiled <torch/torch.h> for every LibTorch translation unit of the build.
#
# Why: parsing LibTorch's headers is most of a LibTorch unit's compile time (model.cpp: 24.5 of
# its 31.2 CPU s under the ci preset at -O2, docs/ci.md), and the ci build has 16 such units
# (15 use the header; torch_fmt_smoke checks include order and keeps the plain include), 19%
# of its step time. The header is built once, by a target of its own (syncscope_torch_pch)
# that has only what every LibTorch unit has: LibTorch's flags and definitions, C++20,
# position-independent code and our warning flags. GCC takes a precompiled header only where
# the unit defines every macro the header was built with, in the same way, and uses the same
# -fpic/-fpie setting (GCC manual, "Using Precompiled Headers"); the units' own macros (FMT_HEADER_ONLY, SYNCSCOPE_KERNELS_CUDA, the
# tests' paths) do not appear in LibTorch's headers, so they may differ. Executables are
# compiled -fPIE by CMake: their LibTorch units are compiled -fPIC instead (as the libraries
# are; a PIE links PIC objects), to match. -O levels may differ.
# Where GCC still judges the header invalid for a unit it parses <torch/torch.h> as before and
# warns (-Winvalid-pch, which CMake adds): that warning is kept out of -Werror, so a mismatch
# costs time, never the build (the build log shows it: "not used because ...").
#
# ccache caches the header and the units that use it only with sloppiness pch_defines and
# time_macros (its manual, "Precompiled headers"); scripts/test sets them. Without them ccache
# compiles those units uncached, as correct as before.
option(SYNCSCOPE_TORCH_PCH "Precompile <torch/torch.h> once for the LibTorch units (GCC)" ON)

# syncscope_torch_pch(TARGET): TARGET's C++ units start from the one precompiled <torch/torch.h>.
# Only for targets built against LibTorch (every C++ unit of TARGET gets the header).
function(syncscope_torch_pch target)
  if(NOT SYNCSCOPE_TORCH_PCH OR NOT SYNCSCOPE_HAVE_TORCH OR NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    return()
  endif()
  if(NOT TARGET syncscope_torch_pch)
    # The header's own target: one empty unit (generated), LibTorch's usage requirements only.
    set(_src "${PROJECT_BINARY_DIR}/syncscope_torch_pch.cpp")
    if(NOT EXISTS "${_src}")
      file(WRITE "${_src}" "// Carries the precompiled <torch/torch.h> (cmake/TorchPch.cmake); compiles to nothing.\n")
    endif()
    add_library(syncscope_torch_pch OBJECT "${_src}")
    # syncscope_warnings too: -Wpedantic changes the predefined macros (__cpp_runtime_arrays).
    target_link_libraries(syncscope_torch_pch PRIVATE "${TORCH_LIBRARIES}" syncscope_warnings)
    target_include_directories(syncscope_torch_pch SYSTEM PRIVATE ${TORCH_INCLUDE_DIRS})
    target_compile_options(syncscope_torch_pch PRIVATE ${TORCH_CXX_FLAGS})
    set_target_properties(syncscope_torch_pch PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_precompile_headers(syncscope_torch_pch PRIVATE <torch/torch.h>)
    # Its one (empty) unit loads the header too (about 7 CPU s): CMake makes no header for a
    # target none of whose units use it (SKIP_PRECOMPILE_HEADERS there fails a fresh configure).
  endif()
  target_precompile_headers(${target} REUSE_FROM syncscope_torch_pch)
  get_target_property(_type ${target} TYPE)
  if(_type STREQUAL "EXECUTABLE")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fPIC>)  # after CMake's -fPIE
  endif()
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-error=invalid-pch>)
endfunction()
