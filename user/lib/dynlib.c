// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The optional libraries, loaded on demand (see dynlib.h). */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "dynlib.h"

int rl_dynlib_load(struct rl_dynlib *lib, const char *who, char *err, size_t errlen)
{
	char pkg[96];
	const char *why;
	void *h, *f;

	if (lib->handle)
		return 0;
	/* RTLD_NOW: a library too old for one of the functions fails here, not mid-command. */
	if (lib->package13)
		snprintf(pkg, sizeof(pkg), "%s (%s on Debian 13)", lib->package, lib->package13);
	else
		snprintf(pkg, sizeof(pkg), "%s", lib->package);
	h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		why = dlerror();
		snprintf(err, errlen, "%s needs %s: install %s (%s)", who, lib->soname, pkg,
			 why ?: "not found");
		return -ELIBACC;
	}
	for (size_t i = 0; i < lib->nsyms; i++) {
		dlerror();
		f = dlsym(h, lib->syms[i].name);
		if (!f) {
			why = dlerror();
			snprintf(err, errlen, "%s needs %s with %s(): install a newer %s (%s)", who,
				 lib->soname, lib->syms[i].name, pkg, why ?: "not found");
			memset(lib->table, 0, lib->size);
			dlclose(h);
			return -ELIBACC;
		}
		memcpy((char *)lib->table + lib->syms[i].off, &f, sizeof(f));
	}
	lib->handle = h;
	return 0;
}
