// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* sync: the fleet sync agent in the foreground (user/lib/sync_agent.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "env.h"
#include "sync_agent.h"

int cmd_sync(const struct rl_args *a)
{
	char err[1024], host[256];
	struct rl_sync_cfg cfg = {
		.group = a->group,
		.node = a->node,
		.interval_ns = a->sync_interval_ns,
		.fallback = a->sync_fallback,
	};
	int ret;

	if (!a->redis) {
		pr_err("sync: --redis URL is required (redis://[:PASSWORD@]HOST:PORT[/DB], "
		       "unix:///PATH, sentinel://[:PASSWORD@]HOST:PORT[,HOST:PORT...]/MASTER or "
		       "cluster://HOST:PORT[,HOST:PORT...])");
		return 2;
	}
	ret = rl_redis_url_parse(a->redis, &cfg.url, err, sizeof(err));
	if (ret) {
		pr_err("%s", err);
		return 2;
	}
	if (!cfg.node) {
		if (gethostname(host, sizeof(host))) {
			pr_err("sync: couldn't read the host name (give --node): %s",
			       strerror(errno));
			return 1;
		}
		host[sizeof(host) - 1] = '\0';
		cfg.node = host;
	}
	if (rl_sync_name_check("--group", cfg.group, err, sizeof(err)) ||
	    rl_sync_name_check("--node", cfg.node, err, sizeof(err))) {
		pr_err("%s", err);
		return 2;
	}
	if (rl_check_env(err, sizeof(err))) {
		pr_err("%s", err);
		return 1;
	}
	ret = rl_sync_run(a->pos[0], &cfg, true, NULL, err, sizeof(err));
	if (ret) {
		pr_err("sync: %s", err);
		return 1;
	}
	return 0;
}
