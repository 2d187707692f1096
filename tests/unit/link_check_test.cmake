# The layering check (cmake/KilnLinkCheck.cmake) that fails the configure
# when the runtime core links more than kiln_abi and kiln_schema:
#   cmake -DKILN_SOURCE_DIR=<checkout> -P link_check_test.cmake
# runs it in a child `cmake -P` on link lists as CMake records them, and
# fails unless each good list passes and each bad one fails naming exactly
# its offenders. With -DLIBS=<list> it is that child.
cmake_minimum_required(VERSION 3.20) # the project's policies, IN_LIST among them
include(${KILN_SOURCE_DIR}/cmake/KilnLinkCheck.cmake)
if(DEFINED LIBS)
  string(REPLACE "|" ";" LIBS "${LIBS}")
  kiln_check_link_list(kiln_rt_core "${LIBS}" kiln_abi kiln_schema)
  return()
endif()

# check(LIBS EXPECTED): LIBS ('|' between entries) passes when EXPECTED is
# empty, else fails with the message EXPECTED.
function(check libs expected)
  execute_process(COMMAND ${CMAKE_COMMAND} -DKILN_SOURCE_DIR=${KILN_SOURCE_DIR} -DLIBS=${libs}
                          -P ${CMAKE_CURRENT_FUNCTION_LIST_FILE}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REGEX REPLACE "[ \t\r\n]+" " " err "${err}") # message() wraps its text
  if(expected STREQUAL "")
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "'${libs}' should pass, failed (${rc}): ${err}")
    endif()
  elseif(rc EQUAL 0)
    message(FATAL_ERROR "'${libs}' should fail with '${expected}', passed")
  else()
    string(FIND "${err}" "${expected}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "'${libs}' should fail with '${expected}', said: ${err}")
    endif()
  endif()
  message(STATUS "ok: '${libs}'")
endfunction()

set(only "it may link only kiln_abi, kiln_schema")
# The core's own lists: LINK_LIBRARIES, INTERFACE_LINK_LIBRARIES, and what
# another directory's target_link_libraries leaves around its entries.
check("kiln_abi|$<BUILD_INTERFACE:kiln_schema>" "")
check("kiln_abi|$<LINK_ONLY:$<BUILD_INTERFACE:kiln_schema>>" "")
check("::@(0x1234)|kiln_abi|::@" "")
check("" "")
# Anything else, however it is wrapped.
check("kiln_abi|kiln_cmodel" "kiln_rt_core links kiln_cmodel: ${only}")
check("kiln_abi|$<LINK_ONLY:$<BUILD_INTERFACE:kiln_chip>>|Threads::Threads"
      "kiln_rt_core links kiln_chip, Threads::Threads: ${only}")
check("::@(0x1234)|kiln_host|::@|kiln_host" "kiln_rt_core links kiln_host: ${only}")
check("-lstdc++" "kiln_rt_core links -lstdc++: ${only}")
# A condition cannot be judged at configure time: the entry is an offender.
check("$<$<CONFIG:Debug>:kiln_abi>" "kiln_rt_core links $<$<CONFIG:Debug>:kiln_abi>: ${only}")
