# ctest: install the build tree into a fresh prefix, build tests/install/consumer against it
# with find_package(syncscope), and run it on the torch.profiler fixture.
# -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=...
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGV}\n${out}\n${err}")
  endif()
endfunction()
run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/install/consumer" -B "${WORK_DIR}/build" -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix")
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run("${WORK_DIR}/build/consumer" "${SOURCE_DIR}/tests/fixtures/torch/item_loop_l8_h200.json.gz")
if(EXISTS "${WORK_DIR}/build/tracer_consumer")
  run("${WORK_DIR}/build/tracer_consumer")
  message(STATUS "syncscope::tracer from an install: links and runs")
endif()
message(STATUS "find_package(syncscope) from an install: ok")
