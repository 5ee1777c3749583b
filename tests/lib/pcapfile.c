// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Capture files for the tests, through libpcap's own writer (see pcapfile.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "dynlib_pcap.h"
#include "pcapfile.h"

#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif

#define ETH_HDR	 14
#define SNAPLEN	 262144
#define PKT_OUT	 4 /* PACKET_OUTGOING */
#define PKT_HOST 0 /* PACKET_HOST */

int pf_tmpname(char *path, size_t len, const char *suffix)
{
	int fd;

	snprintf(path, len, "/tmp/rl-test-pcap-XXXXXX%s", suffix);
	fd = mkstemps(path, (int)strlen(suffix));
	if (fd < 0) {
		perror("mkstemps");
		return -1;
	}
	close(fd);
	return 0;
}

/* The cooked header of @r into @h; its length. */
static unsigned int cooked(enum pf_link link, const struct pf_rec *r, __u8 *h)
{
	__u16 proto = (__u16)(r->data[12] << 8 | r->data[13]);
	__u16 type = r->outgoing ? PKT_OUT : PKT_HOST;

	if (link == PF_SLL) {
		memset(h, 0, 16);
		h[0] = (__u8)(type >> 8);
		h[1] = (__u8)type;
		h[3] = 1; /* ARPHRD_ETHER */
		h[5] = 6; /* address length */
		memcpy(h + 6, r->data + 6, 6); /* the source MAC */
		h[14] = (__u8)(proto >> 8);
		h[15] = (__u8)proto;
		return 16;
	}
	memset(h, 0, 20);
	h[0] = (__u8)(proto >> 8);
	h[1] = (__u8)proto;
	h[7] = 2; /* interface index */
	h[9] = 1; /* ARPHRD_ETHER */
	h[10] = (__u8)type;
	h[11] = 6;
	memcpy(h + 12, r->data + 6, 6);
	return 20;
}

int pf_write(const char *path, enum pf_link link, const struct pf_rec *r, size_t n)
{
	int dlt = link == PF_ETHER ? DLT_EN10MB : link == PF_SLL ? DLT_LINUX_SLL : DLT_LINUX_SLL2;
	pcap_dumper_t *d;
	__u8 *buf = NULL;
	char err[256];
	pcap_t *p;
	int ret = 0;

	/* The library's loader, as the program's own writer (events --pcap) uses it. */
	if (rl_pcap_load("the tests' capture writer", err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	p = rl_pcap.pcap_open_dead_with_tstamp_precision(dlt, SNAPLEN, PCAP_TSTAMP_PRECISION_NANO);
	if (!p) {
		fprintf(stderr, "pcap_open_dead failed\n");
		return -1;
	}
	d = rl_pcap.pcap_dump_open(p, path);
	if (!d) {
		fprintf(stderr, "pcap_dump_open %s: %s\n", path, rl_pcap.pcap_geterr(p));
		rl_pcap.pcap_close(p);
		return -1;
	}
	buf = malloc(SNAPLEN + 32);
	for (size_t i = 0; buf && i < n; i++) {
		struct pcap_pkthdr h = { .caplen = r[i].caplen, .len = r[i].len };
		unsigned int hl = 0;

		h.ts.tv_sec = (time_t)(r[i].ns / 1000000000ULL);
		/* A nanosecond file: tv_usec holds the ns (pcap_open_dead_with_tstamp_precision). */
		h.ts.tv_usec = (suseconds_t)(r[i].ns % 1000000000ULL);
		if (link != PF_ETHER) {
			if (r[i].caplen < ETH_HDR) {
				fprintf(stderr, "record %zu: no Ethernet header to cook\n", i);
				ret = -1;
				break;
			}
			hl = cooked(link, &r[i], buf);
			memcpy(buf + hl, r[i].data + ETH_HDR, r[i].caplen - ETH_HDR);
			h.caplen = r[i].caplen - ETH_HDR + hl;
			h.len = r[i].len - ETH_HDR + hl;
			rl_pcap.pcap_dump((u_char *)d, &h, buf);
		} else {
			rl_pcap.pcap_dump((u_char *)d, &h, r[i].data);
		}
	}
	if (!buf)
		ret = -1;
	if (rl_pcap.pcap_dump_flush(d))
		ret = -1;
	rl_pcap.pcap_dump_close(d);
	rl_pcap.pcap_close(p);
	free(buf);
	if (ret)
		unlink(path);
	return ret;
}
