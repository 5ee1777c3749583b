/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * End-to-end test plumbing: a pair of network namespaces joined by a veth
 * pair, trafgen flows sent from one end, the limiter attached with the CLI to
 * the other, and a sampler of the program's own counters.
 *
 *	rlt-PID-N-tx                      rlt-PID-N-rx
 *	  rlPIDtN  198.18.0.1/24  <--veth-->  rlPIDrN  198.18.0.2/24, 2001:db8::2/64
 *	  (trafgen writes raw frames)         (xdp-ratelimit attaches here)
 *
 * Traffic only ever uses 198.18.0.0/15 and 2001:db8::/32 and stays on this
 * veth pair; every flow is bounded by trafgen -n and by timeout(1).
 * rl_ns_destroy() removes the namespaces (which removes the veths and so the
 * XDP program), the pins, and kills any flow still running; call it on every
 * path. A SIGINT, SIGTERM or SIGHUP that kills the runner mid-test removes
 * the live pairs first; rl_ns_create() also removes what a run killed harder
 * (SIGKILL, a crash) left behind.
 */
#ifndef RL_NETNS_H
#define RL_NETNS_H

#include <stdarg.h>
#include <stdbool.h>
#include <sys/types.h>
#include <net/if.h>
#include "rl_common.h"

/* The fixed addresses of the pair. */
#define RL_NS_TX_ADDR4 "198.18.0.1"
#define RL_NS_RX_ADDR4 "198.18.0.2"
#define RL_NS_RX_ADDR6 "2001:db8::2"

/* Flows one pair can run at once, UDP sockets one watch can count. */
#define RL_NS_MAX_FLOWS 8
#define RL_NS_MAX_SOCKS 4

struct rl_flow;

struct rl_ns {
	char tx[32], rx[32]; /* namespace names */
	char tx_if[IF_NAMESIZE], rx_if[IF_NAMESIZE];
	char rx_mac[18];
	struct rl_flow *flows[RL_NS_MAX_FLOWS]; /* started and not yet reaped */
	bool up;
	bool tx_shared; /* the sending namespace is another pair's (a star): never deleted here */
	char cleanup[1024]; /* the shell command that removes it all, for a signal handler */
};

/* One trafgen run: the caller fills the first part, the helpers the rest. */
struct rl_flow {
	const char *src; /* IPv4 in 198.18.0.0/15 or IPv6 in 2001:db8::/32 */
	unsigned int rand_bytes; /* randomize the last N bytes of src (IPv4 <= 2, IPv6 <= 8) */
	bool seq; /* instead: count the last byte up (rand_bytes 1): up to 256 distinct sources */
	unsigned int dport; /* UDP destination port; 0: 9 (discard, nobody listens) */
	/* Nonzero: TCP SYNs to this port (random source port and sequence) instead of UDP. */
	unsigned int syn_dport;
	unsigned long count; /* packets: trafgen -n (required) */
	const char *gap; /* trafgen -t, e.g. "5us"; NULL: TX_RING at full speed */
	unsigned int payload; /* UDP payload bytes; 0: 18, a 60-byte IPv4 frame */
	unsigned int limit_s; /* timeout(1) for the run; 0: 30 s */
	/*
	 * Another veth pair between the same two namespaces to send through
	 * (its tx_if and rx_mac are used); NULL: the pair the flow is started on.
	 */
	const struct rl_ns *via;

	/* Filled in by the helpers. */
	struct rl_ns *ns;
	pid_t pid; /* the shell running timeout + trafgen; 0 when reaped */
	int status; /* its exit status; 124: timed out */
	long sent; /* trafgen's "packets outgoing"; -1 if it printed none */
	bool stopped; /* rl_flow_stop() killed it: its end is no failure, and is not reported */
	char cfg[64], log[64]; /* temporary files */
};

/*
 * The pin directory of interface @ifname in the namespace /run/netns/@netns
 * (see user/lib/pins.h). 0 or -errno.
 */
int rl_ns_pin_dir(const char *netns, const char *ifname, char *out, size_t len);

/* Make the pair, addresses up. 0 or -errno (and a message on stderr). */
int rl_ns_create(struct rl_ns *ns);
/* Remove everything rl_ns_create() and the test made; safe to call twice or on a failed create. */
void rl_ns_destroy(struct rl_ns *ns);
/*
 * A star: one sending namespace with a veth pair to each of @n receiving
 * namespaces, as behind a load balancer. @ns[i] is the pair to receiver i
 * (flows started on it leave through its own veth); @ns[0] owns the sending
 * namespace. Addresses as a pair's, the same in every receiving namespace;
 * none on the sending ends (trafgen needs none). 0 or -errno, with nothing
 * left behind on failure.
 */
int rl_ns_create_star(struct rl_ns *ns, int n);
/* Remove a star, receivers first so each limiter detaches cleanly; safe on a failed create. */
void rl_ns_destroy_star(struct rl_ns *ns, int n);

/*
 * Run "xdp-ratelimit ARGS" in the receiving namespace (see netns.c for why
 * nsenter and not "ip netns exec"). Output as rl_run(); returns the exit status.
 */
int rl_ns_cli(struct rl_ns *ns, char **out, char **err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* rl_ns_cli() with @args, asserted to exit 0 (as @what); on failure its output goes to stderr. */
bool rl_ns_cli_ok(struct rl_ns *ns, const char *what, const char *args);
/* The same in network namespace @netns (/run/netns/NAME), or in the host's if NULL. */
int rl_cli_vin(const char *netns, char **out, char **err, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));
/* Run a shell command (its stdout into *out if @out); its stderr is shown when it fails. */
int rl_sh(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Run a shell command in the receiving namespace. */
int rl_ns_rx_sh(struct rl_ns *ns, char **out, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Start a flow in the background. 0 or -errno. */
int rl_flow_start(struct rl_ns *ns, struct rl_flow *f);
/* Has it ended? (reaps it if so) */
bool rl_flow_done(struct rl_flow *f);
/*
 * Wait for it (at most its limit + 3 s, then kill it). 0 if trafgen exited 0;
 * otherwise its status and last lines are printed on stderr.
 */
int rl_flow_wait(struct rl_flow *f);
/*
 * Kill it if running, reap, remove its files. A flow killed here ends as the
 * test wants: nothing is printed (one that had failed before is reported).
 */
void rl_flow_stop(struct rl_flow *f);

/* The program's counters summed over CPUs, read from the pinned map. 0 or -errno. */
int rl_ns_counters(struct rl_ns *ns, struct rl_counters *c);
/* A number from a flat JSON object, as printed by "stats --json". */
bool rl_json_u64(const char *json, const char *key, unsigned long long *v);

/*
 * The packet counters of interface @ifname in namespace @netns, as the kernel
 * keeps them (ip -s link). 0 or -errno.
 */
int rl_ns_link_packets(const char *netns, const char *ifname, unsigned long long *rx,
		       unsigned long long *tx);
/* The id of the XDP program attached to the receiving end (0: none). 0 or -errno. */
int rl_ns_xdp_prog_id(struct rl_ns *ns, unsigned int *id);

/* A UDP socket bound in the receiving namespace to RX_ADDR:port, to count one source's passes. */
int rl_ns_udp_socket(struct rl_ns *ns, int family, unsigned int port);
/* Datagrams waiting on it, read and counted. */
unsigned long rl_udp_drain(int fd);

/* CLOCK_MONOTONIC in seconds: the clock of bpf_ktime_get_ns(). */
double rl_now(void);

/* One sample of the counters. */
struct rl_sample {
	double t;
	__u64 rx, passed, dropped, would_drop, passed_bytes;
};

/*
 * Run flows and watch: samples the counters every 2 ms until every flow has
 * ended, then once more after the receive path has drained.
 */
struct rl_watch {
	/* In: flows to start, sockets to drain, a callback after each sample. */
	struct rl_flow *flows[RL_NS_MAX_FLOWS];
	int nflows;
	int socks[RL_NS_MAX_SOCKS];
	int nsocks;
	int (*tick)(struct rl_watch *w, void *arg); /* nonzero stops the watch */
	void *arg;

	/* Out. */
	struct rl_sample *s; /* the samples, s[0] taken before the flows start */
	int n, cap;
	double first, last; /* first and last arrival (midpoints of the sample gaps), -1: none */
	double first_err, last_err; /* half the sample gap around each */
	unsigned long received[RL_NS_MAX_SOCKS];
	double sock_first[RL_NS_MAX_SOCKS], sock_last[RL_NS_MAX_SOCKS]; /* first, last receipt */
	struct rl_counters base, end; /* counters before and after */
};

/* 0, or -errno if a flow could not start or the counters could not be read. */
int rl_ns_watch(struct rl_ns *ns, struct rl_watch *w);
void rl_watch_free(struct rl_watch *w);
/* The sample at or just after time t (index), or -1. */
int rl_watch_at(const struct rl_watch *w, double t);

#endif /* RL_NETNS_H */
