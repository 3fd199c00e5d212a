#!/usr/bin/env bash
# Builds Cairn's images offline (`make images`): no registry is reached and no
# base image is pulled. Every image starts FROM scratch:
#   cairn             the static cairn binary (every service, the operator commands)
#   cairn-nats        nats-server, built from the module version pinned in go.mod
#   cairn-toolrunner  a debootstrapped minimal Debian (bash, coreutils, git,
#                     python3) plus the cairn binary
# All run as uid 65532. The Debian root is cached as a tarball under
# $CAIRN_IMAGE_CACHE (default ~/.cache/cairn-images, shared by every clone on
# the machine, like Go's module cache), keyed by suite, package list and
# mirror: reruns only rebuild the binaries. Build contexts go to .cache/images
# (gitignored). Needs root (debootstrap) the first time, Docker, and Go.
#
# Env: TAG (default dev), SUITE (bookworm), MIRROR (http://deb.debian.org/debian).
set -euo pipefail
cd "$(dirname "$0")/../.."
TAG=${TAG:-dev}
SUITE=${SUITE:-bookworm}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
PACKAGES=bash,coreutils,findutils,grep,sed,git,python3-minimal,ca-certificates
CACHE=.cache/images
ROOTFS_CACHE=${CAIRN_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn-images}
mkdir -p "$CACHE" "$ROOTFS_CACHE"
export DOCKER_BUILDKIT=0 # the classic builder: no buildx, no frontend image to pull

# 1. Static binaries. The nats-server main package comes from the module
# graph of go.mod, so its version is the one Cairn is tested with.
bins=$CACHE/bin
mkdir -p "$bins"
CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags "-s -w" -o "$bins/cairn" ./cmd/cairn
CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags "-s -w" -o "$bins/nats-server" github.com/nats-io/nats-server/v2

# fstar DIR TAR: DIR's usr/ and etc/ owned by root, data/ and workspaces/
# by 65532, tmp/ sticky and world-writable (ADD keeps a tarball's owners).
fstar() {
	local dir=$1 out=$2 root=() user=()
	for p in usr etc tmp; do [ -e "$dir/$p" ] && root+=("$p"); done
	for p in data workspaces; do [ -e "$dir/$p" ] && user+=("$p"); done
	tar --numeric-owner --owner=0 --group=0 -cf "$out" -C "$dir" "${root[@]}"
	if [ ${#user[@]} -gt 0 ]; then
		tar --numeric-owner --owner=65532 --group=65532 -rf "$out" -C "$dir" "${user[@]}"
	fi
}

# context NAME: a fresh build context with fs/ laid out by the caller.
context() {
	local c=$CACHE/ctx-$1
	rm -rf "$c"
	mkdir -p "$c/fs/usr/local/bin" "$c/fs/tmp"
	chmod 1777 "$c/fs/tmp"
	cp deploy/images/"$1".Dockerfile "$c/Dockerfile"
	echo "$c"
}

# 2. cairn: the binary, the CA bundle, /data.
c=$(context cairn)
cp "$bins/cairn" "$c/fs/usr/local/bin/cairn"
mkdir -p "$c/fs/etc/ssl/certs" "$c/fs/data"
cp /etc/ssl/certs/ca-certificates.crt "$c/fs/etc/ssl/certs/"
fstar "$c/fs" "$c/fs.tar" && rm -rf "$c/fs"
docker build -q -t "cairn:$TAG" "$c" >/dev/null

# 3. cairn-nats.
c=$(context nats)
cp "$bins/nats-server" "$c/fs/usr/local/bin/nats-server"
mkdir -p "$c/fs/data"
fstar "$c/fs" "$c/fs.tar" && rm -rf "$c/fs"
docker build -q -t "cairn-nats:$TAG" "$c" >/dev/null

# 4. The toolrunner's Debian root, cached by suite and package list.
key=$(printf '%s %s %s v1' "$SUITE" "$PACKAGES" "$MIRROR" | sha256sum | cut -c1-16)
rootfs=$ROOTFS_CACHE/toolrunner-rootfs-$key.tar
if [ ! -s "$rootfs" ]; then
	command -v debootstrap >/dev/null || { echo "debootstrap is missing: apt-get install -y debootstrap (make images-deps)" >&2; exit 1; }
	work=$ROOTFS_CACHE/rootfs-$key
	# A finished debootstrap is kept until it is packed (a failed pack reruns fast).
	if [ ! -e "$work/.debootstrap-done" ]; then
		rm -rf "$work"
		debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$work" "$MIRROR"
		touch "$work/.debootstrap-done"
	fi
	# What a container never needs: package caches and lists, docs, locales.
	rm -rf "$work"/var/cache/apt/* "$work"/var/lib/apt/lists/* "$work"/usr/share/doc/* \
		"$work"/usr/share/man/* "$work"/usr/share/info/* "$work"/var/log/* "$work"/debootstrap
	find "$work"/usr/share/locale -mindepth 1 -maxdepth 1 ! -name 'locale.alias' -exec rm -rf {} +
	echo 'cairn:x:65532:65532:cairn:/workspaces:/bin/bash' >>"$work/etc/passwd"
	echo 'cairn:x:65532:' >>"$work/etc/group"
	mkdir -p "$work/workspaces" && chown 65532:65532 "$work/workspaces"
	tar --numeric-owner --exclude=./.debootstrap-done -cf "$rootfs.tmp" -C "$work" .
	mv "$rootfs.tmp" "$rootfs"
	rm -rf "$work"
fi

# 5. cairn-toolrunner: the Debian root and the binary.
c=$(context toolrunner)
cp "$bins/cairn" "$c/fs/usr/local/bin/cairn"
rmdir "$c/fs/tmp"
fstar "$c/fs" "$c/fs.tar" && rm -rf "$c/fs"
ln "$rootfs" "$c/rootfs.tar" 2>/dev/null || cp "$rootfs" "$c/rootfs.tar"
docker build -q -t "cairn-toolrunner:$TAG" "$c" >/dev/null

docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E "^cairn(-nats|-toolrunner)?:$TAG "
