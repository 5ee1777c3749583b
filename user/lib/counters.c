// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The counter table (see counters.h). */
#include "counters.h"
#include "rl_common.h"

#define C(f) offsetof(struct rl_counters, f)

/* In stats' order; a metric's rows need not be adjacent (the exporter groups them). */
const struct rl_counter_info rl_counter_table[] = {
	{ "rx_packets", C(rx_packets), "Every frame the program saw (passed + dropped).", NULL,
	  NULL, NULL },
	{ "rx_bytes", C(rx_bytes), "The bytes of those frames.", NULL, NULL, NULL },
	{ "passed", C(passed), "Frames passed (XDP_PASS), for any reason.", "packets_total",
	  "verdict=\"passed\"", "Frames seen by the limiter, by XDP verdict." },
	{ "passed_bytes", C(passed_bytes), "The bytes of the frames passed.", "bytes_total",
	  "verdict=\"passed\"", "Bytes of the frames seen, by XDP verdict." },
	{ "dropped", C(dropped), "Frames dropped (XDP_DROP), for any reason.", "packets_total",
	  "verdict=\"dropped\"", NULL },
	{ "dropped_bytes", C(dropped_bytes), "The bytes of the frames dropped.", "bytes_total",
	  "verdict=\"dropped\"", NULL },
	{ "limited", C(limited),
	  "Frames dropped for being over a limit: their source's, or a level's above it "
	  "(counted again in agg_limited, iface_limited or new_limited).",
	  "limited_packets_total", NULL, "Frames dropped for being over the limit." },
	{ "would_drop", C(would_drop),
	  "Frames over their source's limit with --action dry-run: counted, and passed.",
	  "would_drop_packets_total", NULL,
	  "Frames over the limit in dry-run (--action dry-run), passed." },
	{ "would_drop_bytes", C(would_drop_bytes), "The bytes of the frames counted in would_drop.",
	  "would_drop_bytes_total", NULL, "Bytes of the frames counted as would-drop." },
	{ "ipv4", C(ipv4), "IPv4 frames rate limited.", "ip_packets_total", "family=\"ipv4\"",
	  "Frames rate limited, by address family." },
	{ "ipv6", C(ipv6), "IPv6 frames rate limited.", "ip_packets_total", "family=\"ipv6\"",
	  NULL },
	{ "not_ip", C(not_ip), "Frames that are not IP (ARP, LLDP, ...): passed untouched.",
	  "not_ip_packets_total", NULL,
	  "Frames neither IPv4 nor IPv6 (ARP, ...), passed untouched." },
	{ "malformed_eth", C(malformed[RL_BAD_ETH]),
	  "Frames shorter than an Ethernet header; dropped or passed as --malformed says.",
	  "malformed_packets_total", "reason=\"eth\"",
	  "Frames not limited as IP because truncated or malformed, by reason." },
	{ "malformed_vlan", C(malformed[RL_BAD_VLAN]),
	  "Frames with a truncated VLAN tag, or more than two tags.", "malformed_packets_total",
	  "reason=\"vlan\"", NULL },
	{ "malformed_ipv4", C(malformed[RL_BAD_IPV4]), "Frames with a truncated IPv4 header.",
	  "malformed_packets_total", "reason=\"ipv4\"", NULL },
	{ "malformed_ihl", C(malformed[RL_BAD_IHL]),
	  "Frames with an IPv4 header whose IHL is below 5 or whose version is not 4.",
	  "malformed_packets_total", "reason=\"ihl\"", NULL },
	{ "malformed_ipv6", C(malformed[RL_BAD_IPV6]),
	  "Frames with a truncated IPv6 header, or a version other than 6.",
	  "malformed_packets_total", "reason=\"ipv6\"", NULL },
	{ "new_sources", C(new_sources), "Sources inserted into the source tables.",
	  "new_sources_total", NULL, "Sources inserted into the source tables." },
	{ "carried", C(carried),
	  "Sources whose state was carried over from the configuration before the last set "
	  "(each also counted in new_sources).",
	  "carried_sources_total", NULL,
	  "Sources carried over from the previous configuration by set." },
	{ "insert_failed", C(insert_failed),
	  "Sources that could not be inserted for a reason other than another CPU inserting them "
	  "first (a map error; a full table forgets a source instead); the packet is passed or "
	  "dropped as --on-insert-fail says.",
	  "insert_failures_total", NULL,
	  "Source inserts that failed (a map error, not a full table)." },
	{ "cas_retries", C(cas_retries),
	  "Compare-and-swap attempts on a source's state that lost a race with another CPU and "
	  "were retried.",
	  "cas_retries_total", NULL, "Compare-and-swap attempts on a source that lost a race." },
	{ "cas_exhausted", C(cas_exhausted),
	  "Packets dropped after 8 lost races in a row on their source.",
	  "cas_exhausted_packets_total", NULL,
	  "Frames dropped after every compare-and-swap attempt lost a race." },
	{ "nd", C(nd),
	  "IPv6 neighbour discovery frames (ICMPv6 types 133-137: router and neighbour "
	  "solicitations and advertisements, redirects): passed untouched, never limited.",
	  "nd_packets_total", NULL, "IPv6 neighbour discovery frames, passed untouched." },
	{ "sync_lost", C(sync_lost),
	  "Cost units (packets, or bytes) passed that fleet sync could not count: the source's "
	  "slot still held the undrained units of the source it was taken from (until the "
	  "agent's next drain), or a counter table was full: the other nodes never charge them.",
	  "sync_lost_units_total", NULL,
	  "Passed cost units fleet sync could not count (a slot's counter held another "
	  "source's units until the drain, or a counter table was full)." },
	{ "agg_limited", C(agg_limited),
	  "Frames their prefix aggregate refused (--aggregate4, --aggregate6): dropped, or "
	  "passed as would-drop with --action dry-run; their source was not charged.",
	  "level_limited_packets_total", "level=\"aggregate\"",
	  "Frames refused by a level above their source, by level." },
	{ "iface_limited", C(iface_limited),
	  "Frames the interface's limit refused (--iface-rate), as agg_limited.",
	  "level_limited_packets_total", "level=\"iface\"", NULL },
	{ "new_limited", C(new_limited),
	  "Frames of new sources beyond the admission cap (--admit-rate) refused by the state "
	  "they share, as agg_limited.",
	  "level_limited_packets_total", "level=\"new\"", NULL },
	{ "unadmitted", C(unadmitted),
	  "Frames of new sources the admission cap refused a state of their own: limited "
	  "together as one source (those dropped are new_limited).",
	  "unadmitted_packets_total", NULL,
	  "Frames of new sources beyond the admission cap, limited as one source." },
	{ "admitted_seen", C(admitted_seen),
	  "New sources beyond the admission cap given a state of their own because they were "
	  "seen again (a packet within 60 s of one refused).",
	  "admitted_seen_sources_total", NULL,
	  "New sources given a state when seen again beyond the admission cap." },
	{ "agg_new", C(agg_new),
	  "States of the levels above the source created: an aggregate seen for the first "
	  "time (or forgotten by its table since), the interface's, the admission cap's.",
	  "level_states_created_total", NULL, "States of the levels above the source created." },
	{ "agg_overdraft", C(agg_overdraft),
	  "Frames charged past a level's limit after another CPU took its last credit between "
	  "the check and the charge (at most one per CPU at a time: the level's debt, paid off "
	  "by the clock).",
	  "level_overdraft_packets_total", NULL,
	  "Frames charged past a level's limit after a race between CPUs." },
	{ "agg_failed", C(agg_failed),
	  "Level states that could not be created (a map error), and passes left uncharged to a "
	  "level after 8 lost races.",
	  "level_failures_total", NULL, "Level states not created, or passes not charged." },
	{ "evicted", C(evicted),
	  "IPv4 sources forgotten to make room in a full set of their table (those not seen "
	  "again first, then the one least ahead of the clock); each starts again from "
	  "--initial (and the admission cap) when it comes back.",
	  "evicted_sources_total", NULL, "IPv4 sources evicted from a full set of their table." },
	{ "evicted_seen", C(evicted_seen),
	  "Of those, sources seen again (more than one packet passed): evicted only when every "
	  "source of their set had been seen again.",
	  "evicted_seen_sources_total", NULL,
	  "IPv4 sources seen again evicted from a full set (every other there seen again too)." },
	{ "syncookies_sent", C(syncookies_sent),
	  "SYNs to a port of --syn-cookies (or a syn-cookies rule) answered from XDP with a "
	  "SYN-ACK carrying a cookie (XDP_TX: neither passed nor dropped; rx_packets counts "
	  "them). No source state is made for them.",
	  "syncookies_total", "result=\"sent\"",
	  "SYN cookies: SYNs answered, ACKs with a valid cookie, packets of no connection "
	  "without one (dropped)." },
	{ "syncookies_sent_bytes", C(syncookies_sent_bytes),
	  "The bytes of the SYNs answered with a cookie, as received.",
	  "syncookies_sent_bytes_total", NULL, "Bytes of the SYNs answered with a SYN cookie." },
	{ "syncookies_valid", C(syncookies_valid),
	  "ACKs to a protected port whose cookie was valid: handed on, limited like any packet, "
	  "to the stack, where SYNPROXY opens the connection.",
	  "syncookies_total", "result=\"valid\"", NULL },
	{ "syncookies_invalid", C(syncookies_invalid),
	  "Packets to a protected port of no connection this host knows and without a valid "
	  "cookie (a spoofed or late ACK, a RST, a stray segment): dropped (with --action "
	  "dry-run: passed on, counted in would_drop).",
	  "syncookies_total", "result=\"invalid\"", NULL },
};

const size_t rl_counter_count = sizeof(rl_counter_table) / sizeof(rl_counter_table[0]);

/* Every field of struct rl_counters is a __u64 with a row (tests check the offsets). */
_Static_assert(sizeof(rl_counter_table) / sizeof(rl_counter_table[0]) ==
		       sizeof(struct rl_counters) / sizeof(__u64),
	       "a row per counter of struct rl_counters");
_Static_assert(RL_CAS_TRIES == 8, "cas_exhausted's help says 8 lost races");
