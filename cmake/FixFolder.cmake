# syncscope_fix_library(NAME SOURCES ... [LIBS ...]): the one library of a fix folder,
# fixes/<NAME>/ (docs/fix-registry.md): syncscope_fix_<NAME>, alias syncscope::fix_<NAME>,
# exporting the folder's include/ and installed with the project. It links the registry
# publicly and, privately, the layers every fix plugs into (the step program, the model's
# trace facts and closed forms, the replay's edit context, the scenario, the analysis and
# trace model), plus LIBS.
function(syncscope_fix_library name)
  cmake_parse_arguments(A "" "" "SOURCES;LIBS" ${ARGN})
  set(target syncscope_fix_${name})
  add_library(${target} STATIC ${A_SOURCES})
  add_library(syncscope::fix_${name} ALIAS ${target})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${target}
    PUBLIC syncscope_fixes
    PRIVATE syncscope_core syncscope_program syncscope_model syncscope_replay syncscope_scenario syncscope_analysis
      syncscope_trace fmt::fmt ${A_LIBS} $<BUILD_INTERFACE:syncscope_warnings>)
  set_target_properties(${target} PROPERTIES EXPORT_NAME fix_${name})
  install(TARGETS ${target} EXPORT syncscopeTargets)
endfunction()
