/* Embeds the model and its input in flash (section .model, read only):
 * MODEL_FILE and INPUT_FILE are the paths, given by the build as -D
 * string macros. The model bytes are 64-byte aligned so that raw_data
 * initializers that pfvm can use in place stay in flash. */
    .section .model, "a"
    .balign 64
    .global mcu_model, mcu_model_end
mcu_model:
    .incbin MODEL_FILE
mcu_model_end:
    .balign 64
    .global mcu_input, mcu_input_end
mcu_input:
    .incbin INPUT_FILE
mcu_input_end:
    .byte 0
    .section .note.GNU-stack,"",%progbits
