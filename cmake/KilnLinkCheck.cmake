# Layering checks on link lists (docs/DESIGN.md, section 2).

# kiln_link_entries(OUT LIBS): the libraries of the link list LIBS, as a list
# in OUT. Generator expressions that only say where or how a library is
# linked ($<BUILD_INTERFACE:x>, $<INSTALL_INTERFACE:x>, $<LINK_ONLY:x>) are
# looked through; any other one stays as it is, since what it links cannot be
# told at configure time. ::@(directory) and ::@, which bracket what another
# directory linked (CMP0079), are dropped.
function(kiln_link_entries out libs)
  set(entries)
  foreach(entry IN LISTS libs)
    set(lib "${entry}")
    while(lib MATCHES "^\\$<(BUILD_INTERFACE|INSTALL_INTERFACE|LINK_ONLY):(.*)>$")
      set(lib "${CMAKE_MATCH_2}")
    endwhile()
    if(NOT lib STREQUAL "" AND NOT lib MATCHES "^::@")
      list(APPEND entries "${lib}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES entries)
  set(${out} "${entries}" PARENT_SCOPE)
endfunction()

# kiln_check_link_list(WHAT LIBS ALLOWED...) fails with FATAL_ERROR naming
# every library of the link list LIBS that is not one of ALLOWED. Plain list
# code, so that `cmake -P` can run it (tests/unit/link_check_test.cmake).
function(kiln_check_link_list what libs)
  set(allowed ${ARGN})
  kiln_link_entries(entries "${libs}")
  set(offending)
  foreach(lib IN LISTS entries)
    if(NOT lib IN_LIST allowed)
      list(APPEND offending "${lib}")
    endif()
  endforeach()
  if(offending)
    list(JOIN offending ", " offending)
    list(JOIN allowed ", " allowed)
    message(FATAL_ERROR "${what} links ${offending}: it may link only ${allowed}")
  endif()
endfunction()

# kiln_target_links(OUT TARGET): TARGET's own link libraries and the ones it
# passes on to its users, as recorded (a raw link list).
function(kiln_target_links out target)
  set(all)
  foreach(property LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
    get_target_property(libs ${target} ${property})
    if(libs)
      list(APPEND all ${libs})
    endif()
  endforeach()
  set(${out} "${all}" PARENT_SCOPE)
endfunction()

# kiln_check_target_links(TARGET ALLOWED...): TARGET links ALLOWED only.
function(kiln_check_target_links target)
  kiln_target_links(libs ${target})
  kiln_check_link_list(${target} "${libs}" ${ARGN})
endfunction()

# kiln_check_directory_links(DIR WHY DENIED...): no target defined in DIR or
# below links one of DENIED itself; else FATAL_ERROR naming each such link,
# then WHY.
function(kiln_check_directory_links dir why)
  set(denied ${ARGN})
  set(dirs ${dir})
  set(offending)
  while(dirs)
    list(POP_FRONT dirs d)
    get_property(subdirs DIRECTORY ${d} PROPERTY SUBDIRECTORIES)
    list(APPEND dirs ${subdirs})
    get_property(targets DIRECTORY ${d} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target IN LISTS targets)
      kiln_target_links(libs ${target})
      kiln_link_entries(entries "${libs}")
      foreach(lib IN LISTS entries)
        if(lib IN_LIST denied)
          list(APPEND offending "${target} links ${lib}")
        endif()
      endforeach()
    endforeach()
  endwhile()
  if(offending)
    list(JOIN offending ", " offending)
    message(FATAL_ERROR "${offending}: ${why}")
  endif()
endfunction()
