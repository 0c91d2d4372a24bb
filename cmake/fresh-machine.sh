#!/usr/bin/env bash
# The README's commands on a bare Debian 12, as a newcomer runs them: a
# `debootstrap bookworm` root with nothing but the base system, this clone's
# HEAD copied in, then the given run.sh modes in order on that one clone.
#   sudo bash cmake/fresh-machine.sh ROOT [MODE...]      (default: main test)
# Needs root, debootstrap and the network to deb.debian.org (and npm's registry
# for the browser tests). Not part of the test command: it installs a whole
# system (about 40 minutes on 2 cores for `main test`).
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: sudo bash cmake/fresh-machine.sh ROOT [MODE...]" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "fresh-machine: needs root (debootstrap, chroot, mounts)" >&2; exit 2; }
root_dir="$1"; shift
modes=("$@"); ((${#modes[@]})) || modes=(main test)
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if [[ ! -x "$root_dir/bin/bash" ]]; then
  debootstrap bookworm "$root_dir" http://deb.debian.org/debian
fi
cp /etc/resolv.conf "$root_dir/etc/resolv.conf"
# The host's certificate authorities, for npm behind a TLS-inspecting proxy
# (a bare root trusts only Debian's; node reads NODE_EXTRA_CA_CERTS).
cp /etc/ssl/certs/ca-certificates.crt "$root_dir/etc/host-ca-certificates.crt"
for m in proc sys dev dev/pts; do
  mountpoint -q "$root_dir/$m" || mount --bind "/$m" "$root_dir/$m"
done
trap 'for m in dev/pts dev sys proc; do umount -l "$root_dir/$m" 2>/dev/null || true; done' EXIT

# The clone as `git clone` gives it: committed files only, no build tree.
rm -rf "$root_dir/work"
mkdir -p "$root_dir/work/main"
git -C "$src" archive HEAD | tar -x -C "$root_dir/work/main"
[[ -d "$src/../shared" ]] && cp -r "$src/../shared" "$root_dir/work/shared"

for mode in "${modes[@]}"; do
  echo "== fresh-machine: bash cmake/run.sh $mode =="
  start=$SECONDS
  chroot "$root_dir" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 NODE_EXTRA_CA_CERTS=/etc/host-ca-certificates.crt AUTOGRAD_SANITIZE="${AUTOGRAD_SANITIZE:-1}" bash -c "cd /work/main && bash cmake/run.sh $mode"
  echo "== fresh-machine: $mode passed in $((SECONDS - start)) s =="
done
