# pfvm build. `make` builds the headers, interp, the unit tests and examples;
# `make test` runs everything (see tests/run.sh); `make asan` builds the
# tests with AddressSanitizer + UndefinedBehaviorSanitizer into build-asan/
# (with PFVM_NO_DISPATCH: the kernels' baseline versions, which a CPU with
# AVX2 never runs otherwise).

CC      ?= cc
OPT     ?= -O2 -g
WARN    := -std=c99 -Wall -Wextra -pedantic
CFLAGS  ?=
LDLIBS  := -lprotobuf-nanopb -lm -lpthread
BUILD   ?= build
PREFIX  ?= /usr/local
DESTDIR ?=
VERSION := $(shell sed -n 's/^\#define PFVM_VERSION_STRING "\(.*\)"/\1/p' src/base/base.h)
SAN     ?=

SRC     := $(sort $(wildcard src/*/*.c))
HDR     := $(sort $(wildcard src/*/*.h))
OBJ     := $(SRC:%.c=$(BUILD)/%.o)
TESTS   := $(patsubst tests/%.c,$(BUILD)/tests/%,$(sort $(wildcard tests/test_*.c)))
EXAMPLES := $(patsubst examples/%.c,$(BUILD)/examples/%,$(sort $(wildcard examples/*.c)))
ALL_CFLAGS = $(WARN) $(OPT) $(SAN) $(CFLAGS)

.PHONY: all headers test asan clean check-headers arm install uninstall
all: headers $(BUILD)/interp interp $(BUILD)/libpfvm.a $(TESTS) $(EXAMPLES)

# The three headers are generated from src/ (amalgamate.py --check in CI).
headers: pfvm.h
pfvm.h pfvm_onnx.h pfvm_accel.h: amalgamate.py LICENSE $(SRC) $(HDR) $(wildcard src/doc/*.txt)
	python3 amalgamate.py

$(BUILD)/%.o: %.c $(HDR)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc -c $< -o $@

$(BUILD)/libpfvm.a: $(OBJ)
	@rm -f $@
	ar rcs $@ $(OBJ)

# interp is built from the amalgamated headers: it is what users compile.
$(BUILD)/interp: interp.c pfvm.h pfvm_onnx.h pfvm_accel.h
	@mkdir -p $(BUILD)
	$(CC) $(ALL_CFLAGS) -I. interp.c -o $@ $(LDLIBS)

interp: $(BUILD)/interp
	cp $< $@

$(BUILD)/tests/%: tests/%.c $(wildcard tests/*.h) $(BUILD)/libpfvm.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc -Itests $< $(BUILD)/libpfvm.a -o $@ $(LDLIBS)

$(BUILD)/tests/test_infer_table: tests/infer_table.inc

$(BUILD)/examples/%: examples/%.c pfvm.h pfvm_onnx.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -I. $< -o $@ $(LDLIBS)

test: all
	sh tests/run.sh $(BUILD)

asan:
	$(MAKE) BUILD=build-asan OPT="-O1 -g -DPFVM_NO_DISPATCH" SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	    build-asan/interp $(patsubst $(BUILD)/%,build-asan/%,$(TESTS) $(EXAMPLES))

# The headers, pkg-config files (pfvm, pfvm-onnx) and the CMake package
# (find_package(pfvm): pfvm::pfvm, pfvm::onnx). `make install PREFIX=/opt/x`
# or DESTDIR=... for staging; CMake users can also `cmake --install`.
install: pfvm.h pfvm_onnx.h pfvm_accel.h
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/lib/cmake/pfvm
	install -m 644 pfvm.h pfvm_onnx.h pfvm_accel.h $(DESTDIR)$(PREFIX)/include/
	for pc in pfvm pfvm-onnx; do \
	    sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' packaging/$$pc.pc.in \
	        > $(DESTDIR)$(PREFIX)/lib/pkgconfig/$$pc.pc || exit 1; \
	done
	install -m 644 cmake/pfvmConfig.cmake $(DESTDIR)$(PREFIX)/lib/cmake/pfvm/
	sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@VERSION_MAJOR_MINOR@|$(basename $(VERSION))|g' \
	    cmake/pfvmConfigVersion.cmake.in > $(DESTDIR)$(PREFIX)/lib/cmake/pfvm/pfvmConfigVersion.cmake

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/include/pfvm.h $(DESTDIR)$(PREFIX)/include/pfvm_onnx.h $(DESTDIR)$(PREFIX)/include/pfvm_accel.h \
	    $(DESTDIR)$(PREFIX)/lib/pkgconfig/pfvm.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/pfvm-onnx.pc
	rm -rf $(DESTDIR)$(PREFIX)/lib/cmake/pfvm

check-headers:
	python3 amalgamate.py --check

clean:
	rm -rf build build-asan interp
