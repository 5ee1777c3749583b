# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# make          build build/xdp-ratelimit (BPF object embedded via a bpftool skeleton)
# make test     install what is missing, build, run every test (needs root for the kernel tests)
# make demo     install what is missing, build, show the limiter working on a veth pair
# make bench    benchmarks (not part of make test)
# make fuzz     the long differential fuzzing run
# make deps     install the Debian packages the build and tests need (as root)
# make format   clang-format every source file
# V=1 shows the commands.

BUILD    ?= build
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
ARCH     := $(shell uname -m)
BPF_ARCH := $(patsubst x86_64,x86,$(patsubst aarch64,arm64,$(ARCH)))

DEB_PKGS := clang llvm libbpf-dev bpftool libxdp-dev libelf-dev zlib1g-dev pkg-config \
	    iproute2 netsniff-ng xdp-tools iperf3

CFLAGS   ?= -O2 -g
CFLAGS   += -D_GNU_SOURCE -std=gnu11 -Wall -Wextra -Werror -Wno-format-truncation -Iinclude -Iuser -I$(BUILD)
# clang 14 finds asm/types.h only in the multiarch directory; -mcpu=v3 for atomics.
BPF_CFLAGS := -O2 -g -target bpf -mcpu=v3 -D__TARGET_ARCH_$(BPF_ARCH) -Wall -Werror \
	      -Iinclude -I/usr/include/$(ARCH)-linux-gnu
LDLIBS   := -lxdp -lbpf -lelf -lz

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(BUILD)/%.bpf.o,$(BPF_SRCS))
SKELS     := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))
LIB_SRCS  := $(filter-out user/main.c,$(wildcard user/*.c))
LIB_OBJS  := $(patsubst user/%.c,$(BUILD)/user/%.o,$(LIB_SRCS))
TEST_SRCS := $(wildcard tests/*.c)
TEST_OBJS := $(patsubst tests/%.c,$(BUILD)/tests/%.o,$(TEST_SRCS))
HDRS      := $(wildcard include/*.h user/*.h tests/*.h bpf/*.h)

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all clean test demo bench fuzz deps format check-root

all: $(BUILD)/xdp-ratelimit $(BUILD)/test-runner

$(BUILD) $(BUILD)/user $(BUILD)/tests:
	$(Q)mkdir -p $@

$(BUILD)/%.bpf.o: bpf/%.bpf.c $(HDRS) | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*) > $@

$(BUILD)/user/%.o: user/%.c $(HDRS) $(SKELS) | $(BUILD)/user
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/tests/%.o: tests/%.c $(HDRS) $(SKELS) | $(BUILD)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Itests -c $< -o $@

$(BUILD)/xdp-ratelimit: $(BUILD)/user/main.o $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/test-runner: $(TEST_OBJS) $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS) -lpthread

# Installs only what is missing, so it costs nothing on a prepared machine.
deps:
	@missing=""; for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" != 0 ]; then echo "missing packages:$$missing (run make deps as root)"; exit 1; fi; \
		echo "installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

test: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tests/run.sh $(BUILD)

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tests/demo.sh $(BUILD)

bench: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)bench/run.sh $(BUILD)

fuzz: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tests/run.sh $(BUILD) --slow fuzz_long

format:
	clang-format -i $(wildcard bpf/*.c bpf/*.h include/*.h user/*.c user/*.h tests/*.c tests/*.h)

clean:
	rm -rf $(BUILD)

# ---- bench: the measuring program of make bench (bench/run.sh builds it) ----
# Added for the benchmarks only; the rules above are untouched.
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_OBJS := $(patsubst bench/%.c,$(BUILD)/bench/%.o,$(BENCH_SRCS))

$(BUILD)/bench:
	$(Q)mkdir -p $@

$(BUILD)/bench/%.o: bench/%.c bench/bench.h $(HDRS) $(SKELS) | $(BUILD)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Ibench -c $< -o $@

$(BUILD)/rl-bench: $(BENCH_OBJS) $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS) -lpthread
# ---- end of bench ----
