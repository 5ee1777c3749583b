/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The optional libraries, loaded when a command needs them (dlopen of the
 * SONAME the build was made against) rather than linked: libmicrohttpd (the
 * exporter), libpcap (simulate --pcap, events --pcap), libnftables (the
 * stack's half of --syn-cookies). Linked, their constructors and their own
 * dependencies (gnutls, dbus, gcrypt, ...) cost every command at start,
 * attach, set and status included (docs/design.md, "Optional libraries").
 *
 * Each library's unit (dynlib_mhd, dynlib_pcap, dynlib_nft) declares a table
 * of the functions the project calls, each typed with __typeof__ from the
 * library's own header, so that a call through the table is checked as a
 * direct call would be; the binary does not link the library, so a direct
 * call to it does not link either.
 */
#ifndef RL_DYNLIB_H
#define RL_DYNLIB_H

#include <stddef.h>

/* A member of a table: a pointer to @f, of @f's type from the library's header. */
#define RL_DYN_FIELD(f) __typeof__(f) *f;
/* Its row in the table's list of symbols. */
#define RL_DYN_SYM(type, f) { #f, offsetof(type, f) },

struct rl_dynsym {
	const char *name;
	size_t off; /* of its pointer in the table */
};

struct rl_dynlib {
	const char *soname; /* what dlopen() opens: "libpcap.so.0.8" */
	const char *package; /* the Debian package that has it: "libpcap0.8" */
	const char *package13; /* its Debian 13 name, if that differs: "libpcap0.8t64" */
	const struct rl_dynsym *syms;
	size_t nsyms;
	void *table; /* where the pointers go */
	size_t size; /* of the table */
	void *handle; /* once loaded */
};

/*
 * Load @lib and fill its table, once (later calls return at once). 0, or
 * -ELIBACC with a message in @err: "@who needs SONAME: install PACKAGE (why)"
 * ("install PACKAGE (PACKAGE13 on Debian 13)" where the names differ)
 * for a library that is missing or lacks one of the functions. Nothing is
 * kept of a failed load.
 */
int rl_dynlib_load(struct rl_dynlib *lib, const char *who, char *err, size_t errlen);

#endif /* RL_DYNLIB_H */
