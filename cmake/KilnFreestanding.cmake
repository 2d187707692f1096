# Flags for the freestanding runtime (core and board driver): no heap, no
# exceptions, no RTTI, no unwind tables, no guarded statics and no stack
# protector, so the objects need nothing but mem* from the firmware. The
# runtime_freestanding tests check the archives' undefined symbols.
function(kiln_target_freestanding target)
  target_compile_options(${target} PRIVATE
    -ffreestanding -fno-exceptions -fno-rtti -fno-asynchronous-unwind-tables
    -fno-unwind-tables -fno-threadsafe-statics -fno-stack-protector)
  # FlatBuffers' asserts would call into libc; its verifier reports through
  # return values (see runtime/core/bmodel_fb.h for FLATBUFFERS_ASSERT).
  target_compile_definitions(${target} PRIVATE NDEBUG)
endfunction()
