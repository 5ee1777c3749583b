// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Namespace pairs, trafgen flows and a counter sampler for the end-to-end
 * tests (see netns.h).
 *
 * What was found on Debian 12 (iproute2 6.1, kernel 6.18) and why the code
 * is the way it is:
 *
 * - "ip netns exec NS cmd" unshares the mount namespace and mounts a fresh
 *   sysfs on /sys, so /sys/fs/bpf inside is an empty sysfs directory, not the
 *   host's bpffs. The CLI then mounts a bpffs of its own there (rl_check_env),
 *   but that mount lives in a mount namespace that dies with the command: an
 *   "attach" run that way succeeds, the program stays attached, and the pins
 *   are gone before the next command ("stats" says not attached). So the CLI
 *   runs under "nsenter --net=/run/netns/NS": only the network namespace
 *   changes, /sys/fs/bpf is the host's, and the pins are visible to the next
 *   command, to the tests (which read rl_counters directly) and to cleanup.
 *   The pins are kept per namespace there (user/lib/pins.h).
 * - The sender's own kernel talks on a fresh link (router solicitations, MLD
 *   reports: 7 frames in the first 10 s), and the limiter would count those as
 *   IPv6 sources. trafgen writes raw frames and needs no address, so IPv6 is
 *   disabled on the sending veth: with it, the receiving end sees nothing but
 *   our flows (measured: 0 frames in 10 s). The receiving end has 2001:db8::2
 *   (nodad, usable at once) so UDP sockets can count IPv6 passes.
 * - trafgen's -t GAP uses sendto() per packet and sleeps GAP between them;
 *   the sleep adds to ~15-20 us of per-packet cost, so the rate is not
 *   1/GAP: on this 2-core VM, -t 5us gave 44-61 kpps idle (21-30 kpps with
 *   both cores busy elsewhere), -t 10us 34 kpps, -t 20us 30 kpps, -t 100us
 *   8.8 kpps, -t 2000us 466 pps, with +-15% swings between 250 ms slices
 *   and, under load, stalls of tens of ms. Every packet sent arrived, in
 *   every run: veth rx_packets and the program's rx_packets both equal -n,
 *   XDP drops included. So the tests never assume a rate: they measure when
 *   packets reached the program (rl_ns_watch).
 * - trafgen 0.6.8 does not set the Ethernet type for ipv6(): type=0x86dd is
 *   given explicitly. Its -A (no socket memory tuning) is not accepted; the
 *   socket memory sysctls it changes are per network namespace on this
 *   kernel, so they only touch the sending namespace. -P 1: one process, so
 *   -n is exact and the flow is paced as one stream.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/stat.h>
#include "maps.h"
#include "netns.h"
#include "pins.h"
#include "test.h"

/* Sample period of rl_ns_watch(): at 4000 pps, 2 ms is 8 packets, 0.06% of 3 s. */
#define RL_WATCH_PERIOD_NS 2000000L
/* After the last flow ends: wait this long for the receive path to drain. */
#define RL_WATCH_DRAIN_S 0.05

double rl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int rl_sh(char **out, const char *fmt, ...)
{
	char *cmd, *err = NULL;
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vasprintf(&cmd, fmt, ap);
	va_end(ap);
	if (ret < 0)
		return -ENOMEM;
	ret = rl_run(cmd, out, &err);
	if (ret && err && *err)
		fprintf(stderr, "    [%s]: %s", cmd, err);
	free(err);
	free(cmd);
	return ret;
}

/* Is this process alive? (ours never reuse a pid while we run) */
static bool pid_alive(long pid)
{
	return kill((pid_t)pid, 0) == 0 || errno != ESRCH;
}

/*
 * Remove what a run that died (crash, kill -9) left behind: namespaces
 * rlt-PID-* and files /tmp/rlt-PID-* of processes that no longer exist, then
 * the pins those namespaces leave (orphans: "xdp-ratelimit cleanup").
 * Live ones may be a concurrent run's and are left alone.
 */
static void sweep_stale(void)
{
	struct dirent *de;
	DIR *d;
	long pid;
	unsigned int n;
	char c;

	bool swept = false;

	d = opendir("/run/netns");
	while (d && (de = readdir(d))) {
		if (sscanf(de->d_name, "rlt-%ld-%u-%c", &pid, &n, &c) == 3 && !pid_alive(pid)) {
			rl_sh(NULL, "ip netns del '%s' 2>/dev/null", de->d_name);
			swept = true;
		}
	}
	if (d)
		closedir(d);
	d = opendir("/tmp");
	while (d && (de = readdir(d))) {
		if (sscanf(de->d_name, "rlt-%ld-%u.%c", &pid, &n, &c) == 3 && !pid_alive(pid))
			rl_sh(NULL, "rm -f '/tmp/%s'", de->d_name);
	}
	if (d)
		closedir(d);
	/* Only pins no program uses: never another run's live limiter. */
	if (swept)
		rl_sh(NULL, "%s/xdp-ratelimit cleanup >/dev/null", rl_build_dir);
}

int rl_ns_pin_dir(const char *netns, const char *ifname, char *out, size_t len)
{
	char path[PATH_MAX];
	struct stat st;

	/* The bind mount in /run/netns shows the namespace's own inode. */
	snprintf(path, sizeof(path), "/run/netns/%s", netns);
	if (stat(path, &st))
		return -errno;
	return rl_pin_dir(RL_PIN_ROOT, st.st_ino, ifname, out, len);
}

/* Pairs that exist right now, for the signal handler. */
#define RL_NS_MAX_LIVE 16
static struct rl_ns *volatile live[RL_NS_MAX_LIVE];

/*
 * On SIGINT/SIGTERM/SIGHUP: stop the flows, run each live pair's cleanup
 * command, then die of the signal as before. Only async-signal-safe calls:
 * kill, fork, execve, waitpid; the command strings were made beforehand.
 */
static void on_signal(int sig)
{
	for (int i = 0; i < RL_NS_MAX_LIVE; i++) {
		struct rl_ns *ns = live[i];
		pid_t pid;

		if (!ns)
			continue;
		for (int f = 0; f < RL_NS_MAX_FLOWS; f++)
			if (ns->flows[f] && ns->flows[f]->pid > 0)
				kill(-ns->flows[f]->pid, SIGKILL);
		pid = fork();
		if (pid == 0) {
			char *argv[] = { "sh", "-c", ns->cleanup, NULL };
			char *envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };

			execve("/bin/sh", argv, envp);
			_exit(127);
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void track(struct rl_ns *ns, bool on)
{
	static bool installed;

	if (on && !installed) {
		struct sigaction sa = { .sa_handler = on_signal };

		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		installed = true;
	}
	for (int i = 0; i < RL_NS_MAX_LIVE; i++) {
		if (on && !live[i]) {
			live[i] = ns;
			return;
		}
		if (!on && live[i] == ns)
			live[i] = NULL;
	}
}

/*
 * Make a pair: both namespaces, or (@tx_of set) only the receiving one, its
 * veth's other end in @tx_of's sending namespace, which has no address there.
 */
static int ns_make(struct rl_ns *ns, const struct rl_ns *tx_of)
{
	static unsigned int seq;
	char *out = NULL, *p;
	int pid = getpid(), ret;

	memset(ns, 0, sizeof(*ns));
	if (!tx_of)
		sweep_stale();
	seq++;
	if (tx_of)
		snprintf(ns->tx, sizeof(ns->tx), "%s", tx_of->tx);
	else
		snprintf(ns->tx, sizeof(ns->tx), "rlt-%d-%u-tx", pid, seq);
	snprintf(ns->rx, sizeof(ns->rx), "rlt-%d-%u-rx", pid, seq);
	/* "rl" + 7-digit pid + "t" + seq: within IF_NAMESIZE up to seq 99999. */
	snprintf(ns->tx_if, sizeof(ns->tx_if), "rl%dt%u", pid, seq);
	snprintf(ns->rx_if, sizeof(ns->rx_if), "rl%dr%u", pid, seq);
	ns->tx_shared = tx_of != NULL;
	/*
	 * The pins of a namespace deleted with its limiter are orphans: cleanup
	 * removes them. A star's sending namespace goes with its first pair.
	 */
	snprintf(ns->cleanup, sizeof(ns->cleanup),
		 "nsenter --net=/run/netns/%s %s/xdp-ratelimit detach %s >/dev/null 2>&1;"
		 " %s%s%s ip netns del %s 2>/dev/null;"
		 " %s/xdp-ratelimit cleanup >/dev/null 2>&1; rm -rf /tmp/rlt-%d-*",
		 ns->rx, rl_build_dir, ns->rx_if, tx_of ? "" : "ip netns del ", tx_of ? "" : ns->tx,
		 tx_of ? "" : " 2>/dev/null;", ns->rx, rl_build_dir, pid);
	ns->up = true; /* from here on, rl_ns_destroy() has something to remove */
	track(ns, true);
	if (tx_of)
		ret = rl_sh(NULL,
			    "set -e; ip netns add %2$s;"
			    " ip link add %3$s netns %1$s type veth peer name %4$s netns %2$s;"
			    " ip netns exec %1$s sysctl -qw net.ipv6.conf.%3$s.disable_ipv6=1;"
			    " ip -n %2$s addr add " RL_NS_RX_ADDR4 "/24 dev %4$s;"
			    " ip -n %2$s addr add " RL_NS_RX_ADDR6 "/64 dev %4$s nodad;"
			    " ip -n %2$s link set lo up;"
			    " ip -n %1$s link set %3$s up; ip -n %2$s link set %4$s up",
			    ns->tx, ns->rx, ns->tx_if, ns->rx_if);
	else
		ret = rl_sh(NULL,
			    "set -e; ip netns add %1$s; ip netns add %2$s;"
			    " ip link add %3$s netns %1$s type veth peer name %4$s netns %2$s;"
			    " ip netns exec %1$s sysctl -qw net.ipv6.conf.%3$s.disable_ipv6=1;"
			    " ip -n %1$s addr add " RL_NS_TX_ADDR4 "/24 dev %3$s;"
			    " ip -n %2$s addr add " RL_NS_RX_ADDR4 "/24 dev %4$s;"
			    " ip -n %2$s addr add " RL_NS_RX_ADDR6 "/64 dev %4$s nodad;"
			    " ip -n %1$s link set lo up; ip -n %2$s link set lo up;"
			    " ip -n %1$s link set %3$s up; ip -n %2$s link set %4$s up",
			    ns->tx, ns->rx, ns->tx_if, ns->rx_if);
	if (ret) {
		fprintf(stderr, "    could not make the namespace pair %s/%s\n", ns->tx, ns->rx);
		goto fail;
	}
	ret = rl_sh(&out, "ip -n %s -o link show dev %s", ns->rx, ns->rx_if);
	p = out ? strstr(out, "link/ether ") : NULL;
	if (ret || !p || sscanf(p, "link/ether %17s", ns->rx_mac) != 1) {
		fprintf(stderr, "    no MAC address on %s\n", ns->rx_if);
		ret = -1;
		goto fail;
	}
	free(out);
	return 0;
fail:
	free(out);
	rl_ns_destroy(ns);
	return -EIO;
}

int rl_ns_create(struct rl_ns *ns)
{
	return ns_make(ns, NULL);
}

int rl_ns_create_star(struct rl_ns *ns, int n)
{
	for (int i = 0; i < n; i++) {
		if (ns_make(&ns[i], i ? &ns[0] : NULL)) {
			rl_ns_destroy_star(ns, i);
			return -EIO;
		}
	}
	return 0;
}

void rl_ns_destroy_star(struct rl_ns *ns, int n)
{
	/* The first pair's destroy deletes the sending namespace and with it every veth. */
	for (int i = n - 1; i >= 0; i--)
		rl_ns_destroy(&ns[i]);
}

void rl_ns_destroy(struct rl_ns *ns)
{
	char path[PATH_MAX];

	if (!ns->up)
		return;
	for (int i = 0; i < RL_NS_MAX_FLOWS; i++)
		if (ns->flows[i])
			rl_flow_stop(ns->flows[i]);
	/* Detach first so the CLI removes its pins; then make sure they are gone. */
	if (!rl_ns_pin_dir(ns->rx, ns->rx_if, path, sizeof(path)) && access(path, F_OK) == 0) {
		rl_ns_cli(ns, NULL, NULL, "detach %s", ns->rx_if);
		if (access(path, F_OK) == 0)
			rl_sh(NULL,
			      "rm -rf '%s'; rmdir \"$(dirname '%s')\" " RL_PIN_ROOT " 2>/dev/null",
			      path, path);
	}
	/* Deleting a namespace deletes its veth end, the peer and the XDP program. */
	if (ns->tx_shared)
		rl_sh(NULL, "ip netns del %s 2>/dev/null; true", ns->rx);
	else
		rl_sh(NULL, "ip netns del %s 2>/dev/null; ip netns del %s 2>/dev/null; true",
		      ns->tx, ns->rx);
	ns->up = false;
	track(ns, false);
}

int rl_cli_vin(const char *netns, char **out, char **err, const char *fmt, va_list ap)
{
	char *args, *cmd;
	int ret;

	if (vasprintf(&args, fmt, ap) < 0)
		return -ENOMEM;
	if (netns)
		ret = asprintf(&cmd, "nsenter --net=/run/netns/%s %s/xdp-ratelimit %s", netns,
			       rl_build_dir, args);
	else
		ret = asprintf(&cmd, "%s/xdp-ratelimit %s", rl_build_dir, args);
	free(args);
	if (ret < 0)
		return -ENOMEM;
	ret = rl_run(cmd, out, err);
	free(cmd);
	return ret;
}

int rl_ns_cli(struct rl_ns *ns, char **out, char **err, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = rl_cli_vin(ns->rx, out, err, fmt, ap);
	va_end(ap);
	return ret;
}

bool rl_ns_cli_ok(struct rl_ns *ns, const char *what, const char *args)
{
	char *out = NULL, *err = NULL;
	int rc = rl_ns_cli(ns, &out, &err, "%s", args);
	bool ok = ASSERT_EQ(rc, 0, what);

	if (!ok)
		fprintf(stderr, "    xdp-ratelimit %s:\n%s%s", args, out ? out : "",
			err ? err : "");
	free(out);
	free(err);
	return ok;
}

int rl_ns_rx_sh(struct rl_ns *ns, char **out, const char *fmt, ...)
{
	char *inner, *cmd;
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vasprintf(&inner, fmt, ap);
	va_end(ap);
	if (ret < 0)
		return -ENOMEM;
	ret = asprintf(&cmd, "nsenter --net=/run/netns/%s sh -c '%s'", ns->rx, inner);
	free(inner);
	if (ret < 0)
		return -ENOMEM;
	ret = rl_run(cmd, out, NULL);
	free(cmd);
	return ret;
}

/* Refuse any source outside the documentation and benchmarking ranges. */
static int check_src(const char *src, unsigned int rand_bytes, bool *v6)
{
	unsigned char a[16];

	if (inet_pton(AF_INET, src, a) == 1) {
		*v6 = false;
		/* 198.18.0.0/15; randomizing at most 2 bytes keeps it inside. */
		return a[0] == 198 && (a[1] & 0xfe) == 18 && rand_bytes <= 2 ? 0 : -EINVAL;
	}
	if (inet_pton(AF_INET6, src, a) == 1) {
		*v6 = true;
		return a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x0d && a[3] == 0xb8 &&
				       rand_bytes <= 8 ?
			       0 :
			       -EINVAL;
	}
	return -EINVAL;
}

static void forget_flow(struct rl_flow *f)
{
	for (int i = 0; f->ns && i < RL_NS_MAX_FLOWS; i++)
		if (f->ns->flows[i] == f)
			f->ns->flows[i] = NULL;
}

int rl_flow_start(struct rl_ns *ns, struct rl_flow *f)
{
	static unsigned int fseq;
	const struct rl_ns *dev = f->via ? f->via : ns;
	char rnd[128] = "", cmd[1024];
	unsigned int limit = f->limit_s ? f->limit_s : 30;
	int slot = -1, ret;
	bool v6;
	FILE *cf;

	f->pid = 0;
	f->sent = -1;
	f->stopped = false;
	f->status = -1;
	f->ns = ns;
	if (!f->count || check_src(f->src, f->rand_bytes, &v6) || (f->seq && f->rand_bytes != 1)) {
		fprintf(stderr,
			"    flow from '%s': refused (needs a count and a source in "
			"198.18.0.0/15 or 2001:db8::/32; seq counts one byte)\n",
			f->src ? f->src : "(null)");
		return -EINVAL;
	}
	for (int i = 0; i < RL_NS_MAX_FLOWS; i++)
		if (!ns->flows[i]) {
			slot = i;
			break;
		}
	if (slot < 0)
		return -ENOSPC;
	fseq++;
	snprintf(f->cfg, sizeof(f->cfg), "/tmp/rlt-%d-%u.cfg", getpid(), fseq);
	snprintf(f->log, sizeof(f->log), "/tmp/rlt-%d-%u.log", getpid(), fseq);
	/* Randomized bytes are the last ones of the address: sa[15] is the last of IPv6. */
	for (unsigned int i = 0; i < f->rand_bytes; i++) {
		size_t len = strlen(rnd);

		snprintf(rnd + len, sizeof(rnd) - len, ", sa[%u]=%s()",
			 (v6 ? 16 : 4) - f->rand_bytes + i, f->seq ? "dinc" : "drnd");
	}
	cf = fopen(f->cfg, "w");
	if (!cf)
		return -errno;
	if (f->syn_dport)
		fprintf(cf,
			"{ eth(da=%s%s), %s(sa=%s%s, da=%s, %s=64), "
			"tcp(sp=drnd(), dp=%u, seq=drnd(), syn, win=64240) }\n",
			dev->rx_mac, v6 ? ", type=0x86dd" : "", v6 ? "ipv6" : "ipv4", f->src, rnd,
			v6 ? RL_NS_RX_ADDR6 : RL_NS_RX_ADDR4, v6 ? "hl" : "ttl", f->syn_dport);
	else if (v6)
		fprintf(cf,
			"{ eth(da=%s, type=0x86dd), ipv6(sa=%s%s, da=" RL_NS_RX_ADDR6
			", hl=64), udp(sp=40000, dp=%u), fill(0x00, %u) }\n",
			dev->rx_mac, f->src, rnd, f->dport ? f->dport : 9,
			f->payload ? f->payload : 18);
	else
		fprintf(cf,
			"{ eth(da=%s), ipv4(sa=%s%s, da=" RL_NS_RX_ADDR4
			", ttl=64), udp(sp=40000, dp=%u), fill(0x00, %u) }\n",
			dev->rx_mac, f->src, rnd, f->dport ? f->dport : 9,
			f->payload ? f->payload : 18);
	fclose(cf);
	/* timeout -k: SIGKILL 1 s after SIGTERM, if trafgen is stuck flushing its ring. */
	snprintf(cmd, sizeof(cmd),
		 "exec timeout -k 1 %u ip netns exec %s trafgen -o %s -i %s -n %lu -P 1 -Q%s%s"
		 " >%s 2>&1 </dev/null",
		 limit, ns->tx, dev->tx_if, f->cfg, f->count, f->gap ? " -t " : "",
		 f->gap ? f->gap : "", f->log);
	f->pid = fork();
	if (f->pid < 0) {
		ret = -errno;
		f->pid = 0;
		unlink(f->cfg);
		return ret;
	}
	if (f->pid == 0) {
		setpgid(0, 0); /* its own group, so rl_flow_stop() kills timeout and trafgen */
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	setpgid(f->pid, f->pid);
	ns->flows[slot] = f;
	return 0;
}

/* trafgen's summary: "\r      150000 packets outgoing" (lines start with a CR). */
static long parse_sent(const char *log)
{
	FILE *lf = fopen(log, "r");
	char buf[8192];
	size_t n;
	char *p;
	long sent = -1;

	if (!lf)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, lf);
	fclose(lf);
	buf[n] = '\0';
	p = strstr(buf, " packets outgoing");
	if (p) {
		while (p > buf && p[-1] >= '0' && p[-1] <= '9')
			p--;
		sent = strtol(p, NULL, 10);
	}
	return sent;
}

static void reaped(struct rl_flow *f, int status)
{
	f->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	f->pid = 0;
	f->sent = parse_sent(f->log);
	/*
	 * A flow rl_flow_stop() killed ends with SIGKILL (137), trafgen's log
	 * holding only its start-up chatter ("Permission denied" on the sysctls
	 * a namespace may not write): a normal stop, not worth a line. Any other
	 * end that is not 0 is a failure, shown with trafgen's last lines.
	 */
	if (f->status && !(f->stopped && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)) {
		char *log = NULL;

		rl_sh(&log, "tr '\\r' '\\n' < %s | grep -v '^ *$' | tail -n 5", f->log);
		fprintf(stderr, "    trafgen from %s exited %d:\n%s", f->src, f->status,
			log ? log : "");
		free(log);
	}
	unlink(f->cfg);
	unlink(f->log);
	forget_flow(f);
}

/* Kill the flow if it runs, reap it, remove its files. */
static void flow_kill(struct rl_flow *f)
{
	int status;

	if (f->pid) {
		kill(-f->pid, SIGKILL);
		if (waitpid(f->pid, &status, 0) == f->pid)
			reaped(f, status);
	}
	f->pid = 0;
	unlink(f->cfg);
	unlink(f->log);
	forget_flow(f);
}

bool rl_flow_done(struct rl_flow *f)
{
	int status;

	if (!f->pid)
		return true;
	if (waitpid(f->pid, &status, WNOHANG) != f->pid)
		return false;
	reaped(f, status);
	return true;
}

int rl_flow_wait(struct rl_flow *f)
{
	unsigned int limit = f->limit_s ? f->limit_s : 30;
	double deadline = rl_now() + limit + 3;

	while (!rl_flow_done(f)) {
		if (rl_now() > deadline) {
			/* Stuck past its limit: killed, and reported as the failure it is. */
			flow_kill(f);
			break;
		}
		usleep(10000);
	}
	return f->status == 0 ? 0 : -EIO;
}

void rl_flow_stop(struct rl_flow *f)
{
	if (f->pid)
		f->stopped = true;
	flow_kill(f);
}

int rl_ns_counters(struct rl_ns *ns, struct rl_counters *c)
{
	char path[PATH_MAX];
	int fd, ret;

	memset(c, 0, sizeof(*c));
	ret = rl_ns_pin_dir(ns->rx, ns->rx_if, path, sizeof(path));
	if (ret)
		return ret;
	strncat(path, "/rl_counters", sizeof(path) - strlen(path) - 1);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	/* Read through the library: the kernel's counters and what they imply. */
	ret = rl_counters_sum(fd, c);
	close(fd);
	return ret;
}

bool rl_json_u64(const char *json, const char *key, unsigned long long *v)
{
	char pat[64];
	const char *p;
	char *end;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = json ? strstr(json, pat) : NULL;
	if (!p)
		return false;
	p += strlen(pat);
	while (*p == ' ')
		p++;
	errno = 0;
	*v = strtoull(p, &end, 10);
	return end != p && !errno;
}

int rl_ns_link_packets(const char *netns, const char *ifname, unsigned long long *rx,
		       unsigned long long *tx)
{
	char *out = NULL, *prx, *ptx;
	int ret;

	/* "stats64":{"rx":{"bytes":B,"packets":P,...},"tx":{"bytes":B,"packets":P,...}} */
	ret = rl_sh(&out, "ip -n %s -s -j link show dev %s", netns, ifname);
	prx = out ? strstr(out, "\"stats64\":{\"rx\":") : NULL;
	ptx = prx ? strstr(prx, "\"tx\":") : NULL;
	if (ret || !ptx || !rl_json_u64(prx, "packets", rx) || !rl_json_u64(ptx, "packets", tx))
		ret = -EIO;
	free(out);
	return ret;
}

int rl_ns_xdp_prog_id(struct rl_ns *ns, unsigned int *id)
{
	unsigned long long v = 0;
	char *out = NULL, *p;
	int ret;

	/* "xdp":{"mode":1,"prog":{"id":N,...}: no "xdp" object when nothing is attached. */
	ret = rl_sh(&out, "ip -n %s -j link show dev %s", ns->rx, ns->rx_if);
	if (ret || !out || !strstr(out, "\"ifname\"")) {
		free(out);
		return -EIO;
	}
	p = strstr(out, "\"xdp\":");
	p = p ? strstr(p, "\"prog\":") : NULL;
	if (p && !rl_json_u64(p, "id", &v))
		ret = -EIO;
	*id = (unsigned int)v;
	free(out);
	return ret;
}

int rl_ns_udp_socket(struct rl_ns *ns, int family, unsigned int port)
{
	char path[64];
	int self, there, fd = -1, rcvbuf = 4 << 20;
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons(port) };

	/* A socket keeps the namespace it was made in: make it there, come back. */
	snprintf(path, sizeof(path), "/run/netns/%s", ns->rx);
	self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	there = open(path, O_RDONLY | O_CLOEXEC);
	if (self < 0 || there < 0 || setns(there, CLONE_NEWNET))
		goto out;
	fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (setns(self, CLONE_NEWNET)) {
		/* Cannot happen for root; carrying on in the wrong namespace would be worse. */
		perror("setns back");
		abort();
	}
	if (fd < 0)
		goto out;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	inet_pton(AF_INET, RL_NS_RX_ADDR4, &a4.sin_addr);
	inet_pton(AF_INET6, RL_NS_RX_ADDR6, &a6.sin6_addr);
	if (family == AF_INET6 ? bind(fd, (struct sockaddr *)&a6, sizeof(a6)) :
				 bind(fd, (struct sockaddr *)&a4, sizeof(a4))) {
		close(fd);
		fd = -1;
	}
out:
	if (self >= 0)
		close(self);
	if (there >= 0)
		close(there);
	return fd;
}

unsigned long rl_udp_drain(int fd)
{
	unsigned long n = 0;
	char buf[2048];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
		n++;
	return n;
}

static int watch_sample(struct rl_ns *ns, struct rl_watch *w)
{
	struct rl_counters c;
	struct rl_sample *s;
	double mid;
	int ret;

	if (w->n == w->cap) {
		int cap = w->cap ? w->cap * 2 : 4096;

		s = realloc(w->s, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		w->s = s;
		w->cap = cap;
	}
	ret = rl_ns_counters(ns, &c);
	if (ret)
		return ret;
	s = &w->s[w->n++];
	s->t = rl_now();
	s->rx = c.rx_packets;
	s->passed = c.passed;
	s->dropped = c.dropped;
	s->would_drop = c.would_drop;
	s->passed_bytes = c.passed_bytes;
	w->end = c;
	mid = w->n > 1 ? (s->t + s[-1].t) / 2 : s->t;
	for (int i = 0; i < w->nsocks; i++) {
		unsigned long got = rl_udp_drain(w->socks[i]);

		if (got && w->sock_first[i] < 0)
			w->sock_first[i] = mid;
		if (got)
			w->sock_last[i] = mid;
		w->received[i] += got;
	}
	if (w->n > 1 && s->rx != s[-1].rx) {
		double err = (s->t - s[-1].t) / 2;

		if (w->first < 0) {
			w->first = mid;
			w->first_err = err;
		}
		w->last = mid;
		w->last_err = err;
	}
	return 0;
}

int rl_ns_watch(struct rl_ns *ns, struct rl_watch *w)
{
	struct timespec period = { 0, RL_WATCH_PERIOD_NS };
	double deadline = 0, drain_until = 0;
	int ret;

	w->first = w->last = -1;
	w->n = 0;
	memset(w->received, 0, sizeof(w->received));
	for (int i = 0; i < RL_NS_MAX_SOCKS; i++)
		w->sock_first[i] = w->sock_last[i] = -1;
	ret = rl_ns_counters(ns, &w->base);
	if (ret) {
		fprintf(stderr, "    cannot read the counters of %s: %s\n", ns->rx_if,
			strerror(-ret));
		return ret;
	}
	ret = watch_sample(ns, w);
	for (int i = 0; !ret && i < w->nflows; i++) {
		unsigned int limit = w->flows[i]->limit_s ? w->flows[i]->limit_s : 30;

		if (rl_now() + limit + 3 > deadline)
			deadline = rl_now() + limit + 3;
		ret = rl_flow_start(ns, w->flows[i]);
	}
	while (!ret) {
		bool running = false;

		nanosleep(&period, NULL);
		ret = watch_sample(ns, w);
		if (ret)
			break;
		if (w->tick && w->tick(w, w->arg))
			break;
		for (int i = 0; i < w->nflows; i++)
			running |= !rl_flow_done(w->flows[i]);
		if (running && rl_now() > deadline) {
			fprintf(stderr, "    flows still running at their time limit: stopped\n");
			break;
		}
		if (!running && !drain_until)
			drain_until = rl_now() + RL_WATCH_DRAIN_S;
		if (drain_until && rl_now() > drain_until)
			break;
	}
	for (int i = 0; i < w->nflows; i++)
		if (!rl_flow_done(w->flows[i]))
			rl_flow_stop(w->flows[i]);
	return ret;
}

void rl_watch_free(struct rl_watch *w)
{
	const char *dump = getenv("RL_E2E_DUMP");

	/* RL_E2E_DUMP=DIR keeps every watch's samples, one file per watch, for a look at a failure. */
	if (dump && w->n) {
		static unsigned int nd;
		char path[PATH_MAX];
		FILE *f;

		snprintf(path, sizeof(path), "%s/watch-%d-%u.tsv", dump, getpid(), ++nd);
		f = fopen(path, "w");
		for (int i = 0; f && i < w->n; i++)
			fprintf(f, "%.6f\t%llu\t%llu\t%llu\t%llu\n", w->s[i].t,
				(unsigned long long)w->s[i].rx, (unsigned long long)w->s[i].passed,
				(unsigned long long)w->s[i].dropped,
				(unsigned long long)w->s[i].would_drop);
		if (f)
			fclose(f);
	}
	free(w->s);
	w->s = NULL;
	w->n = w->cap = 0;
}

int rl_watch_at(const struct rl_watch *w, double t)
{
	for (int i = 0; i < w->n; i++)
		if (w->s[i].t >= t)
			return i;
	return -1;
}
