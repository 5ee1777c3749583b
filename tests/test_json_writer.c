// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The JSON writer (user/lib/json_writer.c): commas, nesting and escapes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "json_writer.h"
#include "test.h"

TEST(json_writer_document)
{
	struct rl_json w;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!ASSERT_TRUE(f != NULL, "open_memstream"))
		return;
	jw_init(&w, f);
	jw_start_object(&w);
	jw_string_field(&w, "iface", "eth\"0\\\n\x01");
	jw_uint_field(&w, "max", 18446744073709551615ULL);
	jw_int_field(&w, "neg", -5);
	jw_bool_field(&w, "ok", true);
	jw_double_field(&w, "r", "%.2f", 1.5);
	jw_double_field(&w, "nan", "%.2f", NAN);
	jw_name(&w, "list");
	jw_start_array(&w);
	jw_uint(&w, 1);
	jw_start_object(&w);
	jw_end_object(&w);
	jw_start_array(&w);
	jw_end_array(&w);
	jw_null(&w);
	jw_end_array(&w);
	jw_end_object(&w);
	jw_end(&w);
	/* A second document after jw_end() starts without a comma. */
	jw_start_array(&w);
	jw_string(&w, "x");
	jw_end_array(&w);
	jw_end(&w);
	fclose(f);
	ASSERT_STREQ(buf,
		     "{\"iface\":\"eth\\\"0\\\\\\n\\u0001\",\"max\":18446744073709551615,"
		     "\"neg\":-5,\"ok\":true,\"r\":1.50,\"nan\":null,\"list\":[1,{},[],null]}\n"
		     "[\"x\"]\n",
		     "the document");
	free(buf);
}
