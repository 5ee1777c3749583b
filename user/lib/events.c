// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Drop samples: the reader's switch (see events.h and include/rl_events.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "events.h"
#include "level.h"
#include "policy.h"

static const char *const reason_names[RL_EV__COUNT] = {
	[RL_EV_LIMITED] = "limited",
	[RL_EV_WOULD_DROP] = "would-drop",
	[RL_EV_INSERT_FAIL] = "insert-failed",
	[RL_EV_CAS_EXHAUSTED] = "cas-exhausted",
	[RL_EV_MALFORMED + RL_BAD_ETH] = "malformed-eth",
	[RL_EV_MALFORMED + RL_BAD_VLAN] = "malformed-vlan",
	[RL_EV_MALFORMED + RL_BAD_IPV4] = "malformed-ipv4",
	[RL_EV_MALFORMED + RL_BAD_IHL] = "malformed-ihl",
	[RL_EV_MALFORMED + RL_BAD_IPV6] = "malformed-ipv6",
};

const char *rl_ev_reason_name(__u32 reason)
{
	return reason < RL_EV__COUNT && reason_names[reason] ? reason_names[reason] : "unknown";
}

const char *rl_ev_what(const struct rl_event *e, char *buf, size_t len)
{
	if (!e->level)
		snprintf(buf, len, "%s", rl_ev_reason_name(e->reason));
	else
		snprintf(buf, len, "%s-%s", rl_ev_reason_name(e->reason), rl_level_name(e->level));
	return buf;
}

static int write_ctl(const struct rl_pins *pins, const struct rl_evctl *ctl)
{
	__u32 zero = 0;

	return bpf_map_update_elem(pins->evctl, &zero, ctl, BPF_ANY) ? -errno : 0;
}

int rl_events_enable(const struct rl_pins *pins, __u32 one_in, __u32 max_rate, pid_t pid, char *err,
		     size_t errlen)
{
	struct rl_policy pol;
	struct rl_evctl ctl;
	struct rl_evcpu *zeros = NULL;
	__u32 zero = 0;
	int ncpu, ret;

	if (!one_in || !max_rate || max_rate > RL_EV_MAX_RATE) {
		snprintf(err, errlen, "sampling needs 1 in N >= 1 and 1 to %u samples a second",
			 RL_EV_MAX_RATE);
		return -EINVAL;
	}
	if (bpf_map_lookup_elem(pins->evctl, &zero, &ctl)) {
		ret = -errno;
		snprintf(err, errlen, "couldn't read rl_evctl: %s", strerror(errno));
		return ret;
	}
	/*
	 * kill(pid, 0): ESRCH is a reader that died without turning sampling
	 * off (killed with SIGKILL, a crash); it is taken over. A pid reused
	 * by an unrelated process since then reads as alive: refused, with the
	 * pid named, so that the user can check it.
	 */
	if (ctl.on && ctl.pid && (pid_t)ctl.pid != pid &&
	    (kill((pid_t)ctl.pid, 0) == 0 || errno == EPERM)) {
		snprintf(err, errlen,
			 "another reader (pid %u) is reading the drop samples: stop it first",
			 ctl.pid);
		return -EBUSY;
	}
	/* The cap: a fixed window of one second, max_rate samples in it. */
	rl_policy_defaults(&pol);
	pol.algo = RL_ALGO_FIXED_WINDOW;
	pol.rate_num = max_rate;
	pol.rate_den = 1;
	pol.window_ns = 1000000000ULL;
	pol.algo_set = pol.rate_set = pol.window_set = true;
	memset(&ctl, 0, sizeof(ctl));
	ret = rl_params_init(&ctl.cap, &pol, err, errlen);
	if (ret)
		return ret;
	ctl.one_in = one_in;
	ctl.pid = (__u32)pid;
	/* Second 2^32 - 1: none the clock reaches, so the first second starts empty. */
	ctl.win = 0xffffffffULL << 32;
	/*
	 * Off first, then the countdowns, then on: a CPU that still saw the
	 * switch on while the parameters change picks at worst one packet
	 * by the old ones.
	 */
	ret = write_ctl(pins, &(struct rl_evctl){ .pid = (__u32)pid });
	if (ret)
		goto fail;
	ncpu = libbpf_num_possible_cpus();
	if (ncpu < 0) {
		ret = ncpu;
		goto fail;
	}
	zeros = calloc((size_t)ncpu, sizeof(*zeros));
	if (!zeros) {
		ret = -ENOMEM;
		goto fail;
	}
	if (bpf_map_update_elem(pins->evcpu, &zero, zeros, BPF_ANY)) {
		ret = -errno;
		goto fail;
	}
	ctl.on = 1;
	ret = write_ctl(pins, &ctl);
	if (ret)
		goto fail;
	free(zeros);
	return 0;
fail:
	free(zeros);
	snprintf(err, errlen, "couldn't turn sampling on: %s", strerror(-ret));
	return ret;
}

int rl_events_disable(const struct rl_pins *pins, pid_t pid)
{
	struct rl_evctl ctl;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(pins->evctl, &zero, &ctl))
		return -errno;
	if (pid && (pid_t)ctl.pid != pid)
		return 0; /* taken over by another reader: it is theirs now */
	return write_ctl(pins, &(struct rl_evctl){});
}

int rl_events_tally(const struct rl_pins *pins, struct rl_evcpu *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	struct rl_evcpu *v;
	__u32 zero = 0;
	int ret = 0;

	if (ncpu < 0)
		return ncpu;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	memset(sum, 0, sizeof(*sum));
	if (bpf_map_lookup_elem(pins->evcpu, &zero, v)) {
		ret = -errno;
		goto out;
	}
	for (int i = 0; i < ncpu; i++) {
		sum->sent += v[i].sent;
		sum->capped += v[i].capped;
		sum->lost += v[i].lost;
	}
out:
	free(v);
	return ret;
}
