// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * /init of the initramfs that scripts/kci-vm.sh boots a kernel under test
 * with: mounts what the suite needs, runs /inferscope-bpf bench with the
 * arguments in /kci-args (one a line), and powers the VM off. The KTAP goes
 * to the second serial port, the JSON results to the third, both raw (no
 * \r added), so that the host reads them from files byte for byte; the
 * console (first port) gets the kernel's log and the benchmark's progress.
 * Static, with no shell: nothing else is in the initramfs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#define MAX_ARGS 64

static void say(const char *fmt, const char *arg, int err)
{
	fprintf(stderr, "kci-init: ");
	fprintf(stderr, fmt, arg);
	if (err)
		fprintf(stderr, ": %s", strerror(err));
	fputc('\n', stderr);
}

static void mount_one(const char *src, const char *dir, const char *type)
{
	mkdir(dir, 0755);
	if (mount(src, dir, type, 0, NULL) && errno != EBUSY)
		say("cannot mount %s", dir, errno);
}

/* /dev/ttySn, raw, opened for writing: -1 when the kernel has no such port. */
static int open_port(int n)
{
	char path[32];
	struct termios t;
	int fd;

	snprintf(path, sizeof(path), "/dev/ttyS%d", n);
	mknod(path, S_IFCHR | 0600, makedev(4, 64 + n));	/* EEXIST with devtmpfs */
	fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		say("cannot open %s", path, errno);
		return -1;
	}
	if (!tcgetattr(fd, &t)) {
		cfmakeraw(&t);
		tcsetattr(fd, TCSANOW, &t);
	}
	return fd;
}

/* The arguments of bench, one a line of /kci-args, after argv[0..1]. */
static int read_args(char **argv, int max)
{
	static char buf[8192];
	FILE *f = fopen("/kci-args", "r");
	int n = 0;
	size_t used = 0;

	if (!f)
		return 0;
	while (n < max && used < sizeof(buf) && fgets(buf + used, (int)(sizeof(buf) - used), f)) {
		char *line = buf + used;
		size_t len = strcspn(line, "\n");

		line[len] = '\0';
		used += len + 1;
		if (len)
			argv[n++] = line;
	}
	fclose(f);
	return n;
}

int main(void)
{
	char *argv[MAX_ARGS + 8] = { "/inferscope-bpf", "bench" };
	int argc = 2, ktap, json, status = 0;
	pid_t pid;

	mount_one("proc", "/proc", "proc");
	mount_one("sysfs", "/sys", "sysfs");
	mount_one("devtmpfs", "/dev", "devtmpfs");
	/* An initramfs without /dev/console starts init with no stdio. */
	if (fcntl(STDERR_FILENO, F_GETFD) < 0) {
		int con = open("/dev/console", O_RDWR);

		if (con >= 0) {
			dup2(con, STDIN_FILENO);
			dup2(con, STDOUT_FILENO);
			dup2(con, STDERR_FILENO);
			if (con > STDERR_FILENO)
				close(con);
		}
	}
	mount_one("tmpfs", "/tmp", "tmpfs");
	mount_one("tracefs", "/sys/kernel/tracing", "tracefs");
	argc += read_args(argv + argc, MAX_ARGS);
	argv[argc++] = "-o";
	argv[argc++] = "/tmp/kci.json";
	argv[argc] = NULL;
	ktap = open_port(1);
	json = open_port(2);
	pid = fork();
	if (pid == 0) {
		if (ktap >= 0)
			dup2(ktap, STDOUT_FILENO);
		execv(argv[0], argv);
		say("cannot run %s", argv[0], errno);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		say("cannot run %s", argv[0], errno);
	else
		fprintf(stderr, "kci-init: bench exited with status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128);
	if (json >= 0) {
		char buf[65536];
		ssize_t n;
		int in = open("/tmp/kci.json", O_RDONLY | O_CLOEXEC);

		while (in >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
			if (write(json, buf, (size_t)n) != n)
				break;
		if (in >= 0)
			close(in);
		tcdrain(json);
	}
	if (ktap >= 0)
		tcdrain(ktap);
	sync();
	reboot(RB_POWER_OFF);
	return 0;
}
