/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Capture files for simulate --pcap: pcap and pcapng as tcpdump, tshark and
 * dumpcap write them, read with libpcap, each record handed on as the frame
 * the XDP program would have seen: its Ethernet header first (Linux cooked
 * captures, SLL and SLL2, get one made from their protocol field), its length
 * on the wire, its time in ns. Errors name the file, the record and what is
 * wrong with it.
 */
#ifndef RL_CAPTURE_H
#define RL_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct rl_capture;

/* One received frame of a capture. */
struct rl_capture_frame {
	__u64 index; /* the record's number in the file, from 1 (tshark's frame.number) */
	__u64 ns; /* its time, ns since the epoch; never before the frame before's */
	const __u8 *data; /* the frame from its Ethernet header, 4-byte aligned after it */
	__u32 caplen; /* bytes of it in the capture */
	__u32 len; /* its length on the wire: what XDP sees (data_end - data) */
	bool reordered; /* stamped earlier than the frame before: replayed at that one's time */
};

/* What was read so far. */
struct rl_capture_stats {
	__u64 records; /* every record of the file read */
	__u64 frames; /* handed on by rl_capture_next() */
	__u64 outgoing; /* cooked records of frames this host sent: XDP never sees them */
	__u64 reordered; /* frames stamped earlier than the frame before them */
	__u64 first_ns, last_ns; /* of the frames handed on */
};

/*
 * Open @path ("-": standard input) for reading. Any file that is not a
 * directory (a FIFO, <(tcpdump -w -) too). 0, or negative errno with a
 * message naming @path in @err: not a capture, a link type other than
 * Ethernet and Linux cooked, ...
 */
int rl_capture_open(struct rl_capture **cap, const char *path, char *err, size_t errlen);
/*
 * The next received frame into @f, valid until the next call. 1 for a frame,
 * 0 at the end of the file, negative errno with "PATH: record N: ..." in @err
 * for a record that cannot be read (a truncated or corrupt file).
 */
int rl_capture_next(struct rl_capture *cap, struct rl_capture_frame *f, char *err, size_t errlen);
const struct rl_capture_stats *rl_capture_stats(const struct rl_capture *cap);
/* The link type: "EN10MB (Ethernet)", "LINUX_SLL2 (Linux cooked v2)". */
const char *rl_capture_linktype(const struct rl_capture *cap);
/* "pcap" or "pcapng". */
const char *rl_capture_format(const struct rl_capture *cap);
void rl_capture_close(struct rl_capture *cap);

#endif /* RL_CAPTURE_H */
