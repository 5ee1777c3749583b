# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# make          build build/xdp-ratelimit (BPF object embedded via a bpftool skeleton)
# make test     install what is missing, build, run every test (needs root for the kernel tests)
# make demo     install what is missing, build, show the limiter working on a veth pair
# make bench    benchmarks (not part of make test)
# make fuzz     the long differential fuzzing run
# make install  install the program, its man page, systemd units and bash completion
#               (PREFIX=/usr/local, DESTDIR, SBINDIR, MANDIR, SYSTEMDUNITDIR, ...; see below)
# make uninstall  remove exactly what make install put there (same variables)
# make deb      the Debian package, built by dpkg-buildpackage from a copy of this tree in
#               $(BUILD)/deb/, where the .deb lands, then lintian on it (debian/; make deb-deps)
# make deb-check  make deb, then install it, check what it put where, purge it, check that
#               nothing is left (as root, on this machine: tests/deb-check.sh)
# make deps     install the Debian packages the build and tests need (as root)
# make format   clang-format every C source and header (bpf/ include/ user/ tests/ bench/)
# make check-format  fail if one of them differs from .clang-format (what CI runs)
# make check-layering  fail on an include circle or an include up the layers (CI runs it;
#               tests/check-layering.sh -v prints each unit's floor)
# V=1 shows the commands.

BUILD    ?= build
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
ARCH     := $(shell uname -m)
BPF_ARCH := $(patsubst x86_64,x86,$(patsubst aarch64,arm64,$(ARCH)))

DEB_PKGS := clang clang-format llvm libbpf-dev bpftool libxdp-dev libelf-dev zlib1g-dev pkg-config \
	    iproute2 netsniff-ng xdp-tools iperf3 systemd bash-completion libmicrohttpd-dev \
	    prometheus curl python3 libpcap-dev tcpdump tshark libyaml-dev iputils-ping hping3 \
	    libhiredis-dev redis-server redis-sentinel nftables libnftables-dev gnuplot-nox
# Only to build the Debian package (make deb, make deb-check): make deb-deps.
DEB_BUILD_PKGS := debhelper dpkg-dev lintian

CFLAGS   ?= -O2 -g
# CPPFLAGS and LDFLAGS are the caller's (dpkg-buildflags' hardening when packaged).
CFLAGS   += -D_GNU_SOURCE -std=gnu11 -Wall -Wextra -Werror -Wno-format-truncation -Iinclude -I$(BUILD)
# clang 14 finds asm/types.h only in the multiarch directory; -mcpu=v3 for atomics.
BPF_CFLAGS := -O2 -g -target bpf -mcpu=v3 -D__TARGET_ARCH_$(BPF_ARCH) -Wall -Werror \
	      -Iinclude -I/usr/include/$(ARCH)-linux-gnu
# libmicrohttpd (the exporter's HTTP server), libpcap (simulate --pcap, events
# --pcap) and libnftables (--syn-proxy nft): their headers only. They are not
# linked but loaded by the commands that need them (user/lib/dynlib*.c), so
# that the others do not pay their start-up (docs/design.md, "Optional
# libraries"); debian/control names their packages.
MHD_CFLAGS := $(shell pkg-config --cflags libmicrohttpd 2>/dev/null)
CFLAGS   += $(MHD_CFLAGS)
# libyaml: the configuration file of apply.
YAML_CFLAGS := $(shell pkg-config --cflags yaml-0.1 2>/dev/null)
YAML_LIBS   := $(shell pkg-config --libs yaml-0.1 2>/dev/null || echo -lyaml)
CFLAGS   += $(YAML_CFLAGS)
LDLIBS   := -lxdp -lbpf -lelf -lz -lpthread $(YAML_LIBS) -lhiredis -ldl

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
# user/lib/: the library (one archive, a header per unit); user/cli/: main,
# the command table, one file per command family and the build-time
# generators of the man page and the bash completion, on the library. The
# library is compiled without user/cli/ on its include path, so it cannot
# include the CLI; tests and the bench link the library only.
LIB_SRCS  := $(wildcard user/lib/*.c)
CLI_SRCS  := user/cli/cli.c $(wildcard user/cli/cmd_*.c)
GEN_SRCS  := user/cli/gen_man.c user/cli/gen_completion.c
LIB_OBJS  := $(patsubst user/lib/%.c,$(BUILD)/user/lib/%.o,$(LIB_SRCS))
CLI_OBJS  := $(patsubst user/cli/%.c,$(BUILD)/user/cli/%.o,$(CLI_SRCS))
LIB       := $(BUILD)/libxdp-ratelimit.a
MAN       := $(BUILD)/xdp-ratelimit.8
COMPLETION := $(BUILD)/xdp-ratelimit.bash
# tests/lib/: the framework (runner, ASSERT_*) and the helpers the tests share.
TEST_SRCS := $(wildcard tests/*.c tests/lib/*.c)
TEST_OBJS := $(patsubst tests/%.c,$(BUILD)/tests/%.o,$(TEST_SRCS))
HDRS      := $(wildcard include/*.h user/lib/*.h user/cli/*.h tests/lib/*.h bpf/*.h)

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all clean test demo bench fuzz deps format check-format check-layering check-root install \
	uninstall deb deb-deps deb-check

all: $(BUILD)/xdp-ratelimit $(BUILD)/test-runner $(MAN) $(COMPLETION)

$(BUILD) $(BUILD)/user/lib $(BUILD)/user/cli $(BUILD)/tests $(BUILD)/tests/lib:
	$(Q)mkdir -p $@

# Static pattern rules, so that the bench's objects under $(BUILD)/bench/ never
# match these.
$(BPF_OBJS): $(BUILD)/%.bpf.o: bpf/%.bpf.c $(HDRS) | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(SKELS): $(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*) > $@

$(BUILD)/user/lib/%.o: user/lib/%.c $(HDRS) $(SKELS) | $(BUILD)/user/lib
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -Iuser/lib -c $< -o $@

$(BUILD)/user/cli/%.o: user/cli/%.c $(HDRS) $(SKELS) | $(BUILD)/user/cli
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -Iuser/lib -Iuser/cli -c $< -o $@

$(BUILD)/tests/%.o: tests/%.c $(HDRS) $(SKELS) | $(BUILD)/tests $(BUILD)/tests/lib
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -Iuser/lib -Itests/lib -c $< -o $@

$(LIB): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/xdp-ratelimit: $(BUILD)/user/cli/main.o $(CLI_OBJS) $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# The man page: hand-written prose, option lists from the option table.
$(BUILD)/gen-man: $(BUILD)/user/cli/gen_man.o $(CLI_OBJS) $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(MAN): docs/xdp-ratelimit.8.in $(BUILD)/gen-man
	$(call msg,MAN,$@)
	$(Q)$(BUILD)/gen-man $< > $@

# The bash completion: hand-written logic, commands and options from the tables.
$(BUILD)/gen-completion: $(BUILD)/user/cli/gen_completion.o $(CLI_OBJS) $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(COMPLETION): dist/xdp-ratelimit.bash.in $(BUILD)/gen-completion
	$(call msg,GEN,$@)
	$(Q)$(BUILD)/gen-completion $< > $@

# Tests link the library, not the command files.
$(BUILD)/test-runner: $(TEST_OBJS) $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS) -lpthread

# ---- install ----
# DESTDIR stages the tree (packaging, tests); PREFIX is where it will run, so
# the units name $(SBINDIR)/xdp-ratelimit without DESTDIR. The units are made
# from dist/*.service.in at install time, so a PREFIX given to make install
# alone is the one they carry. SYSCONFDIR is /etc even for /usr/local: the
# units read /etc/xdp-ratelimit/IFACE.env, where systemd users look.
PREFIX         ?= /usr/local
SBINDIR        ?= $(PREFIX)/sbin
MANDIR         ?= $(PREFIX)/share/man
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
BASHCOMPDIR    ?= $(PREFIX)/share/bash-completion/completions
DOCDIR         ?= $(PREFIX)/share/doc/xdp-ratelimit
# Data for other programs: the Grafana dashboard of the exporter's metrics.
DATADIR        ?= $(PREFIX)/share/xdp-ratelimit
SYSCONFDIR     ?= /etc
UNITS          := $(patsubst dist/%.in,%,$(wildcard dist/*.service.in))
# The example configuration files of apply: every examples/*.yaml.
EXAMPLES       := $(notdir $(wildcard examples/*.yaml))

install: $(BUILD)/xdp-ratelimit $(MAN) $(COMPLETION)
	$(Q)mkdir -p $(BUILD)/dist
	$(Q)for u in $(UNITS); do \
		sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
			dist/$$u.in > $(BUILD)/dist/$$u || exit 1; \
	done
	install -D -m 0755 $(BUILD)/xdp-ratelimit $(DESTDIR)$(SBINDIR)/xdp-ratelimit
	install -D -m 0644 $(MAN) $(DESTDIR)$(MANDIR)/man8/xdp-ratelimit.8
	$(Q)for u in $(UNITS); do \
		echo "install -D -m 0644 $(BUILD)/dist/$$u $(DESTDIR)$(SYSTEMDUNITDIR)/$$u"; \
		install -D -m 0644 $(BUILD)/dist/$$u $(DESTDIR)$(SYSTEMDUNITDIR)/$$u || exit 1; \
	done
	install -D -m 0644 $(COMPLETION) $(DESTDIR)$(BASHCOMPDIR)/xdp-ratelimit
	$(Q)for f in $(EXAMPLES); do \
		echo "install -D -m 0644 examples/$$f $(DESTDIR)$(DOCDIR)/examples/$$f"; \
		install -D -m 0644 examples/$$f $(DESTDIR)$(DOCDIR)/examples/$$f || exit 1; \
	done
	install -D -m 0644 dist/grafana-dashboard.json $(DESTDIR)$(DATADIR)/grafana-dashboard.json

# Removes the files above and the package's own doc and data directories if empty; never
# a shared directory (sbin, man8, the unit and completion directories), even
# empty: on a real system they belong to others.
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/xdp-ratelimit $(DESTDIR)$(MANDIR)/man8/xdp-ratelimit.8 \
	      $(DESTDIR)$(BASHCOMPDIR)/xdp-ratelimit \
	      $(addprefix $(DESTDIR)$(SYSTEMDUNITDIR)/,$(UNITS)) \
	      $(addprefix $(DESTDIR)$(DOCDIR)/examples/,$(EXAMPLES)) \
	      $(DESTDIR)$(DATADIR)/grafana-dashboard.json
	-$(Q)rmdir $(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(DOCDIR) 2>/dev/null
	-$(Q)rmdir $(DESTDIR)$(DATADIR) 2>/dev/null
# ---- end of install ----

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

deb-deps:
	$(Q)$(MAKE) --no-print-directory deps DEB_PKGS="$(DEB_BUILD_PKGS)"

# ---- the Debian package ----
# dpkg-buildpackage writes its results into the parent of the tree it builds,
# so it builds a copy of this tree (what git would keep: no build directories)
# in $(BUILD)/deb/xdp-ratelimit-VERSION/, and the .deb, .buildinfo and
# .changes land in $(BUILD)/deb/. debian/rules builds with its own BUILD
# (debian/build) and the flags of dpkg-buildflags.
DEB_VERSION = $(shell dpkg-parsechangelog -l debian/changelog -S Version)
DEB_ARCH    = $(shell dpkg --print-architecture)
DEB_FILE    = $(BUILD)/deb/xdp-ratelimit_$(DEB_VERSION)_$(DEB_ARCH).deb

deb: deb-deps
	$(Q)rm -rf $(BUILD)/deb && mkdir -p $(BUILD)/deb/src
	$(Q)tar -cf - --exclude=./.git --exclude='./build*' --exclude=./debian/build \
		--exclude='./debian/xdp-ratelimit' --exclude='./debian/.debhelper' . | \
		tar -C $(BUILD)/deb/src -xf -
	$(Q)cd $(BUILD)/deb/src && dpkg-buildpackage -us -uc -b -j2 >../build.log 2>&1 || \
		{ tail -n 40 ../build.log; echo "dpkg-buildpackage failed: $(BUILD)/deb/build.log"; exit 1; }
	$(Q)rm -rf $(BUILD)/deb/src
	@echo "  DEB      $(DEB_FILE) (log: $(BUILD)/deb/build.log)"
	$(Q)rc=0; lintian --fail-on error --display-level '>=pedantic' $(DEB_FILE) \
		> $(BUILD)/deb/lintian.txt 2>&1 || rc=$$?; cat $(BUILD)/deb/lintian.txt; \
		echo "  LINTIAN  $$(wc -l < $(BUILD)/deb/lintian.txt) lines, exit $$rc:" \
		"$(BUILD)/deb/lintian.txt"; exit $$rc

deb-check: deb
	$(Q)tests/deb-check.sh $(DEB_FILE)
# ---- end of the Debian package ----

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

# Every C source and header, subfolders included.
check-layering:
	$(Q)tests/check-layering.sh --self-test
	$(Q)tests/check-layering.sh

FORMAT_SRCS = $(shell find bpf include user tests bench -name '*.[ch]' | sort)

format:
	clang-format -i $(FORMAT_SRCS)

# Dry run: names each file clang-format would change; fails if there is one.
check-format:
	$(Q)bad=0; for f in $(FORMAT_SRCS); do \
		clang-format --dry-run --Werror "$$f" >/dev/null 2>&1 || { \
			echo "not formatted: $$f"; bad=$$((bad + 1)); }; \
	done; \
	if [ $$bad -gt 0 ]; then \
		echo "$$bad files differ from .clang-format (see clang-format --dry-run FILE; make format)"; \
		exit 1; \
	fi

clean:
	rm -rf $(BUILD)

# ---- bench: the measuring program of make bench (bench/run.sh builds it) ----
# The bench's own BPF programs (reference limiters, generator, bare drop) live in
# bench/bpf/ and build here into $(BUILD)/bench/; the product's build above never
# builds them. They share the product's parser and verdict headers (-Ibpf).
BENCH_BPF_SRCS := $(wildcard bench/bpf/*.bpf.c)
BENCH_BPF_OBJS := $(patsubst bench/bpf/%.bpf.c,$(BUILD)/bench/%.bpf.o,$(BENCH_BPF_SRCS))
BENCH_SKELS    := $(patsubst bench/bpf/%.bpf.c,$(BUILD)/bench/%.skel.h,$(BENCH_BPF_SRCS))
BENCH_SRCS     := $(wildcard bench/*.c)
BENCH_OBJS     := $(patsubst bench/%.c,$(BUILD)/bench/%.o,$(BENCH_SRCS))

$(BUILD)/bench:
	$(Q)mkdir -p $@

$(BENCH_BPF_OBJS): $(BUILD)/bench/%.bpf.o: bench/bpf/%.bpf.c $(wildcard bench/bpf/*.h) $(HDRS) \
		   | $(BUILD)/bench
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -Ibpf -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(BENCH_SKELS): $(BUILD)/bench/%.skel.h: $(BUILD)/bench/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*) > $@

$(BENCH_OBJS): $(BUILD)/bench/%.o: bench/%.c bench/bench.h $(HDRS) $(SKELS) $(BENCH_SKELS) \
	       | $(BUILD)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Iuser/lib -Ibench -I$(BUILD)/bench -c $< -o $@

$(BUILD)/rl-bench: $(BENCH_OBJS) $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS) -lpthread
# ---- end of bench ----
