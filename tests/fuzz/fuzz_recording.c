// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: one input is one recording file, taken both ways
 * `inferscope-bpf analyze` and `diff` take one: loaded into memory
 * (recording__load, a pipe) and streamed (pass__open_file, a file), the
 * whole analysis, and every report
 * writer (Markdown, JSON, HTML, Perfetto), the diff's (of the recording
 * with itself) and those of a set of recordings (the recording twice) into
 * /dev/null. Before loading, the chunk CRCs and sequence
 * numbers of the input are recomputed, so that a mutation inside a chunk
 * reaches the decoders instead of stopping at the CRC check (which the
 * unit tests cover). Built with -fsanitize=fuzzer,address,undefined
 * (Makefile: make fuzz; tests/fuzz/run.sh).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <zlib.h>

#include "analysis.h"
#include "diff.h"
#include "isr_format.h"
#include "recording.h"
#include "report.h"

/* A header_size beyond this is not worth following when fixing CRCs; the
 * reader decides what it accepts. */
#define FIX_HEADER_MAX 4096

static int memfd = -1;
static FILE *sink;
static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	memfd = memfd_create("fuzz.isr", MFD_CLOEXEC);
	sink = fopen("/dev/null", "w");
	if (memfd < 0 || !sink) {
		perror("fuzz_recording: setup");
		abort();
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	return 0;
}

/* Walks the chunks from the file header on and makes each header's
 * payload CRC, header CRC and sequence number right. */
static void fix_chunks(uint8_t *b, size_t n)
{
	struct isr_file_header fh;
	struct isr_chunk_header h;
	size_t off;
	__u64 seq = 0;

	if (n < sizeof(fh))
		return;
	memcpy(&fh, b, sizeof(fh));
	off = fh.header_size >= sizeof(fh) && fh.header_size <= FIX_HEADER_MAX ? fh.header_size : sizeof(fh);
	while (off + sizeof(h) <= n) {
		size_t avail = n - off - sizeof(h), stored;

		memcpy(&h, b + off, sizeof(h));
		if (h.magic != ISR_CHUNK_MAGIC)
			return;
		stored = h.stored_size < avail ? h.stored_size : avail;
		h.seq = seq++;
		h.payload_crc32 = (__u32)crc32(0L, b + off + sizeof(h), (uInt)stored);
		h.header_crc32 = (__u32)crc32(0L, (const Bytef *)&h, offsetof(struct isr_chunk_header, header_crc32));
		memcpy(b + off, &h, sizeof(h));
		off += sizeof(h) + stored;
	}
}

static void write_reports(const struct analysis *a)
{
	struct diff *d = NULL;

	report__write_markdown(sink, a);
	report__write_json(sink, a);
	report__write_html(sink, a);
	report__write_perfetto(sink, a);
	if (!diff__compute(a, a, "base.isr", "new.isr", &d)) {
		diff__write_markdown(sink, d);
		diff__write_json(sink, d);
		diff__write_html(sink, d);
	}
	diff__free(d);
	fflush(sink);
}

/* The recording twice as a set of two (analyze r0.isr r1.isr): the ranks
 * lined up across them and every set writer. */
static void write_set(const struct analysis *a)
{
	const struct analysis *two[2] = { a, a };
	const char *names[2] = { "r0.isr", "r1.isr" };
	struct analysis_set set = { .a = two, .names = names, .n = 2 };
	char err[256];

	if (analysis_set__compute(&set, err, sizeof(err)) == 0) {
		report__write_markdown_set(sink, &set);
		report__write_json_set(sink, &set);
		report__write_html_set(sink, &set);
		report__write_perfetto_set(sink, &set);
		fflush(sink);
	}
	analysis_set__clear(&set);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct recording *r = NULL;
	struct analysis *a = NULL;
	struct pass *p = NULL;
	uint8_t *copy = malloc(size ? size : 1);
	char err[512];

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	fix_chunks(copy, size);
	if (ftruncate(memfd, 0) || pwrite(memfd, copy, size, 0) != (ssize_t)size) {
		perror("fuzz_recording: memfd");
		abort();
	}
	free(copy);
	/* loaded into memory, as a pipe is */
	if (recording__load(path, &r, err, sizeof(err)) == 0) {
		recording__sort_events(r);
		if (analysis__run(r, &a) == 0)
			write_reports(a);
		analysis__free(a);
		recording__free(r);
	}
	/* streamed from the file, as a regular file is */
	a = NULL;
	if (pass__open_file(path, NULL, &p, err, sizeof(err)) == 0) {
		if (analysis__run_pass(p, &a) == 0) {
			write_reports(a);
			write_set(a);
		} else
			pass__free(p);
		analysis__free(a);
	}
	return 0;
}
