# scripts/gpu-check's build-failure diagnosis on recorded logs (fixtures/build-logs): the
# fallback without the grouped GEMM is chosen by the failing file or symbol, never because
# "moe.cpp" appears somewhere in the log (a linker error about fmt names moe.cpp too).
#   cmake -DSCRIPT=<scripts/gpu-check> -DLOGS=<fixtures/build-logs> -P check_build_classifier.cmake
set(expect
  "grouped-compile.log=grouped_mm"
  "grouped-link.log=grouped_mm"
  "fmt-link.log=fmt"
  "other.log=other")
set(failed "")
foreach(pair IN LISTS expect)
  string(REPLACE "=" ";" pair "${pair}")
  list(GET pair 0 log)
  list(GET pair 1 kind)
  execute_process(COMMAND bash "${SCRIPT}" --classify-build-log "${LOGS}/${log}"
    OUTPUT_VARIABLE got ERROR_VARIABLE err RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  message("${log}: ${got}${err}")
  if(NOT rc EQUAL 0 OR NOT got MATCHES "^${kind}: ")
    string(APPEND failed " ${log} (expected ${kind});")
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "gpu-check build diagnosis wrong for:${failed}")
endif()
