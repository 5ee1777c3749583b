/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The XDP attach modes, apart from user/lib/xdp_attach.h (which includes
 * this): options and configuration name a mode without depending on the
 * attach, which depends on the rules.
 */
#ifndef RL_ATTACH_MODE_H
#define RL_ATTACH_MODE_H

enum rl_mode {
	RL_MODE_NATIVE = 0,
	RL_MODE_SKB = 1,
};

#endif /* RL_ATTACH_MODE_H */
