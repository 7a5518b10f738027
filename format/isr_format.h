/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * On-disk layout of a recording (.isr). Written by user/record/rec_writer.c, read by
 * analysis/read/rec_reader.c, documented in docs/record-format.md (generated from
 * this header by tests/unit/format_tables.c and checked by a test). The
 * events the EVENTS chunks hold are in format/events.h.
 *
 * A file is a file header followed by chunks. Each chunk has a header with
 * its own magic, kind, sizes and a CRC32 of its stored payload, so a reader
 * can walk the file front to back and stop cleanly at the first chunk that
 * is incomplete or damaged: a recording cut short by SIGKILL, power loss or
 * a full disk reads back up to its last complete chunk. A complete file ends
 * with an END chunk that holds the section table (offset and kind of every
 * earlier chunk) and a fixed-size trailer that points at it.
 */
#ifndef INFERSCOPE_ISR_FORMAT_H
#define INFERSCOPE_ISR_FORMAT_H

#include <linux/types.h>
#include "layout.h"

/* "ISRECORD" read as a little-endian u64; reads as ISR_MAGIC_SWAPPED from a
 * file written on a machine of the other byte order. */
#define ISR_MAGIC		0x44524f4345525349ULL
#define ISR_MAGIC_SWAPPED	0x4953524543524f44ULL
#define ISR_VERSION_MAJOR	1 /* readers refuse other majors */
#define ISR_VERSION_MINOR	3 /* added fields/kinds; readers accept any minor */

/* The first minor version whose file header carries header_crc32. 2 added
 * GPU and NUMA host properties and the reclaim events. */
#define ISR_VERSION_MINOR_HEADER_CRC	1

struct isr_file_header {
	__u64 magic;		/* ISR_MAGIC */
	__u16 version_major;
	__u16 version_minor;
	__u32 header_size;	/* sizeof(struct isr_file_header) when written */
	__u64 created_real_ns;	/* CLOCK_REALTIME when the file was created */
	__u64 created_mono_ns;	/* CLOCK_MONOTONIC at the same moment */
	/* Since 1.1: */
	__u32 header_crc32;	/* zlib crc32 of the header_size bytes of the header, this field as 0 */
	__u32 pad;
};
ISR_LAYOUT(isr_file_header, 40, magic, 0, version_major, 8, version_minor, 10, header_size, 12,
	created_real_ns, 16, created_mono_ns, 24, header_crc32, 32, pad, 36);

/* The file header of version 1.0, which had no CRC. */
#define ISR_FILE_HEADER_V1_0_SIZE	32

#define ISR_CHUNK_MAGIC 0x4b484349U /* "ICHK" */

/* Chunk kinds. Values are part of the format: never renumber. Readers skip
 * kinds they do not know. */
#define ISR_CHUNK_HOST		1 /* properties (ISR_PROP_HOST_*) */
#define ISR_CHUNK_PROCESS	2 /* properties (ISR_PROP_PROC_*) of one target process */
#define ISR_CHUNK_CLOCK		3 /* array of struct isr_clock_pair */
#define ISR_CHUNK_EVENTS	4 /* concatenated events (format/events.h) */
#define ISR_CHUNK_DROPS		5 /* array of struct isr_drop_count, cumulative */
#define ISR_CHUNK_END		6 /* struct isr_end + section table */

#define ISR_COMPRESS_NONE	0
#define ISR_COMPRESS_ZSTD	1

struct isr_chunk_header {
	__u32 magic;		/* ISR_CHUNK_MAGIC */
	__u16 kind;		/* ISR_CHUNK_* */
	__u16 compression;	/* ISR_COMPRESS_* */
	__u32 stored_size;	/* payload bytes that follow in the file */
	__u32 raw_size;		/* payload bytes after decompression */
	__u32 record_count;	/* events, pairs, counters or properties inside */
	__u32 payload_crc32;	/* zlib crc32 of the stored payload */
	__u32 header_crc32;	/* zlib crc32 of this header up to this field */
	__u32 pad;
	__u64 seq;		/* 0, 1, 2, ... in file order */
};
ISR_LAYOUT(isr_chunk_header, 40, magic, 0, kind, 4, compression, 6, stored_size, 8, raw_size, 12,
	record_count, 16, payload_crc32, 20, header_crc32, 24, pad, 28, seq, 32);

/* Largest payload a reader accepts (raw or stored): bounds memory on a
 * corrupted size field. */
#define ISR_CHUNK_MAX_PAYLOAD	(64U << 20)

/*
 * Property lists (HOST and PROCESS chunks): a sequence of records, each a
 * struct isr_prop followed by len bytes of value and zero padding to a
 * multiple of 8. Unknown keys are skipped.
 */
struct isr_prop {
	__u32 key;		/* ISR_PROP_* */
	__u32 len;		/* value bytes, without padding */
};
ISR_LAYOUT(isr_prop, 8, key, 0, len, 4);

/* HOST properties: strings unless noted */
#define ISR_PROP_HOST_NAME		1
#define ISR_PROP_HOST_KERNEL		2 /* uname release */
#define ISR_PROP_HOST_KERNEL_VERSION	3 /* uname version */
#define ISR_PROP_HOST_MACHINE		4 /* uname machine */
#define ISR_PROP_HOST_BOOT_ID		5
#define ISR_PROP_HOST_NCPUS		6 /* __u32 */
#define ISR_PROP_HOST_TOOL_VERSION	7
#define ISR_PROP_HOST_COMMAND		8 /* the recorder's argv, NUL-separated */
#define ISR_PROP_HOST_START_MONO_NS	9 /* __u64, recording start */
#define ISR_PROP_HOST_DURATION_LIMIT_NS 10 /* __u64, 0 = until targets exit or Ctrl-C */
#define ISR_PROP_HOST_GPU		11 /* struct isr_host_gpu + local CPU list; one per NVIDIA GPU */
#define ISR_PROP_HOST_NUMA_NODE		12 /* struct isr_host_numa_node + distances + CPU list; one per node */
#define ISR_PROP_HOST_TRIGGER		13 /* a flight-recorder window: what made the recorder write it */

/*
 * An NVIDIA GPU of the host (PCI vendor 0x10de, class 0x03xxxx), from
 * sysfs (/sys/bus/pci/devices): where it sits and what its PCIe link can
 * carry. Link speeds are in MT/s per lane (2500 = 2.5 GT/s, PCIe 1.0;
 * 32000 = PCIe 5.0), widths in lanes; 0 where sysfs did not say. A GPU
 * parks its link at 2.5 GT/s when idle: the maximum speeds tell what it
 * runs at under load. Followed by its local CPU list (local_cpulist, the
 * kernel's "0-7,16-23" text, no NUL) to the end of the property's value.
 */
struct isr_host_gpu {
	char pci_address[16];	/* "0000:3b:00.0", NUL-terminated */
	__u16 vendor;
	__u16 device;
	__u32 class_code;	/* 0x030200: 3D controller, 0x030000: VGA */
	__u32 link_speed_mts;	/* current_link_speed when recording began */
	__u32 max_link_speed_mts; /* max_link_speed: the GPU's */
	__u16 link_width;	/* current_link_width */
	__u16 max_link_width;
	__u32 port_max_speed_mts; /* the upstream port's max_link_speed (the link's other end) */
	__u16 port_max_width;
	__u16 pad;
	__s32 numa_node;	/* -1: none */
};
ISR_LAYOUT(isr_host_gpu, 48, pci_address, 0, vendor, 16, device, 18, class_code, 20, link_speed_mts, 24,
	max_link_speed_mts, 28, link_width, 32, max_link_width, 34, port_max_speed_mts, 36, port_max_width, 40,
	pad, 42, numa_node, 44);

/* One NUMA node's distance to another (the kernel's node distance: 10 is
 * local). */
struct isr_numa_distance {
	__u32 node;
	__u32 distance;
};
ISR_LAYOUT(isr_numa_distance, 8, node, 0, distance, 4);

/* A NUMA node of the host (/sys/devices/system/node/nodeN). Followed by
 * distance_count struct isr_numa_distance (to every online node, itself
 * included), then its CPU list (cpulist, text, no NUL) to the end of the
 * property's value. */
struct isr_host_numa_node {
	__u32 node;
	__u32 distance_count;
	__u64 memory_bytes;	/* its MemTotal; 0: unknown */
};
ISR_LAYOUT(isr_host_numa_node, 16, node, 0, distance_count, 4, memory_bytes, 8);

/* PROCESS properties: strings unless noted */
#define ISR_PROP_PROC_PID		1 /* __u32 */
#define ISR_PROP_PROC_PPID		2 /* __u32 */
#define ISR_PROP_PROC_COMM		3
#define ISR_PROP_PROC_CMDLINE		4 /* NUL-separated argv */
#define ISR_PROP_PROC_EXE		5 /* readlink of /proc/PID/exe */
#define ISR_PROP_PROC_MAPS		6 /* text of /proc/PID/maps */
#define ISR_PROP_PROC_THREADS		7 /* array of struct isr_thread_info */
#define ISR_PROP_PROC_SEEN_MONO_NS	8 /* __u64, when the snapshot was taken */
#define ISR_PROP_PROC_ORIGIN		9 /* __u32, ISR_ORIGIN_* */

#define ISR_ORIGIN_ATTACHED	1 /* named with -p */
#define ISR_ORIGIN_LAUNCHED	2 /* started by the recorder (-- CMD) */
#define ISR_ORIGIN_CHILD	3 /* forked by a target after recording began */
#define ISR_ORIGIN_EXEC		4 /* a target that called exec (new image) */
#define ISR_ORIGIN_DESCENDANT	5 /* a descendant of a -p process, running when recording began */

struct isr_thread_info {
	__u32 tid;
	__u32 pad;
	char comm[16];
};
ISR_LAYOUT(isr_thread_info, 24, tid, 0, pad, 4, comm, 8);

#define ISR_CLOCK_REALTIME 1 /* other_ns is CLOCK_REALTIME */

/* One reading of CLOCK_MONOTONIC against another clock, taken as
 * mono-before, other, mono-after; mono_ns is the midpoint and
 * uncertainty_ns half the window. */
struct isr_clock_pair {
	__u64 mono_ns;
	__u64 other_ns;
	__u32 uncertainty_ns;
	__u32 clock;		/* ISR_CLOCK_* */
};
ISR_LAYOUT(isr_clock_pair, 24, mono_ns, 0, other_ns, 8, uncertainty_ns, 16, clock, 20);

/* Cumulative drop count of one source (ISR_SRC_* in format/events.h) at the
 * time the chunk was written; the last DROPS chunk holds the totals. */
struct isr_drop_count {
	__u32 source;
	__u32 pad;
	__u64 count;
};
ISR_LAYOUT(isr_drop_count, 16, source, 0, pad, 4, count, 8);

/* Why a recording stopped (isr_end.stop_reason), one line each:
 * X(ID, name, value, meaning), the constant ISR_STOP_<ID>. */
#define ISR_STOP_REASONS(X)								\
	X(DURATION,		duration,	1, "the -d duration elapsed")		\
	X(SIGNAL,		signal,		2, "SIGINT or SIGTERM")			\
	X(TARGETS_EXITED,	targets_exited,	3, "every target exited")		\
	X(WRITE_ERROR,		write_error,	4, "the disk filled up or failed")		\
	X(FLIGHT_TRIGGER,	flight_trigger,	5, "a flight-recorder window (--flight-recorder) written at a trigger; recording went on")

#define ISR_STOP_ENUM_ROW(ID, name, value, meaning) ISR_STOP_##ID = value,
enum {
	ISR_STOP_REASONS(ISR_STOP_ENUM_ROW)
};
#undef ISR_STOP_ENUM_ROW

/* Payload of the END chunk: this struct, then section_count entries of
 * struct isr_section. */
struct isr_end {
	__u64 end_mono_ns;
	__u64 event_count;	/* events written in EVENTS chunks */
	__u32 stop_reason;	/* ISR_STOP_* */
	__u32 section_count;
};
ISR_LAYOUT(isr_end, 24, end_mono_ns, 0, event_count, 8, stop_reason, 16, section_count, 20);

struct isr_section {
	__u64 offset;		/* file offset of the chunk header */
	__u32 kind;		/* ISR_CHUNK_* */
	__u32 record_count;
};
ISR_LAYOUT(isr_section, 16, offset, 0, kind, 8, record_count, 12);

#define ISR_TRAILER_MAGIC 0x444e455253495349ULL /* "ISISREND" */

/* Last 16 bytes of a complete file. */
struct isr_trailer {
	__u64 end_offset;	/* file offset of the END chunk header */
	__u64 magic;		/* ISR_TRAILER_MAGIC */
};
ISR_LAYOUT(isr_trailer, 16, end_offset, 0, magic, 8);

#endif /* INFERSCOPE_ISR_FORMAT_H */
