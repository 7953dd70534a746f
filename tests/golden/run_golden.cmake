# One golden case: runs the `syncscope` executable and compares its stdout, byte for byte
# after masking, with a committed file under tests/golden/expected/.
#
#   cmake -DEXE=... -DSOURCE_DIR=... -DWORK_DIR=... -DGOLDEN=... -DARGS="a|b|c"
#         [-DWORK_ROOT=...] [-DEXPECT_RC=0] [-DSQL=fixture.sql] [-DFRESH=1]
#         [-DOUTPUT=file] [-DSUMMARY=html] -P run_golden.cmake
#
# ARGS is "|"-separated (a CMake list cannot pass through add_test intact). In ARGS, @WORK@
# stands for WORK_DIR and @DB@ for the SQLite database made from SQL (an nsys fixture, built
# with the sqlite3 command-line shell: the test reports "skipped: sqlite3 not installed"
# without it). The command runs in SOURCE_DIR, so fixture paths print as given (relative).
# FRESH=1 removes WORK_DIR first (a directory this test made itself: `run` refuses to replace
# its --out directory).
# OUTPUT: compare that file (@WORK@ allowed; what the command wrote, or what an earlier case
# left) instead of stdout; with OUTPUT, ARGS may be empty (no command is run). SUMMARY=html:
# compare the file's structure (html_structure.cmake: headings, section ids, table headers and
# row counts, chart element counts), not its bytes.
#
# Masked, because they differ between checkouts, machines and runs (everything else is
# compared as printed):
#   SOURCE_DIR -> <src>, WORK_ROOT (the directory above every case's WORK_DIR, default
#   WORK_DIR) -> <work>  (absolute paths of this checkout and build)
#   the commit the build was made from (syncscope --version) -> <commit>
#   UTC timestamps 2026-12-01T15:52:49Z -> <utc>
#
# SYNCSCOPE_UPDATE_GOLDEN=1 in the environment writes the masked output to GOLDEN instead of
# comparing (tests/golden/README.md).
cmake_minimum_required(VERSION 3.25)
foreach(v EXE SOURCE_DIR WORK_DIR GOLDEN ARGS)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_golden.cmake: -D${v}=... is required")
  endif()
endforeach()
if(NOT DEFINED EXPECT_RC)
  set(EXPECT_RC 0)
endif()

if(FRESH AND EXISTS "${WORK_DIR}")
  file(REMOVE_RECURSE "${WORK_DIR}")
endif()
file(MAKE_DIRECTORY "${WORK_DIR}")

string(REPLACE "@WORK@" "${WORK_DIR}" ARGS "${ARGS}")
if(DEFINED SQL)
  find_program(SQLITE3 sqlite3)
  if(NOT SQLITE3)
    message("skipped: sqlite3 not installed (apt-get install sqlite3); needed to build ${SQL}")
    return()
  endif()
  set(db "${WORK_DIR}/fixture.sqlite")
  file(REMOVE "${db}")
  execute_process(COMMAND "${SQLITE3}" "${db}" INPUT_FILE "${SOURCE_DIR}/${SQL}" RESULT_VARIABLE rc
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "sqlite3 could not build ${db} from ${SQL}: ${err}")
  endif()
  string(REPLACE "@DB@" "${db}" ARGS "${ARGS}")
endif()
string(REPLACE "|" ";" argv "${ARGS}")

if(NOT ARGS STREQUAL "")
  execute_process(COMMAND "${EXE}" ${argv} WORKING_DIRECTORY "${SOURCE_DIR}"
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc STREQUAL "${EXPECT_RC}")
    message(FATAL_ERROR "syncscope ${argv}: exit status ${rc}, expected ${EXPECT_RC}\nstdout:\n${out}\nstderr:\n${err}")
  endif()
elseif(NOT DEFINED OUTPUT)
  message(FATAL_ERROR "run_golden.cmake: ARGS is empty and there is no OUTPUT to compare")
endif()
if(DEFINED OUTPUT)
  string(REPLACE "@WORK@" "${WORK_DIR}" OUTPUT "${OUTPUT}")
  if(NOT EXISTS "${OUTPUT}")
    message(FATAL_ERROR "${OUTPUT} does not exist (syncscope ${argv} should have written it)")
  endif()
  file(READ "${OUTPUT}" out)
  if(SUMMARY STREQUAL "html")
    include("${CMAKE_CURRENT_LIST_DIR}/html_structure.cmake")
    html_structure(out "${out}")
  elseif(DEFINED SUMMARY)
    message(FATAL_ERROR "run_golden.cmake: SUMMARY=${SUMMARY}: only html is known")
  endif()
endif()

# Masks (see above). The version line gives the strings the build embeds.
execute_process(COMMAND "${EXE}" --version OUTPUT_VARIABLE version_line RESULT_VARIABLE vrc)
string(STRIP "${version_line}" version_line)
if(NOT DEFINED WORK_ROOT)
  set(WORK_ROOT "${WORK_DIR}")
endif()
string(REPLACE "${WORK_ROOT}" "<work>" out "${out}")
string(REPLACE "${SOURCE_DIR}" "<src>" out "${out}")
if(version_line MATCHES "\\(commit ([0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]+)[^)]*\\)")
  string(REPLACE "${CMAKE_MATCH_1}" "<commit>" out "${out}")
endif()
string(REGEX REPLACE "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9](\\.[0-9]+)?Z"
       "<utc>" out "${out}")

if("$ENV{SYNCSCOPE_UPDATE_GOLDEN}" STREQUAL "1")
  file(WRITE "${GOLDEN}" "${out}")
  message("updated ${GOLDEN}")
  return()
endif()
if(NOT EXISTS "${GOLDEN}")
  message(FATAL_ERROR "${GOLDEN} does not exist: SYNCSCOPE_UPDATE_GOLDEN=1 ctest -R golden writes it")
endif()
file(READ "${GOLDEN}" expected)
if(NOT out STREQUAL expected)
  # A readable difference: unified diff of the committed file against this output.
  get_filename_component(name "${GOLDEN}" NAME)
  set(actual "${WORK_DIR}/${name}.actual")
  file(WRITE "${actual}" "${out}")
  find_program(DIFF diff)
  set(d "")
  if(DIFF)
    execute_process(COMMAND "${DIFF}" -u "${GOLDEN}" "${actual}" OUTPUT_VARIABLE d)
  endif()
  message(FATAL_ERROR "golden ${GOLDEN} differs from the output of syncscope ${argv} (written to ${actual});\n"
                      "if the change is intended: SYNCSCOPE_UPDATE_GOLDEN=1 ctest -R golden, then review git diff\n${d}")
endif()
