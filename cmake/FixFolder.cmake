# syncscope_fix_library(NAME STEP_SOURCES ... SOURCES ... [OWNS ...] [LIBS ...]): the two
# libraries of a fix folder, fixes/<NAME>/ (docs/fix-registry.md), installed with the project:
# - its step half, syncscope_fix_<NAME>_step (alias syncscope::fix_<NAME>_step), from
#   STEP_SOURCES: its identity and what a step needs (step options, program operators, CPU
#   reference), exporting the folder's include/; it links the registry publicly and,
#   privately, the step program and the scenario only, so the LibTorch step and its tests
#   (the folder's torch library links this half) build without the model;
# - the whole fix, syncscope_fix_<NAME> (alias syncscope::fix_<NAME>), from SOURCES: the model's
#   hooks (detector, closed form, predict options, published figures, replay edits) over the
#   step half, which it links publicly; privately the model's trace facts and closed forms,
#   the replay's edit context, the analysis and trace model, plus LIBS. OWNS names the
#   folder's public headers that are this half's (they include the model's), for
#   scripts/check-layers.
function(syncscope_fix_library name)
  cmake_parse_arguments(A "" "" "STEP_SOURCES;SOURCES;OWNS;LIBS" ${ARGN})
  set(step syncscope_fix_${name}_step)
  add_library(${step} STATIC ${A_STEP_SOURCES})
  add_library(syncscope::fix_${name}_step ALIAS ${step})
  target_include_directories(${step} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${step}
    PUBLIC syncscope_fixes
    PRIVATE syncscope_core syncscope_program syncscope_scenario fmt::fmt $<BUILD_INTERFACE:syncscope_warnings>)
  set_target_properties(${step} PROPERTIES EXPORT_NAME fix_${name}_step)
  install(TARGETS ${step} EXPORT syncscopeTargets)

  set(target syncscope_fix_${name})
  add_library(${target} STATIC ${A_SOURCES})
  add_library(syncscope::fix_${name} ALIAS ${target})
  target_link_libraries(${target}
    PUBLIC ${step} syncscope_fixes
    PRIVATE syncscope_core syncscope_program syncscope_model syncscope_replay syncscope_scenario syncscope_analysis
      syncscope_trace fmt::fmt ${A_LIBS} $<BUILD_INTERFACE:syncscope_warnings>)
  set_target_properties(${target} PROPERTIES EXPORT_NAME fix_${name} SYNCSCOPE_OWNS_HEADERS "${A_OWNS}")
  install(TARGETS ${target} EXPORT syncscopeTargets)
endfunction()

# syncscope_fix_cuda_library(NAME SOURCES ... OWNS ...): a fix folder's own CUDA kernels behind
# plain C headers in its include/ (torch-free, so the device tests check them without
# LibTorch), syncscope_fix_<NAME>_cuda, built only in a CUDA build. It links the step's CUDA
# library (kernels/src/cuda/cuda_api.h's dtype codes, from_float.cuh) and owns the headers OWNS
# names (scripts/check-layers); the folder's LibTorch library links it.
function(syncscope_fix_cuda_library name)
  cmake_parse_arguments(A "" "" "SOURCES;OWNS" ${ARGN})
  if(NOT (SYNCSCOPE_ENABLE_CUDA AND TARGET syncscope_cuda_kernels))
    return()
  endif()
  set(target syncscope_fix_${name}_cuda)
  add_library(${target} STATIC ${A_SOURCES})
  add_library(syncscope::fix_${name}_cuda ALIAS ${target})
  # The folder's include/ is exported by syncscope_fix_<NAME> (one exporter per directory,
  # scripts/check-layers); a user of the kernels gets it there.
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/include)
  target_link_libraries(${target} PUBLIC syncscope_cuda_kernels CUDA::cudart PRIVATE $<BUILD_INTERFACE:syncscope_warnings>)
  set_target_properties(${target} PROPERTIES EXPORT_NAME fix_${name}_cuda SYNCSCOPE_OWNS_HEADERS "${A_OWNS}")
  install(TARGETS ${target} EXPORT syncscopeTargets)
endfunction()

# syncscope_fix_torch_library(NAME SOURCES ... [OWNS ...]): a fix folder's LibTorch hooks,
# syncscope_fix_<NAME>_torch (alias syncscope::fix_<NAME>_torch), built only with LibTorch as
# kernels/ builds its torch library (the top-level CMakeLists.txt collects it for
# fixes/shipped's register_shipped_torch_steps()). It links the folder's step half publicly and,
# privately, the torch layer (syncscope_kernels: torch_step_point.hpp) and, in a CUDA build,
# the step's CUDA library and the folder's own kernels (syncscope_fix_<NAME>_cuda, where the
# folder has one), with SYNCSCOPE_KERNELS_CUDA as in kernels/.
# OWNS names the folder's public headers that are this library's (they include torch; a fix's
# torch_step.hpp), for scripts/check-layers.
function(syncscope_fix_torch_library name)
  cmake_parse_arguments(A "" "" "SOURCES;OWNS" ${ARGN})
  if(NOT (SYNCSCOPE_HAVE_TORCH AND TARGET syncscope_kernels))
    return()
  endif()
  set(target syncscope_fix_${name}_torch)
  add_library(${target} STATIC ${A_SOURCES})
  add_library(syncscope::fix_${name}_torch ALIAS ${target})
  target_link_libraries(${target}
    PUBLIC syncscope_fix_${name}_step syncscope_fixes
    PRIVATE syncscope_kernels syncscope_program syncscope_core "${TORCH_LIBRARIES}" fmt::fmt-header-only
      $<BUILD_INTERFACE:syncscope_warnings>)
  # fmt header-only next to torch, and torch's headers are not ours to warn about (kernels/).
  target_include_directories(${target} SYSTEM PRIVATE ${TORCH_INCLUDE_DIRS})
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${TORCH_CXX_FLAGS}>)
  syncscope_torch_pch(${target})
  if(SYNCSCOPE_ENABLE_CUDA AND TARGET syncscope_cuda_kernels)
    target_compile_definitions(${target} PRIVATE SYNCSCOPE_KERNELS_CUDA=1)
    target_link_libraries(${target} PRIVATE syncscope_cuda_kernels)
    if(TARGET syncscope_fix_${name}_cuda)
      target_link_libraries(${target} PRIVATE syncscope_fix_${name}_cuda)
    endif()
  endif()
  set_target_properties(${target} PROPERTIES EXPORT_NAME fix_${name}_torch SYNCSCOPE_OWNS_HEADERS "${A_OWNS}")
  install(TARGETS ${target} EXPORT syncscopeTargets)
endfunction()
