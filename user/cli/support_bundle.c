// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * check --support-bundle: a gzip'd ustar archive of the check's output, the
 * versions, the kernel configuration lines that matter and the metadata of
 * a recording. Each member is built in memory (they are small) and written
 * with its header; nothing is read from a target.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <bpf/libbpf.h>
#include <zlib.h>
#include "analyze.h"
#include "check.h"
#include "out_file.h"
#include "proc.h"

/* The CONFIG_ options the tracer's probes depend on. */
static const char *const config_prefixes[] = {
	"CONFIG_BPF", "CONFIG_DEBUG_INFO_BTF", "CONFIG_UPROBE", "CONFIG_KPROBE", "CONFIG_PERF_EVENTS",
	"CONFIG_FTRACE", "CONFIG_TRACEPOINTS", "CONFIG_HAVE_EBPF_JIT", "CONFIG_SECURITY_YAMA", "CONFIG_CGROUP_BPF",
	"CONFIG_PREEMPT", "CONFIG_HZ=",
};

static int tar_member(gzFile gz, const char *name, const char *data, size_t len, time_t mtime)
{
	unsigned char h[512];
	static const unsigned char zeros[512];
	unsigned int sum = 0;

	memset(h, 0, sizeof(h));
	snprintf((char *)h, 100, "%s", name);
	snprintf((char *)h + 100, 8, "%07o", 0644);
	snprintf((char *)h + 108, 8, "%07o", 0);
	snprintf((char *)h + 116, 8, "%07o", 0);
	snprintf((char *)h + 124, 12, "%011llo", (unsigned long long)len);
	snprintf((char *)h + 136, 12, "%011llo", (unsigned long long)mtime);
	h[156] = '0';
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	for (size_t i = 0; i < sizeof(h); i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	if (gzwrite(gz, h, sizeof(h)) != (int)sizeof(h))
		return -EIO;
	if (len && gzwrite(gz, data, (unsigned int)len) != (int)len)
		return -EIO;
	if (len % 512 && gzwrite(gz, zeros, (unsigned int)(512 - len % 512)) != (int)(512 - len % 512))
		return -EIO;
	return 0;
}

/* The lines of the kernel configuration that matter, from /proc/config.gz
 * or /boot/config-RELEASE. */
static void kernel_config(FILE *out, const char *release)
{
	char path[256], line[512];
	gzFile gz;
	bool any = false;

	gz = gzopen("/proc/config.gz", "rb");
	if (!gz) {
		snprintf(path, sizeof(path), "/boot/config-%s", release);
		gz = gzopen(path, "rb");	/* zlib reads a plain file as is */
	}
	if (!gz) {
		fprintf(out, "# no kernel configuration found (/proc/config.gz, /boot/config-%s)\n", release);
		return;
	}
	while (gzgets(gz, line, sizeof(line))) {
		for (size_t i = 0; i < sizeof(config_prefixes) / sizeof(config_prefixes[0]); i++) {
			if (!strncmp(line, config_prefixes[i], strlen(config_prefixes[i]))) {
				fputs(line, out);
				any = true;
				break;
			}
		}
	}
	if (!any)
		fprintf(out, "# the kernel configuration has none of the lines the tracer depends on\n");
	gzclose(gz);
}

static void versions(FILE *out, const struct utsname *u)
{
	char buf[512];

	fprintf(out, "inferscope-bpf %s\nlibbpf %s\n", ISR_VERSION, libbpf_version_string());
	fprintf(out, "kernel %s %s %s\n", u->sysname, u->release, u->version);
	fprintf(out, "machine %s\n", u->machine);
	if (proc__read_small("/proc/driver/nvidia/version", buf, sizeof(buf)) > 0)
		fprintf(out, "nvidia driver: %s\n", buf);
	else
		fprintf(out, "nvidia driver: none loaded\n");
	if (proc__read_small("/etc/os-release", buf, sizeof(buf)) > 0)
		fprintf(out, "%s\n", buf);
}

/* Builds one member's text with fn and appends it. */
static int add_text(gzFile gz, const char *name, time_t now, int (*fn)(FILE *out, const void *arg),
		    const void *arg)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int e;

	if (!f)
		return -errno;
	e = fn(f, arg);
	if (fclose(f) && !e)
		e = -EIO;
	if (!e || e == -ENOENT || e == -EINVAL)	/* a recording that cannot be read says so in the member */
		e = tar_member(gz, name, text, len, now);
	free(text);
	return e;
}

static int w_check_text(FILE *out, const void *arg)
{
	return check__write_text(arg, out);
}

static int w_check_json(FILE *out, const void *arg)
{
	return check__write_json(arg, out);
}

static int w_versions(FILE *out, const void *arg)
{
	versions(out, arg);
	return 0;
}

static int w_config(FILE *out, const void *arg)
{
	kernel_config(out, ((const struct utsname *)arg)->release);
	return 0;
}

static int w_recording(FILE *out, const void *arg)
{
	return analyze__describe(arg, out);
}

int check__support_bundle(const struct check_result *res, const char *path, const char *recording)
{
	static const unsigned char end[1024];
	struct out_file of;
	struct utsname u;
	time_t now = time(NULL);
	gzFile gz;
	int e, fd;

	if (uname(&u))
		memset(&u, 0, sizeof(u));
	/* never through a link, never into a file that was there (docs/security.md) */
	e = out_file__create(&of, path, NULL);
	if (e) {
		fprintf(stderr, "inferscope-bpf check: cannot create %s: %s\n", path, out_file__strerror(e));
		return e;
	}
	fd = dup(of.fd);
	gz = fd >= 0 ? gzdopen(fd, "wb") : NULL;
	if (!gz) {
		e = -ENOMEM;
		fprintf(stderr, "inferscope-bpf check: cannot write %s: %s\n", path, strerror(-e));
		if (fd >= 0)
			close(fd);
		out_file__close(&of);
		return e;
	}
	e = add_text(gz, "check.txt", now, w_check_text, res);
	if (!e)
		e = add_text(gz, "check.json", now, w_check_json, res);
	if (!e)
		e = add_text(gz, "versions.txt", now, w_versions, &u);
	if (!e)
		e = add_text(gz, "kernel-config.txt", now, w_config, &u);
	if (!e && recording)
		e = add_text(gz, "recording.txt", now, w_recording, recording);
	if (!e && gzwrite(gz, end, sizeof(end)) != (int)sizeof(end))
		e = -EIO;
	if (gzclose(gz) != Z_OK && !e)
		e = -EIO;
	if (!e)
		e = out_file__commit(&of);
	if (out_file__close(&of) && !e)
		e = -EIO;
	if (e)
		fprintf(stderr, "inferscope-bpf check: cannot write %s: %s\n", path, strerror(-e));
	return e;
}
