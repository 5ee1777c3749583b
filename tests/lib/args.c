// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* No test.h here: the bench links this file too and reports errors its own way. */
#include <errno.h>
#include <stdio.h>
#include "args.h"

/* More words than any test or bench policy uses. */
#define RL_TEST_MAX_ARGS 64

int rl_test_policy(struct rl_policy *pol, struct rl_opts *o, const char *const *args, char *err,
		   size_t errlen)
{
	char *argv[RL_TEST_MAX_ARGS];
	int argc = 0, ret;

	while (args[argc]) {
		if (argc == RL_TEST_MAX_ARGS) {
			snprintf(err, errlen, "more than %d words", RL_TEST_MAX_ARGS);
			return -E2BIG;
		}
		/* The parsers take argv as main() gets it; they do not write to it. */
		argv[argc] = (char *)args[argc];
		argc++;
	}
	rl_policy_defaults(pol);
	if (o)
		rl_opts_defaults(o);
	for (int i = 0; i < argc; i++) {
		ret = rl_policy_option(pol, argc, argv, &i, err, errlen);
		if (!ret && o)
			ret = rl_opts_option(o, argc, argv, &i, err, errlen);
		if (ret == 1)
			continue;
		if (ret < 0)
			return ret;
		snprintf(err, errlen, "'%s' is not a policy %soption", argv[i],
			 o ? "or attach " : "");
		return -EINVAL;
	}
	return 0;
}
