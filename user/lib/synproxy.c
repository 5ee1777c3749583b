// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The stack's half of SYN cookies: see synproxy.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include "dynlib_nft.h"
#include "log.h"
#include "synproxy.h"

/* What SYNPROXY needs of the stack: tcp_timestamps carries the client's options back. */
struct sysctl_need {
	const char *path, *name;
	long min, max; /* acceptable values */
	long set; /* what --syn-proxy nft writes when it is outside them */
};

static const struct sysctl_need needs[] = {
	{ "/proc/sys/net/ipv4/tcp_syncookies", "net.ipv4.tcp_syncookies", 1, 2, 1 },
	{ "/proc/sys/net/ipv4/tcp_timestamps", "net.ipv4.tcp_timestamps", 1, 1, 1 },
	/* An ACK nobody tracked must be invalid, so that it reaches synproxy. */
	{ "/proc/sys/net/netfilter/nf_conntrack_tcp_loose", "net.netfilter.nf_conntrack_tcp_loose",
	  0, 0, 0 },
};

static int read_long(const char *path, int field, long *v)
{
	FILE *f = fopen(path, "r");
	int ret = -EIO;

	if (!f)
		return -errno;
	for (int i = 0; i <= field; i++)
		if (fscanf(f, "%ld", v) != 1)
			goto out;
	ret = 0;
out:
	fclose(f);
	return ret;
}

static int write_long(const char *path, long v)
{
	FILE *f = fopen(path, "w");
	int ret = 0;

	if (!f)
		return -errno;
	if (fprintf(f, "%ld\n", v) < 0)
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

int rl_synproxy_params(const char *ifname, struct rl_syn_cfg *syn, char *err, size_t errlen)
{
	struct ifreq ifr = {};
	long rmem = 0, core = 0, ttl = 64, space;
	int fd, ws = 0, ret;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "couldn't open a socket: %s", strerror(errno));
		return ret;
	}
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ret = ioctl(fd, SIOCGIFMTU, &ifr) ? -errno : 0;
	close(fd);
	if (ret) {
		snprintf(err, errlen, "couldn't read the MTU of '%s': %s", ifname, strerror(-ret));
		return ret;
	}
	/* IPv4's least MTU is 576 and IPv6's 1280: below them, the least MSS each allows. */
	if (ifr.ifr_mtu > 65535)
		ifr.ifr_mtu = 65535;
	syn->mss4 = (__u16)(ifr.ifr_mtu >= 576 ? ifr.ifr_mtu - 40 : 536);
	syn->mss6 = (__u16)(ifr.ifr_mtu >= 1280 ? ifr.ifr_mtu - 60 : 1220);
	/* tcp_select_initial_window(): the scale that covers the largest receive buffer. */
	read_long("/proc/sys/net/ipv4/tcp_rmem", 2, &rmem);
	read_long("/proc/sys/net/core/rmem_max", 0, &core);
	space = rmem > core ? rmem : core;
	while (space >> (ws + 1) && ws < 40)
		ws++;
	ws -= 15;
	syn->wscale = (__u8)(ws < 0 ? 0 : ws > RL_SYN_MAX_WSCALE ? RL_SYN_MAX_WSCALE : ws);
	read_long("/proc/sys/net/ipv4/ip_default_ttl", 0, &ttl);
	syn->ttl = (__u8)(ttl > 0 && ttl < 256 ? ttl : 64);
	return 0;
}

/* Run @cmds in one nftables transaction; the output in *@out (freed by the caller) if asked. */
static int nft_run(const char *cmds, char **out, char *err, size_t errlen)
{
	struct nft_ctx *ctx = rl_nft.nft_ctx_new(NFT_CTX_DEFAULT);
	const char *e, *o;
	int ret = 0;

	if (!ctx) {
		snprintf(err, errlen, "couldn't start libnftables");
		return -ENOMEM;
	}
	rl_nft.nft_ctx_buffer_output(ctx);
	rl_nft.nft_ctx_buffer_error(ctx);
	if (rl_nft.nft_run_cmd_from_buffer(ctx, cmds)) {
		e = rl_nft.nft_ctx_get_error_buffer(ctx);
		snprintf(err, errlen, "nftables refused it: %.*s", (int)strcspn(e ?: "", "\n"),
			 e ?: "");
		ret = -EINVAL;
	} else if (out) {
		o = rl_nft.nft_ctx_get_output_buffer(ctx);
		*out = strdup(o ?: "");
		if (!*out)
			ret = -ENOMEM;
	}
	rl_nft.nft_ctx_free(ctx);
	return ret;
}

/* The ports of @syn as an nftables set: { 22, 8000-8099 }. */
static void port_set(const struct rl_syn_cfg *syn, char *buf, size_t len)
{
	size_t off = (size_t)snprintf(buf, len, "{ ");

	for (int i = 0; i < syn->n && i < RL_SYN_MAX_RANGES && off < len; i++) {
		if (syn->port[i].lo == syn->port[i].hi)
			off += (size_t)snprintf(buf + off, len - off, "%s%u", i ? ", " : "",
						syn->port[i].lo);
		else
			off += (size_t)snprintf(buf + off, len - off, "%s%u-%u", i ? ", " : "",
						syn->port[i].lo, syn->port[i].hi);
	}
	if (off < len)
		snprintf(buf + off, len - off, " }");
}

/* An interface name is at most 15 characters and never holds '"' (dev_valid_name()). */
static bool name_ok(const char *ifname, char *err, size_t errlen)
{
	if (strlen(ifname) >= IFNAMSIZ || strpbrk(ifname, "\"\\ ")) {
		snprintf(err, errlen, "'%s' is not an interface name nftables can be given",
			 ifname);
		return false;
	}
	return true;
}

/*
 * The chains' suffix for @ifname: nftables 1.0.6 takes no quoted chain
 * name, and a name is letters, digits, '_', '.', '-' after the prefix.
 */
static void chain_id(const char *ifname, char *id, size_t len)
{
	size_t i;

	for (i = 0; ifname[i] && i + 1 < len; i++)
		id[i] = (ifname[i] >= 'a' && ifname[i] <= 'z') ||
					(ifname[i] >= 'A' && ifname[i] <= 'Z') ||
					(ifname[i] >= '0' && ifname[i] <= '9') ||
					strchr("_.-", ifname[i]) ?
				ifname[i] :
				'_';
	id[i] = '\0';
}

int rl_synproxy_setup(const char *ifname, const struct rl_syn_cfg *syn, char *err, size_t errlen)
{
	const char *t = "inet " RL_SYNPROXY_TABLE;
	char ports[RL_SYN_MAX_RANGES * 13 + 8], cmds[2048], why[256], id[IFNAMSIZ];
	long v;
	int ret;

	if (!name_ok(ifname, err, errlen))
		return -EINVAL;
	/* Before the sysctls: without the library nothing is changed. */
	if (rl_nft_load("--syn-proxy nft", err, errlen))
		return -ELIBACC;
	chain_id(ifname, id, sizeof(id));
	port_set(syn, ports, sizeof(ports));
	snprintf(cmds, sizeof(cmds),
		 "add table %1$s\n"
		 "add chain %1$s raw-%7$s { type filter hook prerouting priority raw; }\n"
		 "flush chain %1$s raw-%7$s\n"
		 "add rule %1$s raw-%7$s iifname \"%2$s\" tcp dport %3$s "
		 "tcp flags & (fin | syn | rst | ack) == syn notrack\n"
		 "add chain %1$s in-%7$s { type filter hook input priority filter; }\n"
		 "flush chain %1$s in-%7$s\n"
		 "add rule %1$s in-%7$s iifname \"%2$s\" meta nfproto ipv4 tcp dport %3$s "
		 "ct state invalid,untracked synproxy mss %4$u wscale %6$u timestamp sack-perm\n"
		 "add rule %1$s in-%7$s iifname \"%2$s\" meta nfproto ipv6 tcp dport %3$s "
		 "ct state invalid,untracked synproxy mss %5$u wscale %6$u timestamp sack-perm\n"
		 "add rule %1$s in-%7$s iifname \"%2$s\" tcp dport %3$s ct state invalid drop\n",
		 t, ifname, ports, syn->mss4, syn->mss6, syn->wscale, id);
	ret = nft_run(cmds, NULL, why, sizeof(why));
	if (ret) {
		snprintf(err, errlen,
			 "--syn-proxy nft: couldn't add the synproxy rules for '%s': %s", ifname,
			 why);
		return ret;
	}
	/* After the rules: nf_conntrack's sysctls exist once conntrack is in use. */
	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
		ret = read_long(needs[i].path, 0, &v);
		if (!ret && v >= needs[i].min && v <= needs[i].max)
			continue;
		if (!ret)
			ret = write_long(needs[i].path, needs[i].set);
		if (ret) {
			snprintf(err, errlen, "--syn-proxy nft: couldn't set %s to %ld: %s",
				 needs[i].name, needs[i].set, strerror(-ret));
			rl_synproxy_remove(ifname, why, sizeof(why));
			return ret;
		}
		pr_debug("set %s to %ld (was %ld)", needs[i].name, needs[i].set, v);
	}
	return 0;
}

int rl_synproxy_check(const struct rl_syn_cfg *syn, char *err, size_t errlen)
{
	char *rules = NULL, why[256];
	size_t off = 0;
	int missing = 0;
	long v;

	(void)syn;
	if (rl_nft_load("--syn-proxy check", err, errlen))
		return -ELIBACC;
	off = (size_t)snprintf(err, errlen, "the stack cannot complete SYN-cookie connections:");
	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]) && off < errlen; i++) {
		int ret = read_long(needs[i].path, 0, &v);

		if (!ret && v >= needs[i].min && v <= needs[i].max)
			continue;
		if (ret)
			off += (size_t)snprintf(err + off, errlen - off, "%s %s unreadable (%s)",
						missing++ ? ";" : "", needs[i].name,
						strerror(-ret));
		else
			off += (size_t)snprintf(err + off, errlen - off, "%s %s is %ld (needs %ld)",
						missing++ ? ";" : "", needs[i].name, v,
						needs[i].set);
	}
	if (nft_run("list ruleset", &rules, why, sizeof(why)) || !rules ||
	    (!strstr(rules, "synproxy") && !strstr(rules, "SYNPROXY"))) {
		if (off < errlen)
			off += (size_t)snprintf(
				err + off, errlen - off,
				"%s no synproxy rule in the nftables ruleset (nor an iptables-nft "
				"SYNPROXY target)",
				missing++ ? ";" : "");
	}
	free(rules);
	if (!missing)
		return 0;
	if (off < errlen)
		snprintf(err + off, errlen - off,
			 " (attach or set --syn-cookies PORTS --syn-proxy nft sets them up)");
	return -ENOENT;
}

int rl_synproxy_prepare(const char *ifname, struct rl_syn_cfg *syn, bool check, char *err,
			size_t errlen)
{
	char why[256];
	int ret;

	ret = rl_synproxy_params(ifname, syn, err, errlen);
	if (ret || !syn->n)
		return ret;
	if (check) {
		ret = rl_synproxy_check(syn, why, sizeof(why));
		if (ret)
			snprintf(err, errlen, "--syn-proxy check: %s", why);
		return ret;
	}
	ret = rl_synproxy_setup(ifname, syn, err, errlen);
	return ret ? ret : 1;
}

int rl_synproxy_remove(const char *ifname, char *err, size_t errlen)
{
	const char *t = "inet " RL_SYNPROXY_TABLE;
	char cmds[512], why[256], *out = NULL, id[IFNAMSIZ];
	int found = 0;

	if (!name_ok(ifname, err, errlen))
		return -EINVAL;
	/* Without libnftables no chain can have been made (rl_synproxy_setup() needs it). */
	if (rl_nft_load("removing the --syn-proxy nft chains", why, sizeof(why)))
		return 0;
	chain_id(ifname, id, sizeof(id));
	/* No table: nothing of ours here (nft 1.0.6 has no "destroy"). */
	snprintf(cmds, sizeof(cmds), "list table %s", t);
	if (nft_run(cmds, &out, why, sizeof(why)))
		return 0;
	free(out);
	out = NULL;
	/* Each chain on its own: one that is not there fails alone. */
	for (int i = 0; i < 2; i++) {
		snprintf(cmds, sizeof(cmds), "delete chain %s %s-%s", t, i ? "in" : "raw", id);
		found |= !nft_run(cmds, NULL, why, sizeof(why));
	}
	snprintf(cmds, sizeof(cmds), "list table %s", t);
	if (!nft_run(cmds, &out, why, sizeof(why)) && !strstr(out, "chain ")) {
		snprintf(cmds, sizeof(cmds), "delete table %s", t);
		if (nft_run(cmds, NULL, why, sizeof(why))) {
			snprintf(err, errlen, "couldn't remove the empty table %s: %s", t, why);
			free(out);
			return -EIO;
		}
	}
	free(out);
	return found;
}
