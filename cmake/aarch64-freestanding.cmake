# Toolchain file: kiln's freestanding runtime for an AArch64 board, built with
# Debian's g++-aarch64-linux-gnu and no hosted libraries. Only the target's
# compiler is used; its C library and libstdc++ are never linked.
#   cmake -G Ninja -S . -B build-fw -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-freestanding.cmake
# builds the core and the board driver (-Os) for `cmake --install` and
# find_package(KilnRuntime) in firmware (docs/runtime.md).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(KILN_CROSS_PREFIX aarch64-linux-gnu- CACHE STRING "Prefix of the cross tools")
set(CMAKE_C_COMPILER ${KILN_CROSS_PREFIX}gcc)
set(CMAKE_CXX_COMPILER ${KILN_CROSS_PREFIX}g++)
set(CMAKE_ASM_COMPILER ${KILN_CROSS_PREFIX}gcc)

# There is no C library to link a test program against.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

# Bare-metal code: absolute addresses (no PIC/PIE), no stack protector or
# unwind tables, and no out-of-line atomics (they live in libgcc).
# Sections per function and object let the image's linker drop what it does
# not call.
set(kiln_cross_flags "-ffreestanding -fno-pic -fno-pie -fno-stack-protector \
-fno-asynchronous-unwind-tables -fno-unwind-tables -mno-outline-atomics \
-ffunction-sections -fdata-sections")
set(CMAKE_C_FLAGS_INIT "${kiln_cross_flags}")
set(CMAKE_CXX_FLAGS_INIT "${kiln_cross_flags} -fno-exceptions -fno-rtti -fno-threadsafe-statics")
set(CMAKE_ASM_FLAGS_INIT "-fno-pic")
# Executables are bare-metal images: no start files, no libc, no libgcc.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-nostdlib -static -no-pie -Wl,--gc-sections")
