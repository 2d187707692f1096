# The runtime_cross_baremetal test (and `tools/dev bench`):
#   1. cross-builds the runtime (core + board driver) from SOURCE with
#      cmake/aarch64-freestanding.cmake and installs it into OUT/prefix;
#   2. links the bare-metal image of tests/baremetal against the installed
#      KilnRuntime package, with only mem.c's memcpy/memset/memmove/memcmp;
#   3. checks the image (no undefined or weak symbols, no unwind tables or
#      static constructors) and the size budget: .text of core + driver
#      (code and read-only data, `size` Berkeley "text") at most BUDGET bytes.
# Writes OUT/sizes.txt.
#   cmake -DSOURCE=<repo> -DOUT=<dir> [-DBUDGET=49152] [-DGENERATOR=Ninja] -P cross_build.cmake
if(NOT BUDGET)
  set(BUDGET 49152)
endif()
if(NOT GENERATOR)
  set(GENERATOR Ninja)
endif()
set(prefix aarch64-linux-gnu-)
find_program(CROSS_CXX ${prefix}g++)
find_program(CROSS_SIZE ${prefix}size)
find_program(CROSS_NM ${prefix}nm)
find_program(CROSS_OBJDUMP ${prefix}objdump)
if(NOT CROSS_CXX OR NOT CROSS_SIZE OR NOT CROSS_NM OR NOT CROSS_OBJDUMP)
  message("SKIPPED: install g++-aarch64-linux-gnu and binutils-aarch64-linux-gnu (tools/dev does)")
  return()
endif()

set(toolchain ${SOURCE}/cmake/aarch64-freestanding.cmake)
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed:\n${out}")
  endif()
endfunction()

file(REMOVE_RECURSE ${OUT}/prefix)
run("configuring the cross runtime" ${CMAKE_COMMAND} -G "${GENERATOR}" -S ${SOURCE} -B ${OUT}/runtime
    -DCMAKE_TOOLCHAIN_FILE=${toolchain} -DKILN_WERROR=ON -DCMAKE_INSTALL_PREFIX=${OUT}/prefix)
run("building the cross runtime" ${CMAKE_COMMAND} --build ${OUT}/runtime)
run("installing the cross runtime" ${CMAKE_COMMAND} --install ${OUT}/runtime)
run("configuring the bare-metal image" ${CMAKE_COMMAND} -G "${GENERATOR}" -S ${SOURCE}/tests/baremetal
    -B ${OUT}/image -DCMAKE_TOOLCHAIN_FILE=${toolchain} -DCMAKE_PREFIX_PATH=${OUT}/prefix
    -DCMAKE_BUILD_TYPE=MinSizeRel)
run("linking the bare-metal image" ${CMAKE_COMMAND} --build ${OUT}/image)
set(image ${OUT}/image/kiln_baremetal.elf)

# A weak undefined reference links silently as address 0.
execute_process(COMMAND ${CROSS_NM} --undefined-only ${image} OUTPUT_VARIABLE undefined)
if(NOT undefined STREQUAL "")
  message(FATAL_ERROR "the image has unresolved symbols:\n${undefined}")
endif()
execute_process(COMMAND ${CROSS_OBJDUMP} -h ${image} OUTPUT_VARIABLE sections)
foreach(section .eh_frame .gcc_except_table .init_array .ctors)
  string(FIND "${sections}" " ${section} " at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "the image has a ${section} section, which _start does not support")
  endif()
endforeach()

# Berkeley totals (text = code + read-only data) of an archive or an image.
function(sizes file out_text out_data out_bss)
  execute_process(COMMAND ${CROSS_SIZE} -t ${file} OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
  string(REGEX MATCH "\n *([0-9]+)[ \t]+([0-9]+)[ \t]+([0-9]+)[ \t]+[0-9]+[ \t]+[0-9a-f]+[ \t]+\\(TOTALS\\)"
         row "${listing}")
  if(NOT rc EQUAL 0 OR NOT row)
    # A single object (the image) has no TOTALS line: take its only row.
    string(REGEX MATCH "\n *([0-9]+)[ \t]+([0-9]+)[ \t]+([0-9]+)" row "${listing}")
  endif()
  if(NOT row)
    message(FATAL_ERROR "cannot read the sizes of ${file}:\n${listing}")
  endif()
  set(${out_text} ${CMAKE_MATCH_1} PARENT_SCOPE)
  set(${out_data} ${CMAKE_MATCH_2} PARENT_SCOPE)
  set(${out_bss} ${CMAKE_MATCH_3} PARENT_SCOPE)
endfunction()

set(lib ${OUT}/prefix/lib)
sizes(${lib}/libkiln_rt_core.a core_text core_data core_bss)
sizes(${lib}/libkiln_board.a board_text board_data board_bss)
sizes(${image} image_text image_data image_bss)
math(EXPR total_text "${core_text} + ${board_text}")
math(EXPR total_data "${core_data} + ${board_data}")
math(EXPR total_bss "${core_bss} + ${board_bss}")

function(row out name text data bss)
  string(LENGTH "${name}" n)
  math(EXPR pad "34 - ${n}")
  string(REPEAT " " ${pad} spaces)
  set(${out} "${${out}}  ${name}${spaces}${text}\t${data}\t${bss}\n" PARENT_SCOPE)
endfunction()
set(report "aarch64 -Os freestanding runtime (bytes; text = code + read-only data)\n")
row(report "" ".text" ".data" ".bss")
row(report "core (libkiln_rt_core.a)" ${core_text} ${core_data} ${core_bss})
row(report "board driver (libkiln_board.a)" ${board_text} ${board_data} ${board_bss})
row(report "core + board driver" ${total_text} ${total_data} ${total_bss})
row(report "bare-metal image (linked)" ${image_text} ${image_data} ${image_bss})
string(APPEND report "  budget for core + board .text: ${BUDGET}\n")
file(WRITE ${OUT}/sizes.txt "${report}")
message("${report}")
if(total_text GREATER BUDGET)
  message(FATAL_ERROR "core + board driver .text is ${total_text} bytes, over the budget of ${BUDGET}")
endif()
