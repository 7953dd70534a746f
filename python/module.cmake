# The module itself; included by python/CMakeLists.txt unless SYNCSCOPE_ENABLE_PYTHON is OFF.

# Debian's python3-pybind11, python3-torch and python3-pandas install for /usr/bin/python3;
# a pyenv or conda python3 earlier on PATH would find none of them. Override with
# -DPython3_EXECUTABLE=/path/to/python3.
if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "Python interpreter the syncscope module is built for")
endif()

set(_required "")
if(SYNCSCOPE_ENABLE_PYTHON STREQUAL "ON")
  set(_required REQUIRED)
endif()
find_package(Python3 3.8 COMPONENTS Interpreter Development.Module ${_required})
if(Python3_FOUND AND NOT DEFINED pybind11_DIR)
  # pybind11 installed as a Python package (Debian's python3-pybind11, or pip) knows where
  # its CMake files are.
  execute_process(COMMAND ${Python3_EXECUTABLE} -c "import pybind11; print(pybind11.get_cmake_dir())"
                  OUTPUT_VARIABLE _pybind11_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
                  RESULT_VARIABLE _pybind11_rc)
  if(_pybind11_rc EQUAL 0 AND EXISTS "${_pybind11_dir}")
    set(pybind11_DIR "${_pybind11_dir}" CACHE PATH "pybind11's CMake package directory")
  endif()
endif()
if(Python3_FOUND)
  # With Python3 already found, pybind11 uses it (its "new" FindPython mode) rather than
  # searching PATH again.
  find_package(pybind11 2.6 CONFIG ${_required})
endif()
if(NOT Python3_FOUND OR NOT pybind11_FOUND)
  string(CONCAT SYNCSCOPE_PYTHON_SKIP_REASON "no Python module in this build: python3 with its headers and "
               "pybind11 were not found (apt-get install python3-dev python3-pybind11)")
  message(STATUS "syncscope: ${SYNCSCOPE_PYTHON_SKIP_REASON}")
  return()
endif()
message(STATUS "syncscope: Python module for ${Python3_EXECUTABLE} (${Python3_VERSION}), pybind11 ${pybind11_VERSION}")

# The package directory in the build tree: the .py files copied, the extension built beside them.
set(SYNCSCOPE_PYTHON_BUILD_DIR ${CMAKE_CURRENT_BINARY_DIR} CACHE INTERNAL "")
set(_pkg_out ${CMAKE_CURRENT_BINARY_DIR}/syncscope)
file(GLOB _py_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/syncscope/*.py)
list(APPEND _py_sources ${CMAKE_CURRENT_SOURCE_DIR}/syncscope/py.typed)  # PEP 561: the package has type hints
list(APPEND _py_sources ${CMAKE_CURRENT_SOURCE_DIR}/syncscope/_core.pyi)  # the extension's signatures, for mypy
set(_py_copied "")
foreach(_src ${_py_sources})
  get_filename_component(_name ${_src} NAME)
  add_custom_command(OUTPUT ${_pkg_out}/${_name}
    COMMAND ${CMAKE_COMMAND} -E copy_if_different ${_src} ${_pkg_out}/${_name}
    DEPENDS ${_src} VERBATIM)
  list(APPEND _py_copied ${_pkg_out}/${_name})
endforeach()

pybind11_add_module(syncscope_python_core MODULE src/core_module.cpp)
set_target_properties(syncscope_python_core PROPERTIES
  OUTPUT_NAME _core
  LIBRARY_OUTPUT_DIRECTORY ${_pkg_out}
  # Only the module's init function is exported; the static libraries inside stay private.
  CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
target_link_libraries(syncscope_python_core PRIVATE
  syncscope_core syncscope_io syncscope_api syncscope_fixes_shipped
  syncscope_warnings)
add_custom_target(syncscope_python_package ALL DEPENDS ${_py_copied})
add_dependencies(syncscope_python_core syncscope_python_package)
# One name for "the whole module": `cmake --build build/ci --target syncscope_python`.
add_custom_target(syncscope_python DEPENDS syncscope_python_core syncscope_python_package)

# Install next to the interpreter's other packages (e.g. /usr/local/lib/python3.11/dist-packages
# for Debian's /usr/bin/python3, <venv>/lib/python3.X/site-packages for a venv's python).
execute_process(COMMAND ${Python3_EXECUTABLE} -c "import sysconfig; print(sysconfig.get_path('platlib'))"
                OUTPUT_VARIABLE _platlib OUTPUT_STRIP_TRAILING_WHITESPACE)
set(SYNCSCOPE_PYTHON_INSTALL_DIR "${_platlib}" CACHE PATH
    "Where `cmake --install --component python` puts the syncscope package (default: the interpreter's platlib)")
install(TARGETS syncscope_python_core LIBRARY DESTINATION ${SYNCSCOPE_PYTHON_INSTALL_DIR}/syncscope
        COMPONENT python EXCLUDE_FROM_ALL)
install(FILES ${_py_sources} DESTINATION ${SYNCSCOPE_PYTHON_INSTALL_DIR}/syncscope COMPONENT python
        EXCLUDE_FROM_ALL)
