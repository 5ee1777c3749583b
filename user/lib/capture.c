// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Capture files through libpcap (see capture.h). libpcap reads both formats
 * and every version tcpdump and tshark write, and scales microsecond files to
 * nanoseconds; what is left here is the link layer (a cooked header becomes
 * an Ethernet one), checking each record against what a frame can be, and
 * the clock.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/if_ether.h>
#include "capture.h"
#include "dynlib_pcap.h"

#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif

/* Linux cooked headers (pcap-linktype(7)): their length, and where their fields are. */
#define SLL_HLEN	  16
#define SLL_PKTTYPE	  0 /* 16 bits */
#define SLL_PROTO	  14
#define SLL2_HLEN	  20
#define SLL2_PROTO	  0
#define SLL2_PKTTYPE	  10 /* 8 bits */
#define PACKET_OUTGOING_T 4 /* the packet type of a frame this host sent */

/*
 * The made frame starts 2 bytes into its buffer, so that the IP header after
 * an untagged Ethernet header is 4-byte aligned, as drivers place it
 * (NET_IP_ALIGN).
 */
#define FRAME_ALIGN 2

struct rl_capture {
	char path[256];
	pcap_t *p;
	int dlt;
	bool pcapng;
	__u8 *buf;
	size_t cap;
	struct rl_capture_stats st;
	char linktype[96];
};

int rl_capture_open(struct rl_capture **capp, const char *path, char *err, size_t errlen)
{
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	struct rl_capture *cap;
	struct stat stt;
	FILE *f;
	int fd;

	*capp = NULL;
	if (rl_pcap_load("simulate --pcap", err, errlen))
		return -ELIBACC;
	if (!strcmp(path, "-")) {
		fd = dup(0);
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0) {
		snprintf(err, errlen, "cannot open capture '%s': %s", path, strerror(errno));
		return -errno;
	}
	if (!fstat(fd, &stt) && S_ISDIR(stt.st_mode)) {
		snprintf(err, errlen, "capture '%s' is a directory", path);
		close(fd);
		return -EISDIR;
	}
	f = fdopen(fd, "rb");
	if (!f) {
		snprintf(err, errlen, "cannot read capture '%s': %s", path, strerror(errno));
		close(fd);
		return -ENOMEM;
	}
	cap = calloc(1, sizeof(*cap));
	if (!cap) {
		fclose(f);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	snprintf(cap->path, sizeof(cap->path), "%s", path);
	/* Nanoseconds whatever the file holds: libpcap scales microsecond files. */
	cap->p = rl_pcap.pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO,
								  errbuf);
	if (!cap->p) {
		/* libpcap's words: "unknown file format", "truncated dump file; ...". */
		snprintf(err, errlen, "capture '%s': %s", path,
			 *errbuf ? errbuf : "not a pcap or pcapng file");
		fclose(f);
		free(cap);
		return -EINVAL;
	}
	cap->dlt = rl_pcap.pcap_datalink(cap->p);
	/* libpcap reports a pcapng file as version 1.0 (its section header's), pcap as 2.4. */
	cap->pcapng = rl_pcap.pcap_major_version(cap->p) == 1;
	snprintf(cap->linktype, sizeof(cap->linktype), "%s (%s)",
		 rl_pcap.pcap_datalink_val_to_name(cap->dlt) ?: "?",
		 rl_pcap.pcap_datalink_val_to_description(cap->dlt) ?: "unknown");
	if (cap->dlt != DLT_EN10MB && cap->dlt != DLT_LINUX_SLL && cap->dlt != DLT_LINUX_SLL2) {
		snprintf(err, errlen,
			 "capture '%s': link type %s is not one simulate replays: Ethernet "
			 "(EN10MB, VLAN tags included) or Linux cooked (LINUX_SLL, LINUX_SLL2, as "
			 "tcpdump -i any writes)",
			 path, cap->linktype);
		rl_capture_close(cap);
		return -EPROTONOSUPPORT;
	}
	*capp = cap;
	return 0;
}

void rl_capture_close(struct rl_capture *cap)
{
	if (!cap)
		return;
	if (cap->p)
		rl_pcap.pcap_close(cap->p);
	free(cap->buf);
	free(cap);
}

const struct rl_capture_stats *rl_capture_stats(const struct rl_capture *cap)
{
	return &cap->st;
}

const char *rl_capture_linktype(const struct rl_capture *cap)
{
	return cap->linktype;
}

const char *rl_capture_format(const struct rl_capture *cap)
{
	return cap->pcapng ? "pcapng" : "pcap";
}

__attribute__((format(printf, 4, 5))) static int bad_record(struct rl_capture *cap, char *err,
							    size_t errlen, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "capture '%s': record %llu: %s", cap->path,
		 (unsigned long long)cap->st.records, msg);
	return -EINVAL;
}

/* Room for a frame of @n bytes after the alignment offset. */
static int room(struct rl_capture *cap, size_t n)
{
	__u8 *b;

	if (n + FRAME_ALIGN <= cap->cap)
		return 0;
	b = realloc(cap->buf, n + FRAME_ALIGN);
	if (!b)
		return -ENOMEM;
	cap->buf = b;
	cap->cap = n + FRAME_ALIGN;
	return 0;
}

static __u16 get16(const __u8 *p)
{
	return (__u16)(p[0] << 8 | p[1]);
}

/*
 * The record @h, @pkt as an Ethernet frame into @f; 1, or 0 for a record to
 * skip (a frame this host sent), or negative errno with a message.
 */
static int frame_of(struct rl_capture *cap, const struct pcap_pkthdr *h, const __u8 *pkt,
		    struct rl_capture_frame *f, char *err, size_t errlen)
{
	unsigned int hlen = 0;
	__u16 proto = 0;
	__u8 *d;

	if (h->caplen > h->len)
		return bad_record(cap, err, errlen,
				  "%u bytes captured of a %u-byte frame: more than the frame "
				  "(a corrupt file)",
				  h->caplen, h->len);
	if (cap->dlt == DLT_LINUX_SLL || cap->dlt == DLT_LINUX_SLL2) {
		bool v2 = cap->dlt == DLT_LINUX_SLL2;

		hlen = v2 ? SLL2_HLEN : SLL_HLEN;
		if (h->caplen < hlen)
			return bad_record(cap, err, errlen,
					  "%u bytes captured, fewer than its %u-byte Linux cooked "
					  "header",
					  h->caplen, hlen);
		if ((v2 ? pkt[SLL2_PKTTYPE] : get16(pkt + SLL_PKTTYPE)) == PACKET_OUTGOING_T) {
			cap->st.outgoing++;
			return 0;
		}
		proto = get16(pkt + (v2 ? SLL2_PROTO : SLL_PROTO));
	}
	if (room(cap, (size_t)h->caplen - hlen + (hlen ? ETH_HLEN : 0))) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	d = cap->buf + FRAME_ALIGN;
	if (hlen) {
		/*
		 * The Ethernet header the frame had, as far as the limiter reads it:
		 * the protocol (an EtherType, or below 0x0600 one of the
		 * non-Ethernet-II kinds, which is not IP there either). The
		 * addresses are not read; they are left zero.
		 */
		memset(d, 0, ETH_HLEN - 2);
		d[ETH_HLEN - 2] = (__u8)(proto >> 8);
		d[ETH_HLEN - 1] = (__u8)proto;
		memcpy(d + ETH_HLEN, pkt + hlen, h->caplen - hlen);
		f->caplen = h->caplen - hlen + ETH_HLEN;
		f->len = h->len - hlen + ETH_HLEN;
	} else {
		memcpy(d, pkt, h->caplen);
		f->caplen = h->caplen;
		f->len = h->len;
	}
	f->data = d;
	return 1;
}

int rl_capture_next(struct rl_capture *cap, struct rl_capture_frame *f, char *err, size_t errlen)
{
	struct pcap_pkthdr *h;
	const u_char *pkt;
	__u64 ns;
	int ret;

	for (;;) {
		ret = rl_pcap.pcap_next_ex(cap->p, &h, &pkt);
		if (ret == PCAP_ERROR_BREAK)
			return 0; /* the end of the file */
		cap->st.records++;
		if (ret != 1)
			return bad_record(cap, err, errlen, "%s", rl_pcap.pcap_geterr(cap->p));
		/* libpcap gives nanoseconds in tv_usec (opened with PCAP_TSTAMP_PRECISION_NANO). */
		if (h->ts.tv_sec < 0 || (unsigned long long)h->ts.tv_sec > ~0ULL / 1000000000ULL ||
		    h->ts.tv_usec < 0 || h->ts.tv_usec >= 1000000000L)
			return bad_record(cap, err, errlen,
					  "time %lld.%09lld is not a time (a corrupt file)",
					  (long long)h->ts.tv_sec, (long long)h->ts.tv_usec);
		ns = (__u64)h->ts.tv_sec * 1000000000ULL;
		if (ns + (__u64)h->ts.tv_usec < ns)
			return bad_record(cap, err, errlen, "time %lld.%09lld is out of range",
					  (long long)h->ts.tv_sec, (long long)h->ts.tv_usec);
		ns += (__u64)h->ts.tv_usec;
		ret = frame_of(cap, h, pkt, f, err, errlen);
		if (ret < 0)
			return ret;
		if (ret)
			break;
	}
	/*
	 * The kernel's clock never goes back; a capture's can, by a few
	 * microseconds between queues (or two captures merged): such a frame
	 * is replayed at the time of the frame before it.
	 */
	f->reordered = cap->st.frames && ns < cap->st.last_ns;
	if (f->reordered) {
		cap->st.reordered++;
		ns = cap->st.last_ns;
	}
	if (!cap->st.frames)
		cap->st.first_ns = ns;
	cap->st.last_ns = ns;
	cap->st.frames++;
	f->ns = ns;
	f->index = cap->st.records;
	return 1;
}
