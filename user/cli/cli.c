// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The command table (bpftool's cmds[] is the model) and what every command
 * shares: parsing through the option table, --help, logging.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "env.h"
#include "rl_common.h"
#include "rule.h"

#define IFACE_CMD(g) (RL_G_JSON | (g))

const struct rl_cmd rl_cmds[] = {
	{ "attach", cmd_attach, NULL,
	  IFACE_CMD(RL_G_POLICY | RL_G_LIMITER | RL_G_ATTACH | RL_G_SYN), 1, 1,
	  "IFACE --rate RATE [POLICY OPTIONS] [OPTIONS] | IFACE --share IFACE2",
	  "attach the limiter to an interface",
	  "Loads the limiter and attaches it to IFACE at XDP, alone: not behind libxdp's "
	  "dispatcher, so that set can replace it in one atomic step; an interface that "
	  "already has another XDP program is refused. The attachment outlives this command; "
	  "its maps are pinned under " RL_PIN_ROOT "/ (root only).\n" },
	{ "set", cmd_set, NULL, IFACE_CMD(RL_G_POLICY | RL_G_LIMITER | RL_G_SYN), 1, 1,
	  "IFACE [POLICY OPTIONS]", "change the policy of a running limiter",
	  "Changes the policy of a running limiter, with no detach and no packet lost. Options "
	  "not given keep their values; changing --algo between the bucket and the window "
	  "algorithms resets --burst, --initial and --window to their defaults unless given. A "
	  "policy already in force changes nothing.\n"
	  "What happens to each source: under token-bucket a source keeps the tokens it had, at "
	  "most the new burst; under gcra it keeps its queue level (at most the new burst); "
	  "between the two, the used part of the bucket is kept. So no source is handed a fresh "
	  "burst by a change. Window algorithms keep their counts when the window length and "
	  "algorithm stay the same; otherwise sources start afresh. A new --prefix4/--prefix6 "
	  "regroups sources: each new group starts from the state of the first of its members "
	  "seen after the change.\n" },
	{ "detach", cmd_detach, NULL, IFACE_CMD(0), 1, 1, "IFACE",
	  "remove the limiter and its pins",
	  "Detaches the limiter from IFACE and removes every pin it made. For an interface that "
	  "no longer exists, removes the pins it left.\n" },
	{ "apply", cmd_apply, NULL, IFACE_CMD(RL_G_APPLY), 1, 1,
	  "FILE [--check | --diff | --detach] [--prune]",
	  "make the limiters match a configuration file",
	  "Makes the kernel match FILE, a YAML file naming interfaces with their attach, policy "
	  "and limiter options and their rules, keyed by the options' long names (see "
	  "CONFIGURATION FILE in " RL_PROG "(8)). An interface without the limiter is attached; "
	  "one with another policy gets it live, as with set (no detach, no state lost); one "
	  "with other rules gets its file's rules live, as rule add and del would (rules that "
	  "stay keep their states and counters, the policy its generation); one that matches "
	  "already is left alone, so applying the same file twice changes nothing. Interfaces "
	  "attached but not in FILE are left alone unless --prune.\n"
	  "A file with any error changes nothing on any interface; errors name FILE:LINE and "
	  "the key. Attach options (mode, max-sources, max-sources6) cannot change on a live "
	  "limiter: a file that changes them is refused (detach first).\n"
	  "Exit status: 0 done (or valid with --check), 1 a failure applying it, 2 an "
	  "invalid file or options. With --diff, as diff(1): 0 the kernel matches FILE, 1 it "
	  "differs (something to attach, set, change in the rules or detach), 2 an invalid "
	  "file or options, or the running state could not be read or compared.\n" },
	{ "status", cmd_status, NULL, IFACE_CMD(RL_CMD_READ), 0, 1, "[IFACE]",
	  "where it is attached, how, with which policy",
	  "Shows where the limiter is attached, in which mode, with which policy and which "
	  "rules (by name, in order, default last): on IFACE, or on every interface of this "
	  "network namespace.\n" },
	{ "stats", cmd_stats, NULL, IFACE_CMD(RL_G_WATCH | RL_CMD_READ), 1, 1,
	  "IFACE [--watch SECONDS [--count N]]", "counters, or live per-second rates with --watch",
	  "Prints the limiter's counters, summed over CPUs. With --watch, prints every SECONDS "
	  "the per-second rates until interrupted (or N lines with --count).\n"
	  "The counters are listed, each with what it counts, under COUNTERS in " RL_PROG
	  "(8). Then sources, the sources tracked now (without --watch: it walks the tables), "
	  "with the slots of the IPv4 table: the set-associative table has 4 per source of "
	  "--max-sources and keeps idle sources until their set is full, so the count can "
	  "reach about 4 times --max-sources. With no set in between, new_sources - sources "
	  "is how many the tables have forgotten.\n"
	  "With rules, also per rule: passed, dropped, allowed, denied, limited, blocked, "
	  "would_drop and the sources it tracks; default's passed and dropped are the "
	  "interface's less the other rules'. With --watch, each rule's rates after each "
	  "line.\n"
	  "Where a sync agent ever ran: its state (connected, fallback-local, fallback-share, off, "
	  "or not-running when its process is gone), group and node, the age of its last "
	  "successful sync and its lag, sources active and shared, nodes, and its totals.\n" },
	{ "top", cmd_top, NULL, IFACE_CMD(RL_G_TOP | RL_G_WATCH | RL_CMD_READ), 1, 1,
	  "IFACE [-n N] [--source ADDR | --sample N | --all] [--watch SECONDS [--count N]]",
	  "the sources nearest to or over their limit",
	  "Lists the N sources nearest to or over their limit, the default policy's and those "
	  "that rule limits track (RULE: default, or the rule's name), with their state: USED "
	  "is the part of the burst (or window limit) in use, CREDIT what would pass right now "
	  "(packets, or bytes with a byte rate), NEXT how long until its next packet would pass "
	  "(for a byte rate: a 64-byte packet; for a source a rule blocks: the time left). Then "
	  "the sources blocked by rules with --block, with the rule and the time left. Each "
	  "state is shown against the clock read just after it; a state that is still further "
	  "ahead than the policy can store is shown at the most it can (clamped in --json).\n"
	  "Its work is bounded, whatever the number of sources: it reads the sources the XDP "
	  "program last dropped over their limit (rl_hot: one entry per hash, 4096, so each of "
	  "a few thousand limited sources, and a sample of a flood from more), then a sample of "
	  "the tracked ones (--sample, 65536 by default) and as many rule states; a table with "
	  "fewer sources is read whole. What it can miss: a source near its limit but not over "
	  "it outside the sample, and a limited source whose entry another limited source took "
	  "since. It says so under the table when it read a sample (\"read\" in --json: "
	  "\"whole\" is false); --all reads every source, which takes seconds for millions.\n" },
	{ "events", cmd_events, NULL, IFACE_CMD(RL_G_EVENTS), 1, 1,
	  "IFACE [--json | --pcap FILE] [--one-in N] [--max-rate M] [--count N] [--duration DUR]",
	  "show samples of the packets the limiter drops",
	  "Shows samples of the packets the limiter on IFACE drops, or would drop with --action "
	  "dry-run: 1 in N of them (--one-in), at most M a second (--max-rate), as the XDP "
	  "program sends them to its ring buffer. Sampling is on only while this command runs: "
	  "with no reader, the drop paths pay one test and nothing is sent. It stops on SIGINT "
	  "or SIGTERM, after --count samples or after --duration, and turns sampling off. One "
	  "reader at a time: a second one is refused while the first lives; one that died "
	  "without turning sampling off (SIGKILL) is taken over.\n"
	  "Each line is one sample: TIME (the drop's wall-clock time, to the ns), REASON "
	  "(limited, would-drop, insert-failed, cas-exhausted, or malformed-eth, -vlan, -ipv4, "
	  "-ihl, -ipv6), SOURCE (the unmasked source address, - if the frame has none), LEN (the "
	  "frame's length) and the first 32 bytes of the frame in hex. With --json, one object "
	  "per line: time (ISO 8601, UTC), time_ns (ns since the epoch), iface, ifindex, rule (0: "
	  "the default policy), reason, src, len, caplen and data (the captured bytes, up to "
	  "128, in hex). With --pcap FILE, the samples go to FILE for tcpdump -r or tshark -r, "
	  "and a count of samples to standard error.\n"
	  "Samples the reader missed (the ring was full) and those picked over the cap of a "
	  "second are counted and reported at the end.\n" },
	{ "cleanup", cmd_cleanup, NULL, IFACE_CMD(RL_G_CLEANUP), 0, 1,
	  "[IFACE] [--netns NS] [--dry-run]",
	  "remove orphaned pins (their namespace or interface is gone)",
	  "Removes every orphaned pin directory under " RL_PIN_ROOT ": maps that no loaded "
	  "program uses any more, because their network namespace or their interface was "
	  "deleted, or a command was killed. The pins of a live limiter, in whichever "
	  "namespace, are never removed. \"" RL_PROG " status\" lists orphans.\n"
	  "With IFACE, only the orphans made for an interface of that name; with --netns, only "
	  "those of that namespace; with both, only those of both. With --dry-run, lists what "
	  "it would remove and removes nothing. Exit status 0 (also when there is nothing to "
	  "remove), 1 if a removal failed, 2 for bad options or a namespace that cannot be "
	  "found.\n" },
	{ "exporter", cmd_exporter, NULL, RL_G_EXPORTER | RL_CMD_READ, 0, 0, "[--listen ADDR:PORT]",
	  "serve every limiter's counters to Prometheus",
	  "Serves GET /metrics in the Prometheus text format: the counters of every limiter on "
	  "the host, in every network namespace (labels iface and netns, the namespace's inode), "
	  "read from their pins at each scrape, so that interfaces attached or detached while it "
	  "runs appear and vanish by themselves; also the sources tracked, the table sizes and "
	  "the live policy. Runs in the foreground until SIGINT or SIGTERM (exit status 0); "
	  "prints where it listens on standard error. Needs CAP_BPF and CAP_SYS_ADMIN to read "
	  "the pins (not CAP_NET_ADMIN: it changes nothing); its clients need none.\n"
	  "Each scrape walks the source tables to count the sources: about a thousand batched "
	  "lookups for a million sources. Scrapes run one at a time.\n" },
	/* Its subcommands' rows are in cmd_rule.c; its groups are what its --help documents. */
	{ "rule", NULL, rl_rule_cmds, IFACE_CMD(RL_G_RULE | RL_G_POLICY), 0, 0, NULL,
	  "add, delete or list the rules of a running limiter",
	  "Rules decide packets before the policy given to attach, which is the last rule, "
	  "'default': the first rule that matches a packet decides it (see RULES in the "
	  "manual). rule add puts the new rule after the others, before default, or before "
	  "the rule --before names; rule del deletes one; rule list prints them in order, each "
	  "as the words of rule add (with every source prefix), or as JSON. rule add and del "
	  "print one line saying what they did and the rules now in force, in order (with "
	  "--json an object: iface, result (added or deleted), rule and rules).\n"
	  "A change is live and atomic: the program built for the new rules replaces the "
	  "running one in one step, and every rule that stays keeps its sources' states and "
	  "counters. On any error nothing changes.\n" },
	{ "blocked", cmd_blocked, NULL, IFACE_CMD(RL_G_WATCH | RL_CMD_READ), 1, 1,
	  "IFACE [--watch SECONDS [--count N]] [--json]",
	  "the sources blocked by --block rules, with the time left",
	  "Lists the sources that a limit rule with --block has blocked: the source (masked "
	  "by the rule's prefixes), the rule and the time left.\n" },
	{ "unblock", cmd_unblock, NULL, IFACE_CMD(0), 2, 2, "IFACE ADDR",
	  "lift the blocks of a source",
	  "Lifts every block that holds ADDR (under each rule, the source ADDR belongs to once "
	  "masked by that rule's prefixes): its next packet is a new source's. Exit status 1 "
	  "if ADDR is not blocked.\n" },
	{ "sync", cmd_sync, NULL, RL_G_SYNC, 1, 1,
	  "IFACE --redis URL [--group NAME] [--node NAME] [--interval DUR] [--fallback MODE]",
	  "share the limit of each source with other hosts, through Redis",
	  "Runs in the foreground the agent that makes the limiter on IFACE and those of the "
	  "other nodes of --group enforce one limit per source across all of them (behind a "
	  "load balancer, ECMP or anycast). Each node keeps deciding every packet on its own; "
	  "every --interval the agent sends Redis, in one round trip, the units (packets, or "
	  "bytes) each source passed here, and charges each source what the other nodes passed "
	  "for it. A source seen on one node only is limited as without sync. The fleet passes "
	  "about the limit, plus what the other nodes pass in an interval or two (see "
	  "docs/design.md).\n"
	  "Every node of a group must run the same policy: the agent refuses to start, or "
	  "stops, naming the first difference. One agent per interface: a second is refused. "
	  "When Redis fails the kernel keeps limiting; within two intervals the agent falls back "
	  "(--fallback), says so on standard error, and resumes syncing within two intervals of "
	  "Redis answering again; a Redis that cannot be reached at start is the same (it starts "
	  "in fallback), one that refuses it (a wrong password) stops it. Through sentinel:// it "
	  "writes only to the master the sentinels name (checked with ROLE), and follows a "
	  "failover: in fallback while the master is gone, on the new one as soon as a sentinel "
	  "names it. SIGINT or SIGTERM stop it (exit status 0) and turn the "
	  "counting off. stats shows its state.\n" },
	{ "simulate", cmd_simulate, NULL, IFACE_CMD(RL_G_POLICY | RL_G_SIMULATE), 0, RL_MAX_POS,
	  "[--rate RATE [POLICY OPTIONS]] [--rules FILE] [--trace FILE | --pcap FILE "
	  "[--compare POLICY...]] [--summary] [--quiet]",
	  "replay a packet trace or a capture through the limiter's own code",
	  "Replays a packet trace through the same rate algorithms that the XDP program runs, "
	  "and prints each packet's verdict: \"TIMESTAMP SOURCE allow|drop\".\n"
	  "The trace has one packet per line: TIMESTAMP [SOURCE [LENGTH [PROTO[/DPORT] "
	  "[FLAGS]]]], e.g. \"1.5 198.18.0.1 60 tcp/443 S\". TIMESTAMP: seconds "
	  "with up to 9 decimals, in time order (read exactly). SOURCE: an IPv4 or IPv6 "
	  "address; without it all packets share one source, printed as '-'. LENGTH: the frame "
	  "length in bytes (1-65535, default 64); it is the packet's cost when the rate is a "
	  "byte rate. PROTO: tcp, udp, icmp, icmpv6 or 0-255; DPORT (tcp, udp): the destination "
	  "port, without which the packet shows no L4 header (a fragment after the first); "
	  "FLAGS (tcp with a port): tcpdump's letters, SA for SYN+ACK, '.' for none. Blank lines "
	  "and everything after '#' are ignored. A line may be at most 4096 bytes long and hold "
	  "no NUL byte.\n"
	  "With --rules FILE, packets go through its rules first, one per line as after \"rule "
	  "add IFACE\" (NAME [MATCH OPTIONS] --allow|--deny|--rate RATE ...; see the rule "
	  "options below), the policy options making the last rule, 'default'. Each line then "
	  "ends with the deciding rule's name; --summary prints per-rule counts; --json adds "
	  "\"rule\" and \"reason\" per packet and per-rule totals. A packet without PROTO "
	  "matches only rules without --proto.\n"
	  "With --pcap FILE, the frames of a capture are replayed instead, each at the time it "
	  "was captured, through the XDP program's own parser (the same code, compiled for "
	  "userspace), its rules and its policy, and counted as the program counts them; "
	  "--malformed and --action mean what they mean to attach. Each line is \"TIMESTAMP "
	  "SOURCE allow|drop [RULE] REASON\", REASON in the words of the counters (passed, "
	  "limited, would_drop, not_ip, nd, malformed_ipv4, ...) or of the rule (allowed, "
	  "denied, blocked); --summary adds the counters stats would show. A frame the capture "
	  "cut (tcpdump -s) before a header the parser reads is an error. Not modelled: the "
	  "tables' size (no source is ever forgotten or refused) and the coarse clock.\n"
	  "With --compare, a what-if report instead: the capture replayed in one pass under "
	  "each POLICY given (and under the policy options first if --rate or --rules is "
	  "given), and for each the frames, bytes and sources it drops, the sources it drops "
	  "most of (--sources N), and a plot of its drops over time (text; a PNG with --plot "
	  "FILE). Sources there are addresses, whatever the prefixes a policy groups them by. "
	  "--json prints it all as one object, with the drops over time in bins.\n"
	  "The levels above the source replay too, in the program's order and with its "
	  "steps: --aggregate4/--aggregate6 with --aggregate-rate, --iface-rate, and "
	  "--admit-rate (in the default policy and in limit rules, but --admit-rate). A packet a "
	  "level refused prints the level after drop (\"drop aggregate\", \"drop iface\", "
	  "\"drop new\"; \"level\" in JSON), and --summary adds the refusals by level and "
	  "each aggregate's counts. The model's source table never forgets a source (the "
	  "program's evicts the oldest of a full set), and it remembers the sources the "
	  "admission cap refused one by one, where the program's memory of them can lose one "
	  "to another refusal that hashes alike.\n"
	  "SYN cookies (attach --syn-cookies, syn-cookies rules) are kernel-only: a cookie is "
	  "made from the kernel's secret and checked against it, so simulate refuses a "
	  "syn-cookies rule, and a policy to compare with syn-cookies, and replays the rate "
	  "policy alone.\n"
	  "Exit status: 0 on success, 1 for a malformed trace or a capture that cannot be read "
	  "or replayed, 2 for bad options, rules or policies.\n" },
	/* "help [COMMAND]": the same text as --help, so not listed among the commands. */
	{ "help", cmd_help, NULL, RL_CMD_RAW | RL_CMD_HIDDEN, 0, 1, "[COMMAND]",
	  "show the usage of the program or of a command", "Shows the usage of COMMAND.\n" },
	{ NULL },
};

/*
 * Exact names only, no prefixes (bpftool takes the first row a word is a
 * prefix of): "stat" would be status or stats, and a script's typo must not
 * run another command.
 */
const struct rl_cmd *rl_cmd_find(const struct rl_cmd *cmds, const char *word)
{
	for (const struct rl_cmd *c = cmds; c->name; c++)
		if (!strcmp(c->name, word))
			return c;
	return NULL;
}

/* The command @cmd is a subcommand of, or NULL. */
static const struct rl_cmd *parent_of(const struct rl_cmd *cmd)
{
	for (const struct rl_cmd *c = rl_cmds; c->name; c++)
		for (const struct rl_cmd *s = c->subs; s && s->name; s++)
			if (s == cmd)
				return c;
	return NULL;
}

/* Paragraphs of @text, each wrapped at 80 columns, a blank line between. */
static void paragraphs(FILE *f, const char *text)
{
	while (*text) {
		size_t n = strcspn(text, "\n");
		int col = 0;

		for (size_t i = 0; i < n;) {
			size_t w = i;

			while (w < n && text[w] != ' ')
				w++;
			if (col && col + 1 + (int)(w - i) > 79) {
				fputc('\n', f);
				col = 0;
			} else if (col) {
				fputc(' ', f);
				col++;
			}
			fprintf(f, "%.*s", (int)(w - i), text + i);
			col += (int)(w - i);
			i = w < n ? w + 1 : w;
		}
		fputs("\n\n", f);
		text += n + (text[n] == '\n');
	}
}

void rl_cmd_usage(FILE *f, const struct rl_cmd *cmd)
{
	const struct rl_cmd *parent = parent_of(cmd);
	unsigned int own;

	if (parent)
		cmd = parent;
	own = cmd->groups &
	      ~(RL_G_POLICY | RL_G_GLOBAL | RL_G_RULE | RL_CMD_RAW | RL_CMD_HIDDEN | RL_CMD_READ);
	if (cmd->subs) {
		/* One line per subcommand, from its row. */
		for (const struct rl_cmd *s = cmd->subs; s->name; s++)
			fprintf(f, "%s" RL_PROG " %s %s %s%s",
				s == cmd->subs ? "Usage: " : "       ", cmd->name, s->name,
				s->synopsis, s[1].name ? "\n" : " [-v] [-h]\n\n");
	} else {
		fprintf(f, "Usage: " RL_PROG " %s %s [-v] [-h]\n\n", cmd->name, cmd->synopsis);
	}
	paragraphs(f, cmd->description);
	if (own) {
		fprintf(f, "Options:\n");
		rl_opts_usage(f, own);
		fputc('\n', f);
	}
	if (cmd->groups & RL_G_POLICY) {
		fprintf(f, "Policy options:\n");
		rl_opts_usage(f, RL_G_POLICY);
		fputc('\n', f);
	}
	/* simulate reads rules from its --rules file: their options are its to document. */
	if (cmd->groups & (RL_G_RULE | RL_G_SIMULATE)) {
		fprintf(f, "Rule options%s:\n",
			cmd->groups & RL_G_RULE ? "" : " (the lines of a --rules FILE)");
		rl_opts_usage(f, RL_G_RULE);
		fputc('\n', f);
	}
	fprintf(f, "Global options:\n");
	rl_opts_usage(f, RL_G_GLOBAL);
	fprintf(f, "\nSee " RL_PROG "(8) for the whole manual.\n");
}

void rl_usage(FILE *f)
{
	fprintf(f, "Usage: " RL_PROG " [-v] COMMAND [OPTIONS]\n"
		   "       " RL_PROG " COMMAND --help\n\n");
	paragraphs(f, "A per-source packet rate limiter at XDP, the earliest point of the "
		      "receive path, and the tools to configure and watch it.\n");
	fprintf(f, "Commands:\n");
	for (const struct rl_cmd *c = rl_cmds; c->name; c++)
		if (!(c->groups & RL_CMD_HIDDEN))
			fprintf(f, "  %-10s %s\n", c->name, c->summary);
	fprintf(f, "\nGlobal options:\n");
	rl_opts_usage(f, RL_G_GLOBAL);
	fprintf(f, "\nSee " RL_PROG "(8) for the whole manual.\n");
}

int rl_cmd_parse(struct rl_args *a, unsigned int groups, int max_pos, int argc, char **argv,
		 char *err, size_t errlen)
{
	struct rl_args *cur = a, rest;
	char ignored[RL_ERRLEN];
	bool json = false, help = false;
	int ret, first = 0, base = 0, next;

	for (;;) {
		ret = rl_args_parse(cur, groups, max_pos, argc - base, argv + base,
				    first ? ignored : err, first ? sizeof(ignored) : errlen);
		json |= cur->json;
		help |= cur->help;
		if (!ret)
			break;
		if (!first)
			first = ret;
		/*
		 * Go on after the word at fault: rl_args_parse() is getopt_long()
		 * in order ("-" or "+": argv is never permuted), so optind is the
		 * next word, relative to argv + base; it stays on a cluster of
		 * short options stopped in its middle (-xj), which is then skipped.
		 * The word before the next one stands for argv[0].
		 */
		next = base + optind - 1;
		if (next <= base)
			next = base + 1;
		if (next >= argc - 1)
			break;
		base = next;
		/* Fresh: the rest is checked on its own, only --json and --help kept. */
		rl_args_defaults(&rest);
		cur = &rest;
	}
	a->json |= json;
	a->help |= help;
	return first;
}

/* Subcommand names for a message: "add, del or list". */
static void names(const struct rl_cmd *cmds, char *buf, size_t len)
{
	size_t n = 0, off = 0;

	while (cmds[n].name)
		n++;
	buf[0] = '\0';
	for (size_t i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					!i	   ? "" :
					i + 1 == n ? " or " :
						     ", ",
					cmds[i].name);
}

int rl_cmd_select(const struct rl_cmd *parent, int argc, char **argv)
{
	const struct rl_cmd *cmd =
		argc > 1 ? rl_cmd_find(parent ? parent->subs : rl_cmds, argv[1]) : NULL;
	char err[RL_ERRLEN], list[128];
	struct rl_args a;

	if (cmd)
		return rl_cmd_run(parent, cmd, argc - 1, argv + 1);
	if (!parent) {
		if (argc < 2) {
			rl_usage(stderr);
			return 2;
		}
		pr_err("unknown command '%s' (see " RL_PROG " --help)", argv[1]);
		return 2;
	}
	/* No subcommand: the parent's --help still, and --json for the error. */
	rl_args_defaults(&a);
	rl_cmd_parse(&a, RL_G_GLOBAL | (parent->groups & RL_G_JSON),
		     sizeof(a.pos) / sizeof(a.pos[0]), argc, argv, err, sizeof(err));
	if (a.help) {
		rl_cmd_usage(stdout, parent);
		return 0;
	}
	if (a.json)
		rl_json_errors = true;
	names(parent->subs, list, sizeof(list));
	pr_err("%s: give %s (see " RL_PROG " %s --help)", parent->name, list, parent->name);
	return 2;
}

/* rl_cmd_run() once the command's rule, if any, is set up. */
static int run(const struct rl_cmd *parent, const struct rl_cmd *cmd, struct rl_args *a, int argc,
	       char **argv)
{
	/* Whose --help a message points to: rule's for rule del. */
	const char *doc = parent ? parent->name : cmd->name;
	char err[RL_ERRLEN], name[64];
	int ret;

	snprintf(name, sizeof(name), "%s%s%s", parent ? parent->name : "", parent ? " " : "",
		 cmd->name);
	/* Every word parsed before the first error is reported, so that it is JSON with --json. */
	ret = rl_cmd_parse(a, cmd->groups | RL_G_GLOBAL, cmd->max_pos, argc, argv, err,
			   sizeof(err));
	if (a->json)
		rl_json_errors = true;
	if (ret) {
		pr_err("%s: %s (see " RL_PROG " %s --help)", name, err, doc);
		return 2;
	}
	rl_verbose += a->verbose;
	if (a->help) {
		rl_cmd_usage(stdout, cmd);
		return 0;
	}
	if (a->version && a->npos) {
		pr_err("%s: --version takes no argument ('%s' is given with it)", name, a->pos[0]);
		return 2;
	}
	if (a->version) {
		printf(RL_PROG " " RL_VERSION "\n");
		return 0;
	}
	if (a->npos < cmd->min_pos) {
		pr_err("%s: give %s (see " RL_PROG " %s --help)", name,
		       cmd->fn == cmd_apply ? "a FILE" : "an interface name", doc);
		return 2;
	}
	rl_env_caps = cmd->groups & RL_CMD_READ ? RL_CAPS_READ : RL_CAPS_CHANGE;
	return cmd->fn(a);
}

int rl_cmd_run(const struct rl_cmd *parent, const struct rl_cmd *cmd, int argc, char **argv)
{
	struct rl_rule rule;
	struct rl_args a;
	int ret;

	if (cmd->subs)
		return rl_cmd_select(cmd, argc, argv);
	rl_args_defaults(&a);
	if (cmd->groups & RL_CMD_RAW) {
		a.argc = argc;
		a.argv = argv;
		return cmd->fn(&a);
	}
	if (!(cmd->groups & RL_G_RULE))
		return run(parent, cmd, &a, argc, argv);
	/* A rule's options (rule add) go into a rule: the command takes it, or it is freed here. */
	rl_rule_init(&rule);
	a.rule = &rule;
	ret = run(parent, cmd, &a, argc, argv);
	rl_rule_free(&rule);
	return ret;
}

int cmd_help(const struct rl_args *a)
{
	const struct rl_cmd *cmd = a->argc > 1 ? rl_cmd_find(rl_cmds, a->argv[1]) : NULL;

	if (cmd && !(cmd->groups & RL_CMD_HIDDEN))
		rl_cmd_usage(stdout, cmd);
	else
		rl_usage(stdout);
	return 0;
}
