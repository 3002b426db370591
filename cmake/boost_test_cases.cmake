# Writes the CTest tests of one Boost.Test executable; tests/CMakeLists.txt runs it after each
# build of one (as gtest_discover_tests does for GoogleTest). The cases without the label
# `needs_data` are one test named after the executable; each case with it is a test of its
# own, <executable>/<suite>/<case>, so that a case skipped for missing test data
# (TROUPE_TESTS_OFFLINE=1) or a missing GPU is reported by CTest by name.
# -D EXE=<path> NAME=<executable name> OUT=<file to write> WORKDIR=<dir> TIMEOUT=<seconds>
execute_process(COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=0 ${EXE} --list_content=DOT
                OUTPUT_VARIABLE listing ERROR_VARIABLE listing RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} --list_content=DOT failed (${rc}):\n${listing}")
endif()

# One DOT statement a line: `tuN[...,label="name|file(line)|labels: @a @b"];` and `tuP -> tuC;`.
# Semicolons and brackets would split or group CMake list items: drop or replace them.
string(REPLACE ";" "" listing "${listing}")
string(REPLACE "[" "<" listing "${listing}")
string(REPLACE "]" ">" listing "${listing}")
string(REPLACE "\n" ";" lines "${listing}")
set(master "")
set(ids "")
foreach(line IN LISTS lines)
  if(line MATCHES "^tu([0-9]+)<.*label=\"([^|\"]*)")
    set(id ${CMAKE_MATCH_1})
    set(name_${id} "${CMAKE_MATCH_2}")
    if(line MATCHES "peripheries=2")
      set(master ${id})
    else()
      list(APPEND ids ${id})
    endif()
    set(data_${id} FALSE)
    if(line MATCHES "labels:[^\"]*@needs_data")
      set(data_${id} TRUE)
    endif()
  elseif(line MATCHES "^tu([0-9]+) -> tu([0-9]+)$")
    set(parent_${CMAKE_MATCH_2} ${CMAKE_MATCH_1})
    set(has_children_${CMAKE_MATCH_1} TRUE)
  endif()
endforeach()
if(master STREQUAL "" OR ids STREQUAL "")
  message(FATAL_ERROR "no test cases in the listing of ${EXE}:\n${listing}")
endif()

set(common "--log_level=test_suite")
set(script "# Written by cmake/boost_test_cases.cmake after building ${NAME}.\n")
set(others 0)
foreach(id IN LISTS ids)
  if(has_children_${id})
    continue() # a suite
  endif()
  if(NOT data_${id})
    math(EXPR others "${others} + 1")
    continue()
  endif()
  # Boost logs every case the filter leaves out as skipped ("because disabled"): the
  # skip that counts is this case's own.
  set(path "${name_${id}}")
  set(p ${parent_${id}})
  while(NOT p STREQUAL master)
    set(path "${name_${p}}/${path}")
    set(p ${parent_${p}})
  endwhile()
  string(APPEND script
         "add_test([=[${NAME}/${path}]=] [=[${EXE}]=] ${common} [=[--run_test=${path}]=])\n"
         "set_tests_properties([=[${NAME}/${path}]=] PROPERTIES WORKING_DIRECTORY [=[${WORKDIR}]=] "
         "TIMEOUT ${TIMEOUT} SKIP_REGULAR_EXPRESSION [=[Test case \"${path}\" is skipped because]=])\n")
endforeach()
if(others GREATER 0)
  string(APPEND script
         "add_test([=[${NAME}]=] [=[${EXE}]=] ${common} [=[--run_test=!@needs_data]=])\n"
         "set_tests_properties([=[${NAME}]=] PROPERTIES WORKING_DIRECTORY [=[${WORKDIR}]=] TIMEOUT ${TIMEOUT})\n")
endif()
file(WRITE "${OUT}" "${script}")
