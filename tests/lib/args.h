/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Policy and attach options as on the command line, for the tests and the
 * bench: the one place they turn a word list into a policy, so that a change
 * of the CLI's option parser is followed here once.
 */
#ifndef RL_TEST_ARGS_H
#define RL_TEST_ARGS_H

#include <stddef.h>
#include "config.h"
#include "policy.h"

/*
 * @args, a NULL-terminated word list such as { "--rate", "10", "--burst", "5",
 * NULL }, into @pol and @o, both first set to their defaults. With @o NULL,
 * only policy options are accepted. Returns 0, or a negative errno with a
 * message in @err that names the option (-EINVAL for one neither parser
 * knows, -E2BIG for a list of more than 64 words).
 */
int rl_test_policy(struct rl_policy *pol, struct rl_opts *o, const char *const *args, char *err,
		   size_t errlen);

#endif /* RL_TEST_ARGS_H */
