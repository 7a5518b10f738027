# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
#   make          static build/inferscope-bpf
#   make deps     install the Debian packages the build and tests need
#   make demo     deps + build + trace the bundled example workload
#   make test     deps + build + unit and integration tests (as root)
#   make unit     unit tests only: no root, no clang, no bpftool (but protoc-c,
#                 protoc and chromium, for the outputs: scripts/deps.sh)
#   make bench    overhead benchmarks and their regression gate (as root)
#   make kci      kernel-CI suite, KTAP on stdout (as root; BASELINE=FILE compares)
#   make kci-quick  its quick subset (under 2 minutes)
#   make bench-analysis  the analysis's throughput and peak memory
#   make fuzz     the recording fuzzer (libFuzzer, ASan+UBSan) for FUZZ_SECONDS
#                 (default 300; make test runs 3000 inputs from a fixed seed:
#                 tests/fuzz/run.sh)
#   make docs     regenerate the generated parts of docs/ and dist/ (the man
#                 page's reference, the bash completion)
#   make install  the binary, the CUPTI bridge, the systemd unit, a default
#                 configuration, the man page and bash completion
#                 (PREFIX=/usr/local, DESTDIR=, SYSCONFDIR=/etc)
#   V=1           show full commands

OUT      := build
ASAN_OUT := $(OUT)/asan
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
ARCH     := x86
CUDA_INC ?= /usr/local/cuda/include
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
CFLAGS   ?= -O2 -g
DEFS     := -DISR_VERSION='"$(VERSION)"'
DEPFLAGS := -MMD -MP
# For a program compiled and linked in one step: its dependencies go to
# build/deps/, not next to it (tests/run.sh runs every file of the tests' folders).
BINDEP    = -MMD -MP -MT $@ -MF $(OUT)/deps/$(subst /,_,$@).d
SAN_FLAGS  := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all

# The release binary carries everything it needs: the GPU hosts have no libbpf.
STATIC_LIBS := -Wl,-Bstatic -lbpf -lelf -lz -lzstd -ljansson -liberty -lprotobuf-c -lsqlite3 -lncursesw -ltinfo -lyaml -lm
DYN_LIBS    := -lbpf -lelf -lz -lzstd -ljansson -liberty -lprotobuf-c -lsqlite3 -lncursesw -ltinfo -lyaml -lm -lsystemd
# libsystemd (sd_notify, user/daemon/notify.c) has no static library on Debian: the
# static release binary is built without it, the sanitized build and the
# installed one (build/dyn/inferscope-bpf, linked against the distribution's
# libraries) with it.
SYSTEMD_DEFS := -DHAVE_LIBSYSTEMD

# --- the parts and what each may include -------------------------------------
# Each folder is compiled with the include folders it may use and no others,
# so that an include across a boundary does not compile, and `make
# boundaries` refuses one in a header too (scripts/boundaries.py reads the
# same lists). docs/architecture.md draws the arrows:
#   format/    the bytes every part agrees on: itself only
#   lib/       helpers: itself only
#   analysis/  a pipeline (pure: no BPF, no clang), each folder on those
#              before it: read (the recording, the pass, the task model) ->
#              model (summaries, timeline, attribution, ...) -> rules ->
#              run (the stage table) -> render (the reports, with the code
#              protoc-c generates) -> api (what other parts call)
#   user/      by role, each folder on those it names and what they may
#              include: record (the recorder, its configuration, the loader's
#              core, the interface of the probe families); inject (the CUPTI
#              bridge into targets); probes (the families: record, inject);
#              settings (record); bench (record); daemon (settings, probes);
#              cli (every one); of the analysis only its API, for settings,
#              the daemon and the CLI (analysis/api/: `-p` records and then
#              analyzes in one process)
#   bpf/       the format, vmlinux.h, itself
#   cupti_bridge/  the format and the helpers compiled into it
BASE_INC     := -Iformat -Ilib
FORMAT_INC   := -Iformat
LIB_INC      := -Ilib
READ_INC     := -Ianalysis/read $(BASE_INC)
MODEL_INC    := -Ianalysis/model $(READ_INC)
RULES_INC    := -Ianalysis/rules $(MODEL_INC)
RUN_INC      := -Ianalysis/run $(RULES_INC)
RENDER_INC   := -Ianalysis/render $(RUN_INC) -I$(OUT)/gen
API_INC      := -Ianalysis/api $(RENDER_INC)
INJECT_INC   := -Iuser/inject $(BASE_INC)
RECORD_INC   := -Iuser/record $(BASE_INC) -I$(OUT)/bpf
PROBES_INC   := -Iuser/probes -Iuser/inject $(RECORD_INC)
SETTINGS_INC := -Iuser/settings -Ianalysis/api $(RECORD_INC)
DAEMON_INC   := -Iuser/daemon -Iuser/settings -Iuser/probes -Iuser/inject -Ianalysis/api $(RECORD_INC)
BENCH_INC    := -Iuser/bench $(RECORD_INC)
CLI_INC      := -Iuser/cli -Iuser/bench -Iuser/daemon -Iuser/settings -Iuser/probes -Iuser/inject -Ianalysis/api \
	$(RECORD_INC)
BPF_INC      := -Ibpf -Iformat -Ivmlinux/$(ARCH)
BRIDGE_INC   := -Icupti_bridge -Iformat -Ilib -I$(CUDA_INC)
# Tests see every part (the same folder twice is said once).
uniq = $(if $(1),$(firstword $(1)) $(call uniq,$(filter-out $(firstword $(1)),$(1))))
TEST_INC     := $(call uniq,$(CLI_INC) $(API_INC))

# Every folder of the parts, with its include folders: an object's pattern
# rule takes them from here, and `make boundaries` checks against them.
PARTS := format:FORMAT lib:LIB analysis/read:READ analysis/model:MODEL analysis/rules:RULES \
	analysis/run:RUN analysis/render:RENDER analysis/api:API user/inject:INJECT user/record:RECORD \
	user/probes:PROBES user/settings:SETTINGS user/daemon:DAEMON user/bench:BENCH user/cli:CLI \
	bpf:BPF cupti_bridge:BRIDGE
part_dir = $(word 1,$(subst :, ,$(1)))
part_inc = $($(word 2,$(subst :, ,$(1)))_INC)

BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(OUT)/bpf/%.bpf.o,$(BPF_SRCS))
BPF_SKELS := $(patsubst bpf/%.bpf.c,$(OUT)/bpf/%.skel.h,$(BPF_SRCS))
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) $(BPF_INC) $(WARN) \
	-Wno-unused-parameter -Wno-missing-field-initializers

FORMAT_SRCS   := $(wildcard format/*.c)
LIB_SRCS      := $(wildcard lib/*.c)
ANALYSIS_SRCS := $(wildcard analysis/*/*.c)
USER_SRCS     := $(filter-out user/cli/main.c,$(wildcard user/*/*.c))
# The loader files: those that include a BPF skeleton (clang and bpftool
# make it). Everything else builds and unit-tests without them.
USER_BPF_SRCS := $(shell grep -l '\.skel\.h"' $(USER_SRCS))
CORE_SRCS     := $(FORMAT_SRCS) $(LIB_SRCS) $(ANALYSIS_SRCS) $(filter-out $(USER_BPF_SRCS),$(USER_SRCS))

# The subset of Perfetto's .proto files the trace writer encodes
# (analysis/proto/README.md), compiled by protoc-c at build time.
PROTO_DIR  := analysis/proto
PROTO_SRCS := $(shell find $(PROTO_DIR)/protos -name '*.proto')
PROTO_GEN  := $(OUT)/gen
PROTO_C    := $(patsubst $(PROTO_DIR)/%.proto,$(PROTO_GEN)/%.pb-c.c,$(PROTO_SRCS))
PROTO_H    := $(PROTO_C:.c=.h)
GEN_OBJS       := $(patsubst $(PROTO_GEN)/%.c,$(OUT)/obj/gen/%.o,$(PROTO_C))
ASAN_GEN_OBJS  := $(patsubst $(PROTO_GEN)/%.c,$(ASAN_OUT)/obj/gen/%.o,$(PROTO_C))

objs = $(patsubst %.c,$(1)/obj/%.o,$(2))
CORE_OBJS      := $(call objs,$(OUT),$(CORE_SRCS)) $(GEN_OBJS)
LOADER_OBJS    := $(call objs,$(OUT),$(USER_BPF_SRCS))
MAIN_OBJ       := $(OUT)/obj/user/cli/main.o
ASAN_CORE_OBJS := $(call objs,$(ASAN_OUT),$(CORE_SRCS)) $(ASAN_GEN_OBJS)
ASAN_LOADER_OBJS := $(call objs,$(ASAN_OUT),$(USER_BPF_SRCS))
ASAN_MAIN_OBJ  := $(ASAN_OUT)/obj/user/cli/main.o
# Unit tests link what they use from this archive: no BPF objects in it.
ASAN_CORE_LIB  := $(ASAN_OUT)/libinferscope-core.a

# The fuzzer: the analysis core compiled by clang with libFuzzer's coverage
# instrumentation, ASan and UBSan (tests/fuzz/).
FUZZ_CC      ?= $(CLANG)
FUZZ_OUT     := $(OUT)/fuzz
FUZZ_FLAGS   := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_OBJS    := $(call objs,$(FUZZ_OUT),$(FORMAT_SRCS) $(LIB_SRCS) $(ANALYSIS_SRCS)) \
	$(patsubst $(PROTO_GEN)/%.c,$(FUZZ_OUT)/obj/gen/%.o,$(PROTO_C))
FUZZ_BIN     := $(FUZZ_OUT)/fuzz_recording
FUZZ_LIBS    := -lelf -lz -lzstd -ljansson -liberty -lprotobuf-c -lsqlite3 -lm
FUZZ_SECONDS ?= 300
MAKE_CORPUS  := $(ASAN_OUT)/tests/fuzz/make_corpus

UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNIT_BINS  := $(patsubst tests/unit/%.c,$(ASAN_OUT)/tests/unit/%,$(UNIT_SRCS))
INTEG_SRCS := $(wildcard tests/integration/test_*.c)
INTEG_BINS := $(patsubst tests/integration/%.c,$(ASAN_OUT)/tests/integration/%,$(INTEG_SRCS))
INTEG_HELPERS := $(filter-out $(INTEG_SRCS),$(wildcard tests/integration/*.c))
WORKLOAD_SRCS := $(wildcard tests/workloads/*.c)
STANDIN_DIR := $(OUT)/tests/standin
STANDIN_LIB := $(STANDIN_DIR)/libcuda.so.1
WORKLOADS  := $(patsubst tests/workloads/%.c,$(OUT)/tests/workloads/%,$(WORKLOAD_SRCS))
EXAMPLES   := $(patsubst examples/%.c,$(OUT)/examples/%,$(wildcard examples/*.c))
FORMAT_TABLES := $(OUT)/tests/format_tables

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all deps demo test test-build unit unit-build integration docs clean bench boundaries kci kci-quick bench-analysis bench-nccl fuzz \
	install

BRIDGE     := $(OUT)/libinferscope_cupti.so

all: $(OUT)/inferscope-bpf $(BRIDGE)

deps:
	$(Q)sh scripts/deps.sh

# --- BPF: .bpf.c -> .bpf.o -> .skel.h ---------------------------------------
# Static pattern rules: a skeleton that an old dependency file still names
# but whose source is gone is not made, its users are rebuilt.
$(BPF_OBJS): $(OUT)/bpf/%.bpf.o: bpf/%.bpf.c | $(OUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(DEPFLAGS) -c $< -o $@

# libbpf's usdt.bpf.h includes <linux/errno.h>, which wants the multiarch asm/.
$(OUT)/bpf/cupti.bpf.o: BPF_CFLAGS += -idirafter /usr/include/$(shell $(CC) -print-multiarch)

$(BPF_SKELS): $(OUT)/bpf/%.skel.h: $(OUT)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

# --- user space: each folder's objects with its include folders (PARTS) ------
$(foreach p,$(filter-out bpf:% cupti_bridge:%,$(PARTS)),$(eval \
	$(OUT)/obj/$(call part_dir,$(p))/%.o $(ASAN_OUT)/obj/$(call part_dir,$(p))/%.o \
	$(FUZZ_OUT)/obj/$(call part_dir,$(p))/%.o: INC := $(call part_inc,$(p))))

$(OUT)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CSTD) $(WARN) $(CFLAGS) $(INC) $(DEFS) $(DEPFLAGS) -c $< -o $@

$(ASAN_OUT)/obj/user/daemon/notify.o: DEFS += $(SYSTEMD_DEFS)

$(ASAN_OUT)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(call msg,CC-SAN,$@)
	$(Q)$(CC) $(CSTD) $(WARN) $(SAN_FLAGS) $(INC) $(DEFS) $(DEPFLAGS) -c $< -o $@

$(FUZZ_OUT)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(call msg,CC-FUZZ,$@)
	$(Q)$(FUZZ_CC) $(CSTD) $(WARN) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link $(INC) $(DEFS) $(DEPFLAGS) -c $< -o $@

# --- generated protobuf-c code ----------------------------------------------------
$(PROTO_GEN)/%.pb-c.c $(PROTO_GEN)/%.pb-c.h: $(PROTO_DIR)/%.proto
	@mkdir -p $(PROTO_GEN)
	$(call msg,PROTOC-C,$@)
	$(Q)protoc-c --proto_path=$(PROTO_DIR) --c_out=$(PROTO_GEN) $<

$(GEN_OBJS): $(OUT)/obj/gen/%.o: $(PROTO_GEN)/%.c $(PROTO_H)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CSTD) $(WARN) $(CFLAGS) -I$(PROTO_GEN) $(DEPFLAGS) -c $< -o $@

$(ASAN_GEN_OBJS): $(ASAN_OUT)/obj/gen/%.o: $(PROTO_GEN)/%.c $(PROTO_H)
	@mkdir -p $(@D)
	$(call msg,CC-SAN,$@)
	$(Q)$(CC) $(CSTD) $(WARN) $(SAN_FLAGS) -I$(PROTO_GEN) $(DEPFLAGS) -c $< -o $@

$(FUZZ_OUT)/obj/gen/%.o: $(PROTO_GEN)/%.c $(PROTO_H)
	@mkdir -p $(@D)
	$(call msg,CC-FUZZ,$@)
	$(Q)$(FUZZ_CC) $(CSTD) $(WARN) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -I$(PROTO_GEN) $(DEPFLAGS) -c $< -o $@

# The analysis includes the generated headers.
$(call objs,$(OUT),$(ANALYSIS_SRCS)) $(call objs,$(ASAN_OUT),$(ANALYSIS_SRCS)) \
	$(call objs,$(FUZZ_OUT),$(ANALYSIS_SRCS)): | $(PROTO_H)

# Before their first build tells their dependencies, the loader files need
# the skeletons made.
$(LOADER_OBJS) $(ASAN_LOADER_OBJS) $(MAIN_OBJ) $(ASAN_MAIN_OBJ): | $(BPF_SKELS)

$(OUT)/inferscope-bpf: $(MAIN_OBJ) $(CORE_OBJS) $(LOADER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) -static $(CFLAGS) $^ $(STATIC_LIBS) -o $@

# The installed binary: the release objects linked against the
# distribution's libraries, libsystemd's sd_notify among them (the unit is
# Type=notify). Built on the host it is installed on.
DYN_OUT := $(OUT)/dyn

$(DYN_OUT)/obj/user/daemon/notify.o: user/daemon/notify.c
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CSTD) $(WARN) $(CFLAGS) $(DAEMON_INC) $(DEFS) $(SYSTEMD_DEFS) $(DEPFLAGS) -c $< -o $@

$(DYN_OUT)/inferscope-bpf: $(MAIN_OBJ) $(filter-out $(OUT)/obj/user/daemon/notify.o,$(CORE_OBJS)) $(LOADER_OBJS) \
		$(DYN_OUT)/obj/user/daemon/notify.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(DYN_LIBS) -o $@

$(ASAN_OUT)/inferscope-bpf: $(ASAN_MAIN_OBJ) $(ASAN_CORE_OBJS) $(ASAN_LOADER_OBJS)
	$(call msg,LINK-SAN,$@)
	$(Q)$(CC) $(SAN_FLAGS) $^ $(DYN_LIBS) -o $@

$(ASAN_CORE_LIB): $(ASAN_CORE_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# --- the CUPTI bridge: a shared library loaded into CUDA processes ------------
# The helpers and the registry's views it uses are compiled into it,
# position-independent and hidden like the rest of it: nothing of it can
# clash with the process's symbols.
BRIDGE_SRCS   := cupti_bridge/bridge.c format/registry.c lib/htab.c lib/clock.c
BRIDGE_OBJS   := $(patsubst %.c,$(OUT)/pic/%.o,$(BRIDGE_SRCS))
BRIDGE_CFLAGS := $(CSTD) $(WARN) -O2 -g -fPIC -fvisibility=hidden

$(OUT)/pic/cupti_bridge/%.o: INC := $(BRIDGE_INC)
$(OUT)/pic/lib/%.o: INC := $(LIB_INC)
$(OUT)/pic/format/%.o: INC := $(FORMAT_INC)

$(OUT)/pic/%.o: %.c
	@mkdir -p $(@D)
	$(call msg,CC-PIC,$@)
	$(Q)$(CC) $(BRIDGE_CFLAGS) $(INC) $(DEPFLAGS) -c $< -o $@

$(BRIDGE): $(BRIDGE_OBJS)
	@mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(BRIDGE_CFLAGS) -shared -Wl,-z,defs -Wl,-soname,libinferscope_cupti.so $^ -ldl -pthread -o $@

# --- tests --------------------------------------------------------------------
$(ASAN_OUT)/tests/unit/%: tests/unit/%.c $(ASAN_CORE_LIB)
	@mkdir -p $(@D) $(OUT)/deps
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CSTD) $(WARN) $(SAN_FLAGS) $(TEST_INC) $(DEFS) $(BINDEP) $< $(ASAN_CORE_LIB) $(DYN_LIBS) \
		-lcmocka -o $@

$(ASAN_OUT)/tests/integration/%: tests/integration/%.c $(INTEG_HELPERS) $(ASAN_CORE_OBJS) $(ASAN_LOADER_OBJS)
	@mkdir -p $(@D) $(OUT)/deps
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CSTD) $(WARN) $(SAN_FLAGS) $(TEST_INC) $(DEFS) $(BINDEP) -Itests/integration -Itests/standin \
		-Itests/workloads $< $(INTEG_HELPERS) $(ASAN_CORE_OBJS) $(ASAN_LOADER_OBJS) $(DYN_LIBS) -lcmocka -o $@

# --- the fuzzer ------------------------------------------------------------------
$(FUZZ_BIN): tests/fuzz/fuzz_recording.c $(FUZZ_OBJS)
	@mkdir -p $(@D) $(OUT)/deps
	$(call msg,LINK-FUZZ,$@)
	$(Q)$(FUZZ_CC) $(CSTD) $(WARN) $(FUZZ_FLAGS) -fsanitize=fuzzer $(API_INC) $(DEFS) $(BINDEP) $< $(FUZZ_OBJS) \
		$(FUZZ_LIBS) -o $@

# The seed recordings' generator and checker: the real writer.
$(MAKE_CORPUS): tests/fuzz/make_corpus.c tests/unit/synth.h $(ASAN_CORE_LIB)
	@mkdir -p $(@D) $(OUT)/deps
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CSTD) $(WARN) $(SAN_FLAGS) $(TEST_INC) -Itests/unit $(DEFS) $(BINDEP) $< $(ASAN_CORE_LIB) $(DYN_LIBS) \
		-lcmocka -o $@

fuzz: $(FUZZ_BIN) $(MAKE_CORPUS)
	$(Q)sh tests/fuzz/run.sh $(FUZZ_SECONDS)

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
STANDIN_CFLAGS := $(CSTD) $(WARN) -O2 -g -fPIC -I$(CUDA_INC) $(FORMAT_INC) -Itests/standin
STANDIN_FP     := -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -mllvm -enable-shrink-wrap=false
STANDIN_HDRS   := tests/standin/standin.h tests/standin/cuda_plan.h format/cuda_funcs.h

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
$(OUT)/tests/workloads/cuda_calls $(OUT)/tests/workloads/launch_rate $(OUT)/tests/workloads/cuda_steady \
		$(OUT)/tests/workloads/cuda_copies: $(OUT)/tests/workloads/%: tests/workloads/%.c \
		$(STANDIN_LIB) $(STANDIN_HDRS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(STANDIN_CFLAGS) $< -L$(STANDIN_DIR) -l:libcuda.so.1 -Wl,--enable-new-dtags \
		-Wl,-rpath,'$$ORIGIN/../standin' -pthread -o $@

# The stand-in libnccl.so.2 (tests/standin/libnccl.c): push %rbp first, as
# the CUDA stand-in; nccl_job finds it through RUNPATH $ORIGIN/../standin.
STANDIN_NCCL := $(STANDIN_DIR)/libnccl.so.2
NCCL_HDRS    := tests/standin/nccl_api.h tests/standin/nccl_plan.h

$(STANDIN_NCCL): tests/standin/libnccl.c $(NCCL_HDRS)
	@mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(CLANG) $(CSTD) $(WARN) -O2 -g -fPIC -Itests/standin $(STANDIN_FP) -fcf-protection=none -shared \
		-Wl,-soname,libnccl.so.2 -Wl,-z,defs $< -o $@

$(OUT)/tests/workloads/nccl_job: tests/workloads/nccl_job.c $(STANDIN_NCCL) $(NCCL_HDRS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CSTD) $(WARN) -O2 -g -Itests/standin $< -L$(STANDIN_DIR) -l:libnccl.so.2 \
		-Wl,--enable-new-dtags -Wl,-rpath,'$$ORIGIN/../standin' -o $@

# The stand-in libnvToolsExt.so.1 (NVTX 2's shared library, with NVTX's own
# header) and the training loop that uses it with the stand-in libcuda.
STANDIN_NVTX := $(STANDIN_DIR)/libnvToolsExt.so.1

$(STANDIN_NVTX): tests/standin/libnvtx.c
	@mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CSTD) $(WARN) -O2 -g -fPIC -I$(CUDA_INC) -shared -Wl,-soname,libnvToolsExt.so.1 -Wl,-z,defs $< -o $@

$(OUT)/tests/workloads/steps: tests/workloads/steps.c $(STANDIN_LIB) $(STANDIN_NVTX) $(STANDIN_HDRS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(STANDIN_CFLAGS) $< -L$(STANDIN_DIR) -l:libcuda.so.1 -l:libnvToolsExt.so.1 -Wl,--enable-new-dtags \
		-Wl,-rpath,'$$ORIGIN/../standin' -o $@

# Injection tests: the same target linked statically (nothing to dlopen
# with), and the library they load.
INJECT_TARGETS := $(OUT)/tests/workloads/inject_target_static $(OUT)/tests/workloads/libinject_probe.so \
	$(OUT)/tests/tools/inject_cli

# Static, for tests/gpu/inject.sh on the GPU machine.
$(OUT)/tests/tools/inject_cli: tests/tools/inject_cli.c $(OUT)/obj/user/inject/inject.o $(OUT)/obj/lib/clock.o \
		$(OUT)/obj/lib/elf_file.o $(OUT)/obj/lib/proc.o $(OUT)/obj/lib/buf.o
	@mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(CC) -static $(CSTD) $(WARN) $(CFLAGS) $(INJECT_INC) $^ $(STATIC_LIBS) -o $@

# Synthetic recordings and a peak-memory meter for the analysis benchmark
# (tests/bench/analysis.sh) and tests/integration/test_stream.c.
SYNTH_REC := $(OUT)/tests/tools/synth_rec
PEAK_RSS  := $(OUT)/tests/tools/peak_rss

$(SYNTH_REC): tests/tools/synth_rec.c $(OUT)/obj/user/record/rec_writer.o $(OUT)/obj/format/registry.o $(OUT)/obj/lib/buf.o $(OUT)/obj/lib/clock.o \
	$(OUT)/obj/lib/out_file.o
	@mkdir -p $(@D) $(OUT)/deps
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CSTD) $(WARN) $(CFLAGS) $(RECORD_INC) $(BINDEP) $(filter %.c,$^) $(filter %.o,$^) \
		-lzstd -lz -o $@

# The man page's generated parts and the bash completion, from the table of
# commands (user/cli/cli_docs.h): `make docs` writes them into dist/.
CLI_DOCS := $(OUT)/tests/tools/cli_docs

$(CLI_DOCS): tests/tools/cli_docs.c $(CORE_OBJS) $(LOADER_OBJS)
	@mkdir -p $(@D) $(OUT)/deps
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CSTD) $(WARN) $(CFLAGS) $(CLI_INC) $(BINDEP) $< $(CORE_OBJS) $(LOADER_OBJS) $(DYN_LIBS) -o $@

$(PEAK_RSS): tests/tools/peak_rss.c
	@mkdir -p $(@D) $(OUT)/deps
	$(call msg,CC,$@)
	$(Q)$(CC) $(CSTD) $(WARN) $(CFLAGS) $(BINDEP) $< -o $@

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

$(FORMAT_TABLES): tests/unit/format_tables.c
	@mkdir -p $(@D) $(OUT)/deps
	$(call msg,CC,$@)
	$(Q)$(CC) $(CSTD) $(WARN) $(FORMAT_INC) $(BINDEP) $< -o $@

# Every include of every folder against the include folders it is given
# (PARTS: a header too, and "../x.h" that would reach around them), and no
# include cycle among the modules of a folder.
boundaries:
	$(Q)python3 scripts/boundaries.py $(foreach p,$(PARTS),'$(call part_dir,$(p)):$(strip $(call part_inc,$(p)))')
	$(Q)python3 scripts/include_cycles.py $(foreach p,$(PARTS),$(call part_dir,$(p)))

test-build: boundaries $(OUT)/inferscope-bpf $(DYN_OUT)/inferscope-bpf $(ASAN_OUT)/inferscope-bpf $(UNIT_BINS) $(INTEG_BINS) $(WORKLOADS) $(INJECT_TARGETS) $(OUT)/kci-init \
	$(EXAMPLES) $(FORMAT_TABLES) $(SYNTH_REC) $(PEAK_RSS) $(CLI_DOCS) $(FUZZ_BIN) $(MAKE_CORPUS)

test: deps
	$(Q)$(MAKE) --no-print-directory test-build
	$(Q)sh tests/run.sh

# The unit tests need neither clang, bpftool nor root (test_outputs runs
# protoc and chromium).
unit-build: boundaries $(UNIT_BINS) $(FORMAT_TABLES)

unit: unit-build
	$(Q)sh tests/run.sh unit

integration: test-build
	$(Q)sh tests/run.sh integration

demo: deps
	$(Q)$(MAKE) --no-print-directory $(OUT)/inferscope-bpf $(EXAMPLES) $(STANDIN_LIB)
	$(Q)sh scripts/demo.sh

# Overhead benchmarks: table on stdout, JSON in build/bench.json, and the
# regression gate that kernel CI runs (tests/bench/thresholds.json). Root.
bench: $(OUT)/inferscope-bpf $(OUT)/tests/workloads/launch_rate
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

# What tracing costs an NCCL call, beside a CUDA launch's, on this machine
# (tests/bench/nccl_cost.sh). Root.
bench-nccl: $(OUT)/inferscope-bpf $(OUT)/tests/workloads/nccl_job $(OUT)/tests/workloads/launch_rate
	$(Q)sh tests/bench/nccl_cost.sh

# /init of the initramfs scripts/kci-vm.sh boots a kernel under test with.
$(OUT)/kci-init: scripts/kci-init.c
	@mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(CC) -static $(CSTD) $(WARN) -O2 $< -o $@

# Analysis throughput and peak memory on synthetic recordings of 20 million
# events and on the files of issue 19 (tests/bench/analysis.sh).
bench-analysis: $(OUT)/inferscope-bpf $(SYNTH_REC) $(PEAK_RSS)
	$(Q)sh tests/bench/analysis.sh

# --- install -----------------------------------------------------------------
PREFIX     ?= /usr/local
SYSCONFDIR ?= /etc
SBINDIR    ?= $(PREFIX)/sbin
LIBDIR     ?= $(PREFIX)/lib/inferscope-bpf
UNITDIR    ?= $(PREFIX)/lib/systemd/system
MANDIR     ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions

# An existing configuration is never overwritten.
install: $(DYN_OUT)/inferscope-bpf $(BRIDGE)
	$(Q)install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(SYSCONFDIR)/inferscope-bpf
	$(Q)install -m 0755 $(DYN_OUT)/inferscope-bpf $(DESTDIR)$(SBINDIR)/inferscope-bpf
	$(Q)install -m 0644 $(BRIDGE) $(DESTDIR)$(LIBDIR)/libinferscope_cupti.so
	$(Q)sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' dist/inferscope-bpf.service.in \
		> $(DESTDIR)$(UNITDIR)/inferscope-bpf.service
	$(Q)chmod 0644 $(DESTDIR)$(UNITDIR)/inferscope-bpf.service
	$(Q)install -m 0644 dist/man/man8/inferscope-bpf.8 $(DESTDIR)$(MANDIR)/man8/inferscope-bpf.8
	$(Q)install -m 0644 dist/inferscope-bpf.bash $(DESTDIR)$(BASHCOMPDIR)/inferscope-bpf
	$(Q)if [ -e $(DESTDIR)$(SYSCONFDIR)/inferscope-bpf/config.yaml ]; then \
		echo "install: keeping $(DESTDIR)$(SYSCONFDIR)/inferscope-bpf/config.yaml"; \
	else \
		sed -e 's|^  # cupti_bridge: .*|  cupti_bridge: $(LIBDIR)/libinferscope_cupti.so|' dist/config.yaml \
			> $(DESTDIR)$(SYSCONFDIR)/inferscope-bpf/config.yaml && \
		chmod 0644 $(DESTDIR)$(SYSCONFDIR)/inferscope-bpf/config.yaml; \
	fi

docs: $(FORMAT_TABLES) $(CLI_DOCS)
	$(Q)sh scripts/update-docs.sh $(FORMAT_TABLES) $(CLI_DOCS)

$(OUT)/bpf:
	$(Q)mkdir -p $@

clean:
	$(Q)rm -rf $(OUT)

# What the compiler found each object to include (-MMD).
-include $(shell find $(OUT) -name '*.d' 2>/dev/null)
