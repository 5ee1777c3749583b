/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libmicrohttpd, loaded when the exporter starts (see dynlib.h). Call through
 * the table, rl_mhd.MHD_start_daemon(...), after rl_mhd_load().
 */
#ifndef RL_DYNLIB_MHD_H
#define RL_DYNLIB_MHD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <microhttpd.h>
#include "dynlib.h"

/*
 * The SONAME of the libmicrohttpd the project is built against, and its
 * Debian package: Debian 12's name, and Debian 13's (64-bit time_t).
 */
#define RL_MHD_SONAME	 "libmicrohttpd.so.12"
#define RL_MHD_PACKAGE	 "libmicrohttpd12"
#define RL_MHD_PACKAGE13 "libmicrohttpd12t64"

#define RL_MHD_FNS(X)                      \
	X(MHD_start_daemon)                \
	X(MHD_stop_daemon)                 \
	X(MHD_get_daemon_info)             \
	X(MHD_get_connection_info)         \
	X(MHD_create_response_from_buffer) \
	X(MHD_add_response_header)         \
	X(MHD_queue_response)              \
	X(MHD_destroy_response)

struct rl_mhd_fns {
	RL_MHD_FNS(RL_DYN_FIELD)
};

/* Filled by rl_mhd_load(). */
extern struct rl_mhd_fns rl_mhd;

/* Load libmicrohttpd for @who ("the exporter"): 0, or -ELIBACC and why in @err (dynlib.h). */
int rl_mhd_load(const char *who, char *err, size_t errlen);

#endif /* RL_DYNLIB_MHD_H */
