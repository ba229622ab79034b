/* Startup for pfvm's firmware tests on QEMU's mps2-an386 (Cortex-M4F) and
 * mps2-an500 (Cortex-M7): vector table, reset (copy .data, zero .bss,
 * enable the FPU, paint the stack), SysTick as an instruction counter,
 * semihosting output and exit, and _sbrk for newlib-nano's malloc.
 *
 * Instruction counting: QEMU runs with `-icount shift=0`, so its virtual
 * clock advances exactly 1 ns per guest instruction. SysTick, clocked from
 * the processor clock (CLKSOURCE=1), which QEMU's mps2 boards run at
 * SYSCLK = 25 MHz, then counts one tick per 40 instructions. It is set to
 * wrap every 2^24 ticks with an interrupt that counts the wraps, so
 * mcu_ticks() is a 64-bit tick count; instructions = ticks * 40 (to within
 * 40). main.c checks the factor on a loop of known length at every start. */
#include <stddef.h>
#include <stdint.h>
#include <errno.h>

extern uint32_t __etext, __data_start__, __data_end__, __bss_start__, __bss_end__;
extern uint32_t __stack_top, __stack_limit, __heap_start;
int main(void);
void mcu_exit(int code);

#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define SCB_CPACR (*(volatile uint32_t *)0xE000ED88u)
#define STACK_PAINT 0xC0FFEE55u

static volatile uint32_t systick_wraps;

/* ---- semihosting ---------------------------------------------------------- */

static int semihost(int op, const void *arg)
{
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void mcu_puts(const char *s)
{
    semihost(0x04, s); /* SYS_WRITE0 */
}

void mcu_exit(int code)
{
    /* SYS_EXIT: ADP_Stopped_ApplicationExit makes QEMU exit with status 0,
     * ADP_Stopped_RunTimeErrorUnknown with status 1 */
    semihost(0x18, (const void *)(uintptr_t)(code == 0 ? 0x20026u : 0x20023u));
    for (;;)
        ;
}

/* ---- instruction counter ---------------------------------------------------- */

void SysTick_Handler(void)
{
    systick_wraps++;
}

uint64_t mcu_ticks(void)
{
    uint32_t w, v;
    do { /* a wrap between the two reads makes the count move: read again */
        w = systick_wraps;
        v = SYST_CVR;
    } while (w != systick_wraps);
    return ((uint64_t)w << 24) + (0xFFFFFFu - (v & 0xFFFFFFu));
}

/* ---- stack and heap ------------------------------------------------------------ */

/* Bytes of the reserved stack region ever written (its high-water mark). */
size_t mcu_stack_used(void)
{
    const uint32_t *p = &__stack_limit;
    while (p < &__stack_top && *p == STACK_PAINT)
        p++;
    return (size_t)((const char *)&__stack_top - (const char *)p);
}

/* Paints the stack region below the caller's frame again, so that
 * mcu_stack_used() afterwards measures what runs after this call. */
void __attribute__((noinline)) mcu_stack_repaint(void)
{
    uint32_t *p;
    register uint32_t *sp __asm__("sp");
    for (p = &__stack_limit; p < sp - 16; p++)
        *p = STACK_PAINT;
}

static char *heap_brk;
size_t mcu_heap_brk_max; /* bytes the heap ever took from RAM (malloc's footprint) */

void *_sbrk(ptrdiff_t incr)
{
    char *prev;
    if (!heap_brk)
        heap_brk = (char *)&__heap_start;
    if (heap_brk + incr > (char *)&__stack_limit || heap_brk + incr < (char *)&__heap_start) {
        errno = ENOMEM;
        return (void *)-1;
    }
    prev = heap_brk;
    heap_brk += incr;
    if ((size_t)(heap_brk - (char *)&__heap_start) > mcu_heap_brk_max)
        mcu_heap_brk_max = (size_t)(heap_brk - (char *)&__heap_start);
    return prev;
}

/* ---- reset and vectors -------------------------------------------------------- */

void Reset_Handler(void)
{
    uint32_t *src = &__etext, *dst = &__data_start__, *p;
    register uint32_t *sp __asm__("sp");
    while (dst < &__data_end__)
        *dst++ = *src++;
    for (dst = &__bss_start__; dst < &__bss_end__;)
        *dst++ = 0;
    /* paint the stack region below the current frame */
    for (p = &__stack_limit; p < sp - 64; p++)
        *p = STACK_PAINT;
    SCB_CPACR |= 0xFu << 20; /* CP10, CP11: full access to the FPU */
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    SYST_RVR = 0xFFFFFFu;
    SYST_CVR = 0;
    SYST_CSR = 7u; /* processor clock, interrupt, enable */
    while (SYST_CVR == 0) /* wait for the first reload, then start counting */
        ;
    systick_wraps = 0;
    mcu_exit(main());
}

static void Fault_Handler(void)
{
    mcu_puts("FAULT: hard fault\n");
    mcu_exit(1);
}

__attribute__((section(".isr_vector"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))(uintptr_t)&__stack_top,
    Reset_Handler,
    Fault_Handler, /* NMI */
    Fault_Handler, /* HardFault */
    Fault_Handler, /* MemManage */
    Fault_Handler, /* BusFault */
    Fault_Handler, /* UsageFault */
    0, 0, 0, 0,
    Fault_Handler, /* SVC */
    Fault_Handler, /* DebugMon */
    0,
    Fault_Handler, /* PendSV */
    SysTick_Handler,
};
