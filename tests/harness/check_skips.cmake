# Runs the HarnessSkipProbe tests through CTest, in RUN_DIR (so the outer CTest's logs are
# left alone), and checks how CTest reports them: every GTEST_SKIP as skipped, whatever its
# message; a passing test as passed. Twice:
#   as_generated   with exactly the properties gtest_discover_tests gave them (PROBE_INCLUDE);
#   ours alone     with GoogleTest's default pattern taken out, leaving only the one
#                  syncscope_add_gtest sets. CTest 3.25 and 4.3 add a repeated
#                  SKIP_REGULAR_EXPRESSION to the earlier one, but a CTest where the later
#                  replaces the earlier would keep only ours: it must cover both messages.
#   cmake -DCTEST=<ctest> -DPROBE_INCLUDE=<...[1]_include.cmake> -DRUN_DIR=<dir> -P check_skips.cmake
string(REPLACE "_include.cmake" "_tests.cmake" probe_tests "${PROBE_INCLUDE}")
if(NOT EXISTS "${probe_tests}")
  message(FATAL_ERROR "check_skips: ${probe_tests} missing (build test_harness_skip_probe first)")
endif()
cmake_policy(SET CMP0054 NEW)  # quoted arguments of if() are never variables
file(READ "${probe_tests}" generated_text)
set(default_pattern "SKIP_REGULAR_EXPRESSION [==[\\[  SKIPPED \\]]==]")
string(FIND "${generated_text}" "${default_pattern}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "check_skips: GoogleTest's default skip pattern not found in ${probe_tests}; update check_skips.cmake")
endif()
string(REPLACE "${default_pattern}" "" ours_text "${generated_text}")

set(failed "")
foreach(variant as_generated ours_alone)
  set(dir "${RUN_DIR}/${variant}")
  file(REMOVE_RECURSE "${dir}")
  file(MAKE_DIRECTORY "${dir}")
  if(variant STREQUAL "as_generated")
    file(WRITE "${dir}/CTestTestfile.cmake" "include([==[${PROBE_INCLUDE}]==])\n")
  else()
    file(WRITE "${dir}/CTestTestfile.cmake" "${ours_text}")
  endif()
  execute_process(COMMAND "${CTEST}" --no-tests=error WORKING_DIRECTORY "${dir}"
    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  message("---- ${variant}\n${out}${err}")
  foreach(name NoCudaDevice OtherReason)
    if(NOT out MATCHES "HarnessSkipProbe\\.${name} [^\n]*Skipped")
      string(APPEND failed " ${variant}: HarnessSkipProbe.${name} was not reported as skipped;")
    endif()
  endforeach()
  if(NOT out MATCHES "HarnessSkipProbe\\.Passes [^\n]*Passed")
    string(APPEND failed " ${variant}: HarnessSkipProbe.Passes was not reported as passed;")
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "test harness:${failed} see SYNCSCOPE_GTEST_SKIP_REGEX in tests/CMakeLists.txt")
endif()
message("harness: a GTEST_SKIP with any message is reported as skipped, a passing test as passed")
