#!/usr/bin/env bash
# Builds jemalloc for aarch64 with the heap profiler, for the tests that
# profile an AArch64 program under qemu-user (cmd/heapproxy). Debian's
# libjemalloc2:arm64 has no profiler: its debian/rules passes --enable-prof
# on i386 and amd64 only (jemalloc 5.3.0-1). So this builds Debian's own
# source package with the cross compiler, as an install step of .ci/run.
# Usage: jemalloc.sh DIR (default /opt/heapproxy-ci/jemalloc-aarch64);
# the library lands in DIR/lib, the headers in DIR/include.
set -euo pipefail
dest=${1:-/opt/heapproxy-ci/jemalloc-aarch64}
if [[ -e $dest/lib/libjemalloc.so.2 ]]; then
	echo "jemalloc for aarch64 already in $dest"
	exit 0
fi
# apt-get source needs a deb-src line for bookworm.
src_list=/etc/apt/sources.list.d/heapproxy-debsrc.sources
if ! grep -rqs '^Types:.*deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' >"$src_list"
	apt-get update
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
apt-get source --download-only jemalloc
tar xjf jemalloc_*.orig.tar.bz2
cd jemalloc-*/
./configure --host=aarch64-linux-gnu --enable-prof --prefix="$dest" >configure.log
make -j"$(nproc)" build_lib_shared >make.log
mkdir -p "$dest/lib" "$dest/include/jemalloc"
cp -a lib/libjemalloc.so* "$dest/lib/"
cp include/jemalloc/jemalloc.h "$dest/include/jemalloc/"
echo "jemalloc for aarch64, with the profiler, in $dest"
