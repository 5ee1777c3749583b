/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The XDP program's skeleton with the types it names: its data sections hold
 * struct rl_config (rl_common.h), struct rl_rules_cfg (rl_rules.h) and
 * struct rl_evctl (rl_events.h) and struct rl_hot (rl_hot.h), which bpftool
 * does not define. Include
 * this, never the skeleton itself.
 */
#ifndef RL_SKEL_H
#define RL_SKEL_H

#include "rl_common.h"
#include "rl_events.h"
#include "rl_rules.h"
#include "rl_hot.h"
#include "xdp_ratelimit.skel.h"

#endif /* RL_SKEL_H */
