/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Header parsing for the XDP program: the parsers are include/rl_parse.h,
 * shared with userspace (simulate --pcap replays captures through the same
 * code), included here for the program and the bench's programs.
 *
 * Includes include/ headers and libbpf's only (the bench's programs use it too).
 */
#ifndef RL_PARSING_H
#define RL_PARSING_H

#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "rl_common.h"
#include "rl_parse.h"

#endif /* RL_PARSING_H */
