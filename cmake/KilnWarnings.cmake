# Warnings for kiln's own targets (not for generated or third-party code).
function(kiln_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  if(KILN_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
