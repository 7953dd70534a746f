# Writes OUT with the current git commit, only when it changed, so every build (not only
# every configure) stamps outputs with the commit it was built from. A tree copied without
# .git (the GPU machine) is told its commit through the SYNCSCOPE_COMMIT environment variable.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY "${SOURCE_DIR}"
  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(rc EQUAL 0 AND commit)
  execute_process(COMMAND git diff --quiet HEAD WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE dirty ERROR_QUIET)
  if(NOT dirty EQUAL 0)
    string(APPEND commit "+dirty")
  endif()
elseif(DEFINED ENV{SYNCSCOPE_COMMIT})
  set(commit "$ENV{SYNCSCOPE_COMMIT}")
else()
  set(commit unknown)
endif()
set(text "#define SYNCSCOPE_BUILD_COMMIT \"${commit}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
