# Writes OUTPUT, a C++ source defining `extern const char NAME[]` in namespace NAMESPACE
# with the bytes of INPUT, so a text resource (the report's CSS) is compiled in and the
# report stays one self-contained file. Run with cmake -P at build time:
#   cmake -DINPUT=... -DOUTPUT=... -DNAME=... -DNAMESPACE=... -P embed_text.cmake
file(READ "${INPUT}" text)
# A raw string literal holds the text as is; its delimiter must not occur in the text.
set(delim "syncscope_res")  # at most 16 characters (C++ raw strings)
string(FIND "${text}" ")${delim}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT}: contains )${delim}\" and cannot be embedded as a raw string")
endif()
# The leading newline keeps the first line of the resource on a line of its own.
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by reports/cmake/embed_text.cmake: edit that file, not this one.\n"
  "namespace ${NAMESPACE} {\n"
  "extern const char ${NAME}[];\n"
  "const char ${NAME}[] = R\"${delim}(\n${text})${delim}\";\n"
  "}  // namespace ${NAMESPACE}\n")
# Replace only when changed, so an unchanged resource compiles nothing again.
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
