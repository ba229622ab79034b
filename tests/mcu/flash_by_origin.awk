# Flash by origin from a firmware image's linker map (ld -Map): code and
# rodata (and .data's initial values, exception tables) of each input
# object that --gc-sections kept, summed per origin. Prints four numbers:
# pfvm (the amalgamated headers' implementation file, tests/mcu/pfvm_impl.c
# in any variant), nanopb's runtime, libc + libm + libgcc, the harness
# (main.c, startup.c). Used by tests/mcu/run.sh (the flash budget) and
# bench/mcu.sh (the tables):
#
#   awk -f tests/mcu/flash_by_origin.awk build/mcu/an386/digits_planned.map
/^Linker script and memory map/ { on = 1; next }
!on { next }
/^[^ ]/ { out = $1 }
function hex(s,    n, i, c) {
    n = 0
    s = tolower(substr(s, 3))
    for (i = 1; i <= length(s); i++) {
        c = index("0123456789abcdef", substr(s, i, 1)) - 1
        n = n * 16 + c
    }
    return n
}
function add(size, file) {
    if (out !~ /^\.(text|rodata|data|ARM\.extab|ARM\.exidx|preinit_array|init_array|fini_array)$/) return
    if (file ~ /pfvm_impl(_sel|_planned|_small|_none)?\.o$/) k = "pfvm"
    else if (file ~ /pb_(common|decode|encode)\.o$/) k = "nanopb"
    else if (file ~ /(main|main_sel|startup)\.o$/) k = "harness"
    else if (file ~ /model\.o$/) k = "model"
    else k = "libc"
    sum[k] += hex(size)
}
/^ \*fill\*/ { next }
/^ \.[^ ]+$/ { pending = 1; next }
pending && $1 ~ /^0x/ && NF >= 3 { add($2, $3); pending = 0; next }
{ pending = 0 }
/^ \.[^ ]+ +0x[0-9a-f]+ +0x[0-9a-f]+ / { add($3, $4) }
END { printf "%d %d %d %d\n", sum["pfvm"], sum["nanopb"], sum["libc"], sum["harness"] }
