/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Options as data. Every option of every command is one struct rl_opt: its
 * name (also its key in a configuration file), short name, value type, where
 * the value is stored in struct rl_args, and its help text. Parsing
 * (getopt_long), --help and the man page all come from these tables, so a
 * flag, its documentation and a file key cannot drift apart.
 */
#ifndef RL_OPTS_H
#define RL_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "config.h"
#include "policy.h"

enum rl_opt_type {
	RL_OPT_FLAG, /* no value: stores true in a bool */
	RL_OPT_U64, /* a whole number in [min, max]: __u64 */
	RL_OPT_U32, /* a whole number in [min, max]: unsigned int */
	RL_OPT_DURATION, /* 1s, 100ms, 250us (ns in [min, max]): __u64 */
	RL_OPT_CHOICE, /* one of choices[]: int, its index */
	RL_OPT_STRING, /* any text: const char * */
	RL_OPT_CUSTOM, /* parsed by ->parse() */
	RL_OPT_LIST, /* parsed by ->parse(), may repeat: each adds to a list (--src) */
};

/* Where an option may appear; a command takes the union of some of these. */
enum rl_opt_group {
	RL_G_GLOBAL = 1 << 0, /* -v, -h, --version */
	RL_G_JSON = 1 << 1, /* --json */
	RL_G_POLICY = 1 << 2, /* the rate policy: attach, set, simulate */
	RL_G_LIMITER = 1 << 3, /* how the program treats packets: attach, set */
	RL_G_ATTACH = 1 << 4, /* attach only */
	RL_G_WATCH = 1 << 5, /* stats --watch */
	RL_G_TOP = 1 << 6, /* top */
	RL_G_SIMULATE = 1 << 7, /* simulate */
	RL_G_RULE = 1 << 8, /* a rule's match and action: rule add, lines of simulate --rules */
	RL_G_EXPORTER = 1 << 9, /* exporter */
	RL_G_EVENTS = 1 << 10, /* events */
	RL_G_APPLY = 1 << 11, /* apply */
	RL_G_SYNC = 1 << 12, /* sync */
	RL_G_CLEANUP = 1 << 13, /* cleanup */
	RL_G_SYN =
		1 << 14, /* --syn-cookies PORTS, --syn-proxy: attach, set, the file's interfaces */
};

/* --watch's range: a tenth of a second keeps a walk of the tables from running back to back. */
#define RL_WATCH_MIN_S 0.1
#define RL_WATCH_MAX_S 3600.0

/*
 * top --sample's default: tracked sources read besides the limited ones
 * (rl_hot). A sixteenth of the default table's million; a table with fewer
 * sources is read whole.
 */
#define RL_TOP_SAMPLE 65536

struct rl_args;
struct rl_rule;

/* Words that are not options a command takes at most: simulate --compare's policies. */
#define RL_MAX_POS 16

struct rl_opt {
	const char *name; /* --name; also the configuration file's key */
	char short_name; /* -x, or 0 */
	enum rl_opt_type type;
	const char *arg; /* the value's name in --help ("RATE"); NULL for a flag */
	size_t off; /* where the value goes in struct rl_args */
	size_t set_off; /* a bool in struct rl_args set when given, or 0 */
	__u64 min, max; /* numbers and durations */
	/*
	 * NULL-terminated. RL_OPT_CHOICE: the values it takes; a custom option:
	 * the named values its parser takes (from the parser's own table, as
	 * rl_algo_names), besides any other form (--proto 6). Completion offers them.
	 */
	const char *const *choices;
	int (*parse)(const char *val, struct rl_args *a, char *err, size_t errlen);
	unsigned int group; /* enum rl_opt_group */
	const char *help;
};

/* Every value any command takes; a command reads the fields of its groups. */
struct rl_args {
	struct rl_policy pol;
	struct rl_opts o;
	bool help, version, json;
	int verbose;
	int mode; /* attach: enum rl_mode */
	__u64 max_sources; /* attach */
	__u64 max_sources6; /* attach; 0: max_sources / 4 */
	const char *share; /* attach --share: the interface whose limiter to share */
	/*
	 * --watch SECONDS (RL_G_WATCH), 0 when not given, else in
	 * [RL_WATCH_MIN_S, RL_WATCH_MAX_S] and maybe fractional: sleep it with
	 * rl_watch_sleep(). --count N: lines to print, 0 for no end.
	 */
	double watch_s;
	__u64 count;
	__u64 top_n; /* top -n */
	const char *top_source; /* top --source ADDR */
	__u64 top_sample; /* top --sample N: states read besides the limited ones */
	bool top_all; /* top --all: every source */
	const char *trace; /* simulate --trace */
	bool summary, quiet; /* simulate */
	const char *rules; /* simulate --rules */
	bool compare; /* simulate --compare: the words are the policies (a->pos) */
	const char *plot; /* simulate --plot FILE.png */
	/*
	 * A rule (RL_G_RULE): --src, --src-file, --proto, --dport and
	 * --tcp-flags go straight into *rule (refused when it is NULL).
	 */
	struct rl_rule *rule;
	bool allow, deny, block_set;
	bool syn_rule; /* rule add --syn-cookies: the rule's action */
	__u64 block_ns;
	const char *before;
	const char *listen; /* exporter --listen; NULL: RL_EXPORTER_LISTEN_STR */
	/* events (and count, shared with stats --watch); pcap is also simulate's --pcap to read */
	const char *pcap;
	__u64 one_in, max_rate, duration_ns;
	bool check, diff, prune, detach; /* apply */
	bool dry_run; /* cleanup --dry-run */
	const char *netns; /* cleanup --netns */
	/* sync */
	const char *redis, *group, *node;
	__u64 sync_interval_ns;
	int sync_fallback; /* enum rl_sync_fallback */
	/* A command that parses its own words (rule): all of them, the command's name first. */
	int argc;
	char **argv;
	/* Words that are not options, in order (the interface name, ...). */
	const char *pos[RL_MAX_POS];
	int npos;
	/* Which options were given, by index in rl_opt_table[]. */
	bool given[128];
};

extern const struct rl_opt rl_opt_table[];
extern const size_t rl_opt_count;

/* Defaults for every field. */
void rl_args_defaults(struct rl_args *a);

/*
 * Parse argv[1..argc-1] with getopt_long, taking the options of @groups in
 * any order and words that are not options into a->pos (at most
 * @max_pos). A repeated option, an unknown one, a bad value or too many
 * words is -EINVAL with a message in @err that names it. With @max_pos < 0,
 * stops at the first word and returns its index (argc if none). Options are
 * taken in order (argv is never permuted), so on an error getopt's optind is
 * the index of the word after the one at fault (or still on a cluster of
 * short options stopped in its middle): the CLI resumes there to find
 * --json and --help past the error (rl_cmd_parse(), user/cli/cli.c).
 */
int rl_args_parse(struct rl_args *a, unsigned int groups, int max_pos, int argc, char **argv,
		  char *err, size_t errlen);

/*
 * Give option @opt the text @val, as "--NAME VAL" on the command line does:
 * the same parser and checks, into the same field, recorded in a->given[]
 * (a flag ignores @val; a list adds to what it holds). The configuration
 * file's way in: it finds the option of a key with rl_opt_find(). -EINVAL
 * with a message about the value alone in @err ("'ten' is not a rate ..."),
 * which the caller prefixes with where the value was given: rl_args_parse()
 * with "--rate: ", apply with "FILE:LINE: eth0: rate: ".
 */
int rl_opt_give(struct rl_args *a, const struct rl_opt *opt, const char *val, char *err,
		size_t errlen);
/* rl_opt_give() without a->given[], its message prefixed "--NAME: ". */
int rl_opt_set(struct rl_args *a, const struct rl_opt *opt, const char *val, char *err,
	       size_t errlen);
const struct rl_opt *rl_opt_find(const char *name, unsigned int groups);
/*
 * The option name of @groups, or word of @extra (NULL-terminated, or NULL),
 * nearest to @word if near enough to be its typo (one edit in a word of up to
 * 4 letters, two in a longer one; a swap of two letters is one), for "did you
 * mean": brust -> burst. NULL if none is, or @word is exact. Words of more
 * than RL_SUGGEST_MAX letters have none.
 */
#define RL_SUGGEST_MAX 32
const char *rl_opt_suggest(const char *word, unsigned int groups, const char *const *extra);

/*
 * A policy, limiter and SYN-cookie options from a NULL-terminated word list such as
 * { "--rate", "10", "--burst=5", NULL }: what tests and benchmarks use, through
 * the same table and parser as the command line.
 */
int rl_policy_parse(struct rl_policy *pol, struct rl_opts *o, const char *const *words, char *err,
		    size_t errlen);

/*
 * Sleep one --watch interval of @seconds (rl_args.watch_s). Returns early, and
 * nonzero, when a signal interrupts it, so a SIGINT handler that sets a flag
 * stops a watch at once; 0 after the whole interval.
 */
int rl_watch_sleep(double seconds);

/* How many options of @groups were given. */
int rl_args_given(const struct rl_args *a, unsigned int groups);

/* The options of @groups for --help, wrapped to 80 columns. */
void rl_opts_usage(FILE *f, unsigned int groups);
/* The options of @groups as man(7) .TP entries. */
void rl_opts_man(FILE *f, unsigned int groups);
/* @s as troff text: a backslash as \e, a leading dot or quote escaped, '-' as \-. */
void rl_man_text(FILE *f, const char *s);

#endif /* RL_OPTS_H */
