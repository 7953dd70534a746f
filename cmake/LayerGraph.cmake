# Writes the project's library graph to ${PROJECT_BINARY_DIR}/layers.json at configure time,
# for scripts/check-layers (ctest `layers`): every target of the project but the tests' (the
# libraries, the executable, the backend and Python modules, benchmarks), with its source
# directory, its source files, its public include directories and its link dependencies
# (LINK_LIBRARIES and INTERFACE_LINK_LIBRARIES, PUBLIC and PRIVATE alike, the project's targets only;
# $<BUILD_INTERFACE:x> and $<LINK_ONLY:x> unwrapped, other generator expressions dropped).
# The check then compares each target's #includes with what it links and draws the folder
# graph. Called once, at the end of the top-level CMakeLists.txt, when every target exists.

# The targets defined in `dir` and its subdirectories.
function(_syncscope_collect_targets dir out)
  get_property(_targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(_subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(_sub IN LISTS _subdirs)
    _syncscope_collect_targets("${_sub}" _more)
    list(APPEND _targets ${_more})
  endforeach()
  set(${out} ${_targets} PARENT_SCOPE)
endfunction()

# A CMake list as a JSON array of strings (paths and target names: no quotes or backslashes
# in ours; a value with either is dropped rather than written unescaped).
function(_syncscope_json_array out)
  set(_items "")
  foreach(_v IN LISTS ARGN)
    if(_v MATCHES "[\"\\\\]")
      continue()
    endif()
    list(APPEND _items "\"${_v}\"")
  endforeach()
  list(JOIN _items ", " _joined)
  set(${out} "[${_joined}]" PARENT_SCOPE)
endfunction()

# Names of syncscope targets among link items: generator expressions unwrapped where they
# only mark the build or link side, dropped otherwise; aliases (syncscope::x) resolved.
function(_syncscope_link_names out)
  set(_names "")
  foreach(_item IN LISTS ARGN)
    string(REGEX REPLACE "^\\$<(BUILD_INTERFACE|LINK_ONLY):(.*)>$" "\\2" _item "${_item}")
    if(_item MATCHES "^\\$<|^\\$<INSTALL_INTERFACE")
      continue()
    endif()
    if(NOT TARGET "${_item}")
      continue()
    endif()
    get_target_property(_aliased "${_item}" ALIASED_TARGET)
    if(_aliased)
      set(_item "${_aliased}")
    endif()
    get_target_property(_imported "${_item}" IMPORTED)
    if(NOT _imported AND NOT _item STREQUAL "syncscope_warnings")
      list(APPEND _names "${_item}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _names)
  set(${out} ${_names} PARENT_SCOPE)
endfunction()

function(syncscope_write_layer_graph)
  _syncscope_collect_targets("${PROJECT_SOURCE_DIR}" _all)
  set(tests_root "${PROJECT_SOURCE_DIR}/tests")
  set(_entries "")
  foreach(_t IN LISTS _all)
    get_target_property(_type "${_t}" TYPE)
    get_target_property(_dir "${_t}" SOURCE_DIR)
    cmake_path(IS_PREFIX tests_root "${_dir}" NORMALIZE _is_test)
    # A fix folder's tests (fixes/<name>/tests) are tests too: they drive the fix through the
    # layers above its folder (the run plan in pipeline/, which also holds the measured
    # backend that registers the fix), so as a part of fixes/<name> they would close a cycle.
    cmake_path(RELATIVE_PATH _dir BASE_DIRECTORY "${PROJECT_SOURCE_DIR}" OUTPUT_VARIABLE _rel)
    if(_rel MATCHES "^fixes/[^/]+/tests(/|$)")
      set(_is_test TRUE)
    endif()
    if(_t STREQUAL "syncscope_warnings" OR _type STREQUAL "UTILITY" OR _is_test)
      continue()
    endif()
    set(_sources "")
    if(NOT _type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(_raw "${_t}" SOURCES)
      foreach(_s IN LISTS _raw)
        if(_s MATCHES "^\\$<")
          continue()
        endif()
        cmake_path(ABSOLUTE_PATH _s BASE_DIRECTORY "${_dir}" NORMALIZE OUTPUT_VARIABLE _abs)
        list(APPEND _sources "${_abs}")
      endforeach()
      get_target_property(_links "${_t}" LINK_LIBRARIES)
      if(NOT _links)
        set(_links "")
      endif()
    else()
      set(_links "")
    endif()
    get_target_property(_ilinks "${_t}" INTERFACE_LINK_LIBRARIES)
    if(NOT _ilinks)
      set(_ilinks "")
    endif()
    # What the target links (all of it) and what of that its users see (its interface: the
    # $<LINK_ONLY:...> items of a static library's interface are its private dependencies,
    # whose headers do not reach its users).
    _syncscope_link_names(_deps ${_links} ${_ilinks})
    list(FILTER _ilinks EXCLUDE REGEX "^\\$<LINK_ONLY:")
    _syncscope_link_names(_ideps ${_ilinks})
    get_target_property(_incs "${_t}" INTERFACE_INCLUDE_DIRECTORIES)
    set(_public "")
    foreach(_i IN LISTS _incs)
      string(REGEX REPLACE "^\\$<BUILD_INTERFACE:(.*)>$" "\\1" _i "${_i}")
      if(_i MATCHES "^\\$<" OR NOT _i MATCHES "^/")
        continue()
      endif()
      cmake_path(NORMAL_PATH _i)
      string(REGEX REPLACE "/$" "" _i "${_i}")
      list(APPEND _public "${_i}")
    endforeach()
    # Headers the target implements in a directory it shares (a target property, set beside
    # the target: syncscope_tracer_activities owns syncscope/tracer/activities.hpp).
    get_target_property(_owns "${_t}" SYNCSCOPE_OWNS_HEADERS)
    if(NOT _owns)
      set(_owns "")
    endif()
    _syncscope_json_array(_j_owns ${_owns})
    _syncscope_json_array(_j_sources ${_sources})
    _syncscope_json_array(_j_deps ${_deps})
    _syncscope_json_array(_j_ideps ${_ideps})
    _syncscope_json_array(_j_public ${_public})
    list(APPEND _entries "    {\"name\": \"${_t}\", \"type\": \"${_type}\", \"source_dir\": \"${_dir}\",\n     \"sources\": ${_j_sources},\n     \"links\": ${_j_deps},\n     \"interface_links\": ${_j_ideps},\n     \"public_includes\": ${_j_public},\n     \"owns_headers\": ${_j_owns}}")
  endforeach()
  list(JOIN _entries ",\n" _body)
  file(CONFIGURE OUTPUT "${PROJECT_BINARY_DIR}/layers.json"
    CONTENT "{\n  \"schema_version\": 1,\n  \"source_root\": \"${PROJECT_SOURCE_DIR}\",\n  \"targets\": [\n${_body}\n  ]\n}\n"
    @ONLY)
endfunction()
