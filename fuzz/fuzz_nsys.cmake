# The Nsight Systems SQLite reader's fuzz target (included by fuzz/CMakeLists.txt): the
# reader's library gets the same instrumentation as the others; SQLite itself (Debian's) is
# not instrumented, so coverage guides the search through our code only.
target_compile_options(syncscope_nsys PRIVATE ${_fuzz_instrument})
syncscope_add_fuzzer(fuzz_nsys_sqlite SOURCES fuzz_nsys_sqlite.cpp LIBS syncscope_io)
find_package(SQLite3 REQUIRED)
target_link_libraries(fuzz_nsys_sqlite PRIVATE syncscope_nsys syncscope_analysis SQLite::SQLite3)
target_compile_definitions(fuzz_nsys_sqlite PRIVATE
  SYNCSCOPE_NSYS_FUZZ_SQL="${PROJECT_SOURCE_DIR}/tests/fixtures/nsys/nsys_2024_6.sql")
