# Fails unless the static archive ARCHIVE is freestanding: the only symbols it
# needs from outside are memcpy, memset, memmove and memcmp (the core checks
# the FlatBuffer identifier itself, so not even strncmp), and it carries no
# unwind tables or C++ runtime references.
#   cmake -DNM=<nm> -DOBJDUMP=<objdump> -DARCHIVE=<lib.a> -P check_freestanding.cmake
set(allowed memcpy memset memmove memcmp)

function(archive_symbols out)
  execute_process(COMMAND ${NM} --format=posix ${ARGN} ${ARCHIVE}
                  OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} failed on ${ARCHIVE}")
  endif()
  string(REGEX MATCHALL "(^|\n)[^ \n\\[]+ [A-Za-z]" entries "${listing}")
  set(names)
  foreach(entry IN LISTS entries)
    string(REGEX REPLACE "^\n?([^ ]+) .*" "\\1" name "${entry}")
    list(APPEND names ${name})
  endforeach()
  list(REMOVE_DUPLICATES names)
  set(${out} ${names} PARENT_SCOPE)
endfunction()

archive_symbols(undefined --undefined-only)
archive_symbols(defined --defined-only)
list(REMOVE_ITEM undefined ${defined} ${allowed})
if(undefined)
  list(JOIN undefined "\n  " report)
  message(FATAL_ERROR "${ARCHIVE} needs symbols a freestanding build lacks:\n  ${report}")
endif()

execute_process(COMMAND ${OBJDUMP} -h ${ARCHIVE} OUTPUT_VARIABLE sections RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${OBJDUMP} failed on ${ARCHIVE}")
endif()
foreach(section .eh_frame .gcc_except_table)
  string(FIND "${sections}" " ${section} " at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "${ARCHIVE} has a ${section} section (unwind tables)")
  endif()
endforeach()
message(STATUS "${ARCHIVE}: freestanding")
