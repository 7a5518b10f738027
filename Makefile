# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
#   make          static build/inferscope-bpf
#   make deps     install the Debian packages the build and tests need
#   make demo     deps + build + trace the bundled example workload
#   make test     deps + build + unit and integration tests (as root)
#   make bench    overhead benchmarks and their regression gate (as root)
#   make kci      kernel-CI suite, KTAP on stdout (as root; BASELINE=FILE compares)
#   make kci-quick  its quick subset (under 2 minutes)
#   make docs     regenerate the generated parts of docs/
#   V=1           show full commands

OUT      := build
ASAN_OUT := $(OUT)/asan
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
ARCH     := x86
VERSION  := 0.1.0

ifeq ($(V),1)
Q :=
msg =
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

WARN     := -Wall -Wextra -Werror
CSTD     := -std=c11 -D_GNU_SOURCE
INCLUDES := -I$(OUT)/bpf -I. -Ibpf -Iuser -Ianalysis
CFLAGS   ?= -O2 -g
ALL_CFLAGS := $(CSTD) $(WARN) $(CFLAGS) $(INCLUDES) -DISR_VERSION='"$(VERSION)"'
SAN_FLAGS  := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all

# The release binary carries everything it needs: the GPU hosts have no libbpf.
STATIC_LIBS := -Wl,-Bstatic -lbpf -lelf -lz -lzstd -ljansson -liberty -lm
DYN_LIBS    := -lbpf -lelf -lz -lzstd -ljansson -liberty -lm

BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(OUT)/bpf/%.bpf.o,$(BPF_SRCS))
BPF_SKELS := $(patsubst bpf/%.bpf.c,$(OUT)/bpf/%.skel.h,$(BPF_SRCS))
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -Ibpf $(WARN) \
	-Wno-unused-parameter -Wno-missing-field-initializers

LIB_SRCS  := $(filter-out user/main.c,$(wildcard user/*.c analysis/*.c))
LIB_OBJS  := $(patsubst %.c,$(OUT)/obj/%.o,$(LIB_SRCS))
MAIN_OBJ  := $(OUT)/obj/user/main.o
ASAN_LIB_OBJS := $(patsubst %.c,$(ASAN_OUT)/obj/%.o,$(LIB_SRCS))
ASAN_MAIN_OBJ := $(ASAN_OUT)/obj/user/main.o

UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNIT_BINS  := $(patsubst tests/unit/%.c,$(ASAN_OUT)/tests/unit/%,$(UNIT_SRCS))
INTEG_SRCS := $(wildcard tests/integration/test_*.c)
INTEG_BINS := $(patsubst tests/integration/%.c,$(ASAN_OUT)/tests/integration/%,$(INTEG_SRCS))
INTEG_HELPERS := $(filter-out $(INTEG_SRCS),$(wildcard tests/integration/*.c))
WORKLOAD_SRCS := $(wildcard tests/workloads/*.c)
CUDA_INC   ?= /usr/local/cuda/include
STANDIN_DIR := $(OUT)/tests/standin
STANDIN_LIB := $(STANDIN_DIR)/libcuda.so.1
WORKLOADS  := $(patsubst tests/workloads/%.c,$(OUT)/tests/workloads/%,$(WORKLOAD_SRCS))
EXAMPLES   := $(patsubst examples/%.c,$(OUT)/examples/%,$(wildcard examples/*.c))
FORMAT_TABLES := $(OUT)/tests/format_tables

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all deps demo test test-build unit integration docs clean bench kci kci-quick

BRIDGE     := $(OUT)/libinferscope_cupti.so

all: $(OUT)/inferscope-bpf $(BRIDGE)

deps:
	$(Q)sh scripts/deps.sh

# --- BPF: .bpf.c -> .bpf.o -> .skel.h ---------------------------------------
$(OUT)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) vmlinux/$(ARCH)/vmlinux.h | $(OUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# libbpf's usdt.bpf.h includes <linux/errno.h>, which wants the multiarch asm/.
$(OUT)/bpf/cupti.bpf.o: BPF_CFLAGS += -idirafter /usr/include/$(shell $(CC) -print-multiarch)

$(OUT)/bpf/%.skel.h: $(OUT)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

# --- user space ---------------------------------------------------------------
HEADERS := $(wildcard bpf/*.h user/*.h analysis/*.h) $(BPF_SKELS)

$(OUT)/obj/%.o: %.c $(HEADERS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(ASAN_OUT)/obj/%.o: %.c $(HEADERS)
	@mkdir -p $(@D)
	$(call msg,CC-SAN,$@)
	$(Q)$(CC) $(CSTD) $(WARN) $(SAN_FLAGS) $(INCLUDES) -DISR_VERSION='"$(VERSION)"' -c $< -o $@

$(OUT)/inferscope-bpf: $(MAIN_OBJ) $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) -static $(CFLAGS) $^ $(STATIC_LIBS) -o $@

$(ASAN_OUT)/inferscope-bpf: $(ASAN_MAIN_OBJ) $(ASAN_LIB_OBJS)
	$(call msg,LINK-SAN,$@)
	$(Q)$(CC) $(SAN_FLAGS) $^ $(DYN_LIBS) -o $@

# --- the CUPTI bridge: a shared library loaded into CUDA processes ------------
BRIDGE_CFLAGS := $(CSTD) $(WARN) -O2 -g -fPIC -fvisibility=hidden -I$(CUDA_INC) -Ibpf

$(BRIDGE): cupti_bridge/bridge.c bpf/events.h
	@mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(BRIDGE_CFLAGS) -shared -Wl,-z,defs -Wl,-soname,libinferscope_cupti.so $< -ldl -pthread -o $@

# --- tests --------------------------------------------------------------------
$(ASAN_OUT)/tests/unit/%: tests/unit/%.c $(ASAN_LIB_OBJS) $(HEADERS)
	@mkdir -p $(@D)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CSTD) $(WARN) $(SAN_FLAGS) $(INCLUDES) $< $(ASAN_LIB_OBJS) $(DYN_LIBS) -lcmocka -o $@

$(ASAN_OUT)/tests/integration/%: tests/integration/%.c $(INTEG_HELPERS) $(wildcard tests/integration/*.h) tests/workloads/cupti_workload.h $(ASAN_LIB_OBJS) $(HEADERS)
	@mkdir -p $(@D)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CSTD) $(WARN) $(SAN_FLAGS) $(INCLUDES) -Itests/integration -Itests/standin -Itests/workloads $< $(INTEG_HELPERS) \
		$(ASAN_LIB_OBJS) $(DYN_LIBS) -lcmocka -o $@

# An interpreter on the shared libpython (Debian's python3 has it built in).
$(OUT)/tests/workloads/pyembed: tests/workloads/pyembed.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CSTD) $(WARN) -O2 -g $$(pkg-config --cflags python3-embed) $< \
		$$(pkg-config --libs python3-embed) -o $@

$(OUT)/tests/workloads/%: tests/workloads/%.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CSTD) $(WARN) -O2 -g $< -pthread -o $@

# The stand-in libcuda.so.1 (tests/standin/): clang, with shrink-wrapping
# off, so that each translation unit's entry points begin as planned: push
# %rbp (like libcuda 580), endbr64 + push, or neither.
STANDIN_CFLAGS := $(CSTD) $(WARN) -O2 -g -fPIC -I$(CUDA_INC) -Ibpf -Itests/standin
STANDIN_FP     := -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -mllvm -enable-shrink-wrap=false
STANDIN_HDRS   := tests/standin/standin.h tests/standin/cuda_plan.h bpf/cuda_funcs.h

$(STANDIN_DIR)/push.o: tests/standin/libcuda_push.c $(STANDIN_HDRS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CLANG) $(STANDIN_CFLAGS) $(STANDIN_FP) -fcf-protection=none -c $< -o $@

$(STANDIN_DIR)/endbr.o: tests/standin/libcuda_endbr.c $(STANDIN_HDRS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CLANG) $(STANDIN_CFLAGS) $(STANDIN_FP) -fcf-protection=branch -c $< -o $@

$(STANDIN_DIR)/stepped.o: tests/standin/libcuda_stepped.c $(STANDIN_HDRS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CLANG) $(STANDIN_CFLAGS) -fomit-frame-pointer -fcf-protection=none -c $< -o $@

$(STANDIN_LIB): $(STANDIN_DIR)/push.o $(STANDIN_DIR)/endbr.o $(STANDIN_DIR)/stepped.o
	$(call msg,LINK,$@)
	$(Q)$(CLANG) -shared -Wl,-soname,libcuda.so.1 -Wl,-z,defs $^ -o $@

# Linked against the stand-in, found through RUNPATH $ORIGIN/../standin.
$(OUT)/tests/workloads/cuda_calls $(OUT)/tests/workloads/launch_rate: $(OUT)/tests/workloads/%: tests/workloads/%.c \
		$(STANDIN_LIB) $(STANDIN_HDRS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(STANDIN_CFLAGS) $< -L$(STANDIN_DIR) -l:libcuda.so.1 -Wl,--enable-new-dtags \
		-Wl,-rpath,'$$ORIGIN/../standin' -pthread -o $@

# Injection tests: the same target linked statically (nothing to dlopen
# with), and the library they load.
INJECT_TARGETS := $(OUT)/tests/workloads/inject_target_static $(OUT)/tests/workloads/libinject_probe.so \
	$(OUT)/tests/tools/inject_cli

# Static, for tests/gpu/inject.sh on the GPU machine.
$(OUT)/tests/tools/inject_cli: tests/tools/inject_cli.c $(OUT)/obj/user/inject.o
	@mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(CC) -static $(ALL_CFLAGS) $^ $(STATIC_LIBS) -o $@

$(OUT)/tests/workloads/inject_target: tests/workloads/inject_target.c tests/workloads/inject_state.h
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CSTD) $(WARN) -O2 -g $< -pthread -o $@

$(OUT)/tests/workloads/inject_target_static: tests/workloads/inject_target.c tests/workloads/inject_state.h
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CSTD) $(WARN) -O2 -g -static $< -pthread -o $@

$(OUT)/tests/workloads/libinject_probe.so: tests/workloads/lib/inject_probe.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CSTD) $(WARN) -O2 -g -fPIC -shared $< -o $@

# The mock libcupti.so.13 (tests/mock_cupti/) and the workload that drives
# the real bridge with it, on the stand-in libcuda.
MOCK_CUPTI := $(OUT)/tests/mock_cupti/libcupti.so.13

$(MOCK_CUPTI): tests/mock_cupti/mock_cupti.c tests/mock_cupti/mock_cupti.h
	@mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CSTD) $(WARN) -O2 -g -fPIC -fvisibility=hidden -I$(CUDA_INC) -shared -Wl,-soname,libcupti.so.13 \
		-Wl,-z,defs $< -pthread -o $@

$(OUT)/tests/workloads/cupti_workload: tests/workloads/cupti_workload.c tests/workloads/cupti_workload.h \
		tests/mock_cupti/mock_cupti.h $(STANDIN_LIB) $(MOCK_CUPTI) $(BRIDGE)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CSTD) $(WARN) -O2 -g -I$(CUDA_INC) -Itests/mock_cupti $< -L$(STANDIN_DIR) -l:libcuda.so.1 \
		-Wl,--enable-new-dtags -Wl,-rpath,'$$ORIGIN/../standin' -ldl -o $@

$(OUT)/examples/%: examples/%.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CSTD) $(WARN) -O2 -g $< -pthread -o $@

$(FORMAT_TABLES): tests/unit/format_tables.c bpf/events.h bpf/cuda_funcs.h analysis/isr_format.h
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CSTD) $(WARN) $(INCLUDES) $< -o $@

test-build: $(OUT)/inferscope-bpf $(ASAN_OUT)/inferscope-bpf $(UNIT_BINS) $(INTEG_BINS) $(WORKLOADS) $(INJECT_TARGETS) $(OUT)/kci-init \
	$(EXAMPLES) $(FORMAT_TABLES)

test: deps
	$(Q)$(MAKE) --no-print-directory test-build
	$(Q)sh tests/run.sh

unit: test-build
	$(Q)sh tests/run.sh unit

integration: test-build
	$(Q)sh tests/run.sh integration

demo: deps
	$(Q)$(MAKE) --no-print-directory $(OUT)/inferscope-bpf $(EXAMPLES)
	$(Q)sh scripts/demo.sh

# Overhead benchmarks: table on stdout, JSON in build/bench.json, and the
# regression gate that kernel CI runs (tests/bench/thresholds.json). Root.
bench: $(OUT)/inferscope-bpf
	$(Q)$(OUT)/inferscope-bpf bench -o $(OUT)/bench.json --check tests/bench/thresholds.json

# Kernel CI (docs/kernel-ci.md): what each kernel mechanism costs, whether
# the kernel delivers every event, then the recorder workloads; KTAP on
# stdout, JSON in build/kci.json. BASELINE=FILE (an earlier build/kci.json)
# fails on a significant regression. Root.
KCI_ARGS = --ktap $(if $(BASELINE),--baseline $(BASELINE))

kci: $(OUT)/inferscope-bpf
	$(Q)$(OUT)/inferscope-bpf bench --kci -o $(OUT)/kci.json $(KCI_ARGS)

kci-quick: $(OUT)/inferscope-bpf
	$(Q)$(OUT)/inferscope-bpf bench --kci --quick -o $(OUT)/kci-quick.json $(KCI_ARGS)

# /init of the initramfs scripts/kci-vm.sh boots a kernel under test with.
$(OUT)/kci-init: scripts/kci-init.c
	@mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(CC) -static $(CSTD) $(WARN) -O2 $< -o $@

docs: $(FORMAT_TABLES)
	$(Q)sh scripts/update-docs.sh $(FORMAT_TABLES)

$(OUT)/bpf:
	$(Q)mkdir -p $@

clean:
	$(Q)rm -rf $(OUT)
