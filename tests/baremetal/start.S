// Entry of the bare-metal image at EL1: enable the FP/SIMD unit (the runtime
// uses float for tensor scales), set the stack, clear .bss, call main, halt.
    .section .text.boot, "ax"
    .global _start
    .type _start, %function
_start:
    mov     x0, #(3 << 20)          // CPACR_EL1.FPEN: no FP/SIMD traps
    msr     cpacr_el1, x0
    isb
    ldr     x0, =__stack_top
    mov     sp, x0
    ldr     x0, =__bss_start
    ldr     x1, =__bss_end
1:  cmp     x0, x1
    b.hs    2f
    str     xzr, [x0], #8
    b       1b
2:  bl      main
3:  wfe
    b       3b
    .size _start, . - _start
