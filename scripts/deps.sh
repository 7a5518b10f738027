#!/bin/sh
# Installs the Debian packages that building and testing inferscope-bpf need.
# Idempotent: does nothing when they are all present.
set -eu
PKGS="make gcc clang libclang-rt-14-dev llvm bpftool libbpf-dev libelf-dev zlib1g-dev libzstd-dev libjansson-dev libcmocka-dev libiberty-dev libpython3-dev pkg-config python3 systemtap-sdt-dev python3-jsonschema protobuf-c-compiler libprotobuf-c-dev protobuf-compiler chromium cpio libsqlite3-dev sqlite3 libncurses-dev tmux libyaml-dev libsystemd-dev systemd prometheus prometheus-node-exporter shellcheck"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages:$missing; run 'sudo make deps' (or install them with apt-get)" >&2
	exit 1
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086 # one word per package
apt-get install -y -qq --no-install-recommends $missing >/dev/null
