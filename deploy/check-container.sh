#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds deploy/Containerfile with buildah (daemonless; Debian 12's buildah package) and checks
# the image as it would run: its root file system, its entrypoint and command and its user read
# from the image's own configuration, started as PID 1 in PID and mount namespaces of its own,
# listening on a free loopback port. Checked: GET /healthz, a QR code (zbarimg reads the payload
# back), a card (pdfinfo: a 2-page PDF), an error answer, the image's size, and SIGTERM ending the
# server with exit 0. Run as root from anywhere; needs buildah, curl, zbarimg, pdfinfo, python3.
# Usage: deploy/check-container.sh [--no-build] [TAG]     (default imprint:check; --no-build checks
# an image already built or pulled under TAG)
# BUILDAH_OPTIONS: options for every buildah command (default: --storage-driver vfs, which works
# without overlay support); BUILD_OPTIONS: more options for the build (--pull=never to build on
# base images already in local storage).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=yes
if [[ "${1:-}" == --no-build ]]; then build=no; shift; fi
tag=${1:-imprint:check}
read -r -a buildah <<<"buildah ${BUILDAH_OPTIONS:---storage-driver vfs}"
read -r -a build_options <<<"${BUILD_OPTIONS:-}"
work=$(mktemp -d)
container="" pid=""
cleanup() {
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; wait "$pid" || true; fi
  if [[ -n "$container" ]]; then "${buildah[@]}" rm "$container" >/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "check-container: $*" >&2; exit 1; }

if [[ $build == yes ]]; then
  echo "check-container: building $tag from deploy/Containerfile" >&2
  start=$SECONDS
  "${buildah[@]}" build --isolation chroot --layers "${build_options[@]}" \
    -f "$root/deploy/Containerfile" -t "$tag" "$root" >"$work/build.log" 2>&1 ||
    { tail -n 30 "$work/build.log" >&2; fail "the build failed (its last lines above)"; }
  echo "check-container: built in $((SECONDS - start)) s" >&2
fi

# What a container engine would start: the image's entrypoint, command and user.
"${buildah[@]}" inspect --type image "$tag" >"$work/image.json"
read -r user stop path entrypoint < <(python3 -c '
import json, shlex, sys
c = json.load(open(sys.argv[1]))["OCIv1"]["config"]
path = [e[5:] for e in c.get("Env") or [] if e.startswith("PATH=")] or ["/usr/bin:/bin"]
print(c.get("User") or "0", c.get("StopSignal") or "-", path[0], shlex.join(c.get("Entrypoint") or []))
' "$work/image.json")
[[ "$user" != "0" && "$user" != "root" ]] || fail "the image runs as root"
[[ "$stop" == SIGTERM ]] || fail "the image's stop signal is $stop, not SIGTERM"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
container=$("${buildah[@]}" from --pull=never "$tag")
rootfs=$("${buildah[@]}" mount "$container")
size=$(du -sm "$rootfs" | cut -f1)
echo "check-container: image root file system ${size} MB; entrypoint $entrypoint; user $user" >&2

# PID 1 of its own namespaces, as in a container: /proc and /dev mounted in its root, the
# image's command with the listening address moved to a free loopback port.
unshare --mount --pid --fork --propagation private sh -c '
  rootfs=$1; user=$2; path=$3; shift 3
  mount -t proc proc "$rootfs/proc" && mount --rbind /dev "$rootfs/dev" &&
  mount -t tmpfs tmpfs "$rootfs/tmp" || exit 70
  exec chroot --userspec="$user:$user" "$rootfs" /usr/bin/env -i PATH="$path" HOME=/tmp "$@"' \
  check "$rootfs" "$user" "$path" $entrypoint serve --listen "127.0.0.1:$port" 2>"$work/serve.log" &
pid=$!
url="http://127.0.0.1:$port"
for _ in $(seq 600); do
  grep -q "listening on" "$work/serve.log" 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/serve.log" >&2; fail "imprint serve ended at start"; }
  sleep 0.1
done
grep -q "listening on $url" "$work/serve.log" || { cat "$work/serve.log" >&2; fail "no listening line"; }

# unshare waits for its child, the server (sh, chroot and env exec it), and exits with its status.
server=$(pgrep -P "$pid") || fail "no server process under unshare"
uid=$(awk '$1 == "Uid:" { print $2 }' "/proc/$server/status")
[[ "$uid" == "$user" ]] || fail "the server runs as user $uid, not the image's $user"
health=$(curl -sS "$url/healthz")
[[ $(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["status"])' "$health") == ok ]] ||
  fail "/healthz answered $health"
payload="https://example.com/check-container"
code=$(curl -sS -o "$work/qr.png" -w '%{http_code} %{content_type}' -X POST \
  "$url/v1/qr?payload=https%3A%2F%2Fexample.com%2Fcheck-container")
[[ "$code" == "200 image/png" ]] || fail "/v1/qr answered $code"
[[ $(zbarimg -q --raw "$work/qr.png" 2>"$work/zbarimg.log") == "$payload" ]] ||
  { cat "$work/zbarimg.log" >&2; fail "the QR code does not read back"; }
code=$(curl -sS -o "$work/card.pdf" -w '%{http_code} %{content_type}' \
  -H 'Content-Type: application/json' \
  --data-binary @"$root/assets/samples/profiles/sora-park.json" "$url/v1/card")
[[ "$code" == "200 application/pdf" ]] || fail "/v1/card answered $code"
pages=$(pdfinfo "$work/card.pdf" | awk '$1 == "Pages:" { print $2 }')
[[ "$pages" == 2 ]] || fail "the card has $pages pages, not 2"
code=$(curl -sS -o "$work/error.json" -w '%{http_code}' -X POST "$url/v1/qr?level=H")
error=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["error"]["code"])' "$work/error.json")
[[ "$code $error" == "400 http.missingParameter" ]] || fail "/v1/qr without a payload: $code $error"

kill -TERM "$server"
status=0
wait "$pid" || status=$?
pid=""
[[ $status -eq 0 ]] || { cat "$work/serve.log" >&2; fail "SIGTERM: exit status $status, not 0"; }
echo "check-container: ok: $tag (${size} MB) answered /healthz, a QR code, a card and an error, and stopped on SIGTERM with 0" >&2
