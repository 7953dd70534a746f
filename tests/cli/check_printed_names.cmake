# Issue 39: every name printed to a terminal or log goes through core/text.hpp printable().
# Greps the printers (reports/src/*printers*.cpp, the critical-path table, the sweep and rank
# job runners, the CLI commands) for a line that formats or streams a name-like field
# (.name, .source, .cause, .where, .what, .reason, .description, .gpu_name, .critical_step, a
# warning or note) without printable() on that line, and every csv.row(...) line for a cell
# that may hold a name (name, metric, value, where, what, a name-like field) not inside
# printable(). A line that prints such a field that is
# not user text (an enum's name, a label we made from [A-Za-z0-9._-]) says so with
# "printed-name-ok". Run: cmake -DSOURCE_DIR=<repo> -P check_printed_names.cmake
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "give -DSOURCE_DIR=<repository root>")
endif()
file(GLOB files
  ${SOURCE_DIR}/reports/src/*printers*.cpp
  ${SOURCE_DIR}/reports/src/analysis_critical_path.cpp
  ${SOURCE_DIR}/cluster/src/sweep*.cpp
  ${SOURCE_DIR}/cluster/src/rank_jobs.cpp
  ${SOURCE_DIR}/cli/cmd_*.cpp)
set(bad "")
set(checked 0)
foreach(f IN LISTS files)
  file(STRINGS ${f} lines)
  set(n 0)
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    if(line MATCHES "^[ ]*//" OR line MATCHES "printed-name-ok")
      continue()
    endif()
    # A CSV row (its first line is checked): every cell that may hold a name (a name,
    # metric or value variable, a name-like field) goes through printable(), as in a table.
    if(line MATCHES "csv\\.row\\(")
      math(EXPR checked "${checked} + 1")
      string(REGEX REPLACE "printable\\([^()]*(\\([^()]*\\))?[^()]*\\)" "ESCAPED" cells "${line}")
      if(cells MATCHES "[{,] *(name|metric|value|where|what|cause|reason|[a-z_]+\\.(name|source|cause|where|what|reason|description|gpu_name|rule))[,}]")
        file(RELATIVE_PATH rel ${SOURCE_DIR} ${f})
        string(APPEND bad "  ${rel}:${n}: ${line}\n")
      endif()
      continue()
    endif()
    # Only lines that print: a stream insertion, fmt::format, printf, or text appended.
    if(NOT line MATCHES "(<<|fmt::format|printf|\\+= \"|\\+ \"\\\\n\")")
      continue()
    endif()
    if(line MATCHES "\\[\"")
      continue()
    endif()
    if(line MATCHES "[a-z_]\\.(name|source|cause|where|what|reason|description|gpu_name|critical_step|simulated_source|measured_source)[^a-z_(]"
       OR line MATCHES "\\+ (w|n|o|why|line) \\+"
       OR line MATCHES "\\((w|n|o)\\)\\.c_str|, (w|n)\\.c_str"
       OR line MATCHES "\\{\\}[^\"]*\", (e|n|w|o|d|m|p|line)\\)")
      math(EXPR checked "${checked} + 1")
      if(NOT line MATCHES "printable\\(")
        file(RELATIVE_PATH rel ${SOURCE_DIR} ${f})
        string(APPEND bad "  ${rel}:${n}: ${line}\n")
      endif()
    endif()
  endforeach()
endforeach()
if(checked EQUAL 0)
  message(FATAL_ERROR "no printing line matched: the check has lost its files")
endif()
if(bad)
  message(FATAL_ERROR "names printed without printable() (core/text.hpp):\n${bad}")
endif()
message(STATUS "${checked} name-printing lines, each escaped")
