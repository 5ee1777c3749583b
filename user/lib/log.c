// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The log function of log.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "json_writer.h"
#include "log.h"

int rl_verbose;
bool rl_json_errors;

void rl_log(const char *level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	/* Below 0 (tests that provoke warnings on purpose): errors only. */
	if (rl_verbose < 0 && strcmp(level, "error"))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s: %s\n", RL_PROG, level, msg);
	/* bpftool's convention: in JSON mode an error is a JSON document too. */
	if (rl_json_errors && !strcmp(level, "error")) {
		struct rl_json w;

		jw_init(&w, stdout);
		jw_start_object(&w);
		jw_string_field(&w, "error", msg);
		jw_end_object(&w);
		jw_end(&w);
	}
}
