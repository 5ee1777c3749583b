#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Runs the test runner (each test timed: the suite must stay under ~10 min); the
# kernel tests need bpffs, mounted here if it is not.
set -e
build=${1:-build}
[ $# -gt 0 ] && shift
if [ "$(id -u)" = 0 ] && ! mountpoint -q /sys/fs/bpf; then
	mount -t bpf bpf /sys/fs/bpf
fi
exec "$build/test-runner" --build "$build" --times "$@"
