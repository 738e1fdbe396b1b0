#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds deploy/Containerfile with buildah (daemonless; Debian 12's buildah package) and checks
# the image as it would run: its root file system, read-only (as the Kubernetes samples'
# readOnlyRootFilesystem makes it), with a tmpfs at /tmp; its entrypoint, command, user, group
# and environment read from the image's own configuration, started as PID 1 in PID and mount
# namespaces of its own, listening on a free loopback port. Checked: the user and group it runs
# as, GET /healthz, a QR code (zbarimg reads the payload back), a card (pdfinfo: a 2-page PDF), a
# card with a photo and a thumbnail (the workers, by files under /tmp), the fonts' caches written
# under the image's XDG_CACHE_HOME, an error answer, the image's size, SIGTERM ending the server
# with exit 0; then the batch Job's command, `imprint batch` on a folder mounted at /data. Run as root from anywhere; needs buildah, curl, zbarimg, pdfinfo, python3.
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

# What a container engine would start: the image's entrypoint, command, user and group, and its
# environment (Env, and HOME from the image's passwd entry of that user, as engines set it).
"${buildah[@]}" inspect --type image "$tag" >"$work/image.json"
read -r user stop entrypoint < <(python3 -c '
import json, shlex, sys
c = json.load(open(sys.argv[1]))["OCIv1"]["config"]
print(c.get("User") or "0", c.get("StopSignal") or "-", shlex.join(c.get("Entrypoint") or []))
' "$work/image.json")
uid=${user%%:*} gid=${user#*:}
[[ "$user" == *:* ]] || gid=$uid
[[ "$uid" != "0" && "$uid" != "root" ]] || fail "the image runs as root"
[[ "$uid" =~ ^[0-9]+$ && "$gid" =~ ^[0-9]+$ ]] || fail "the image's USER is $user, not numbers"
[[ "$stop" == SIGTERM ]] || fail "the image's stop signal is $stop, not SIGTERM"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
container=$("${buildah[@]}" from --pull=never "$tag")
rootfs=$("${buildah[@]}" mount "$container")
size=$(du -sm "$rootfs" | cut -f1)
home=$(awk -F: -v uid="$uid" '$3 == uid { print $6 }' "$rootfs/etc/passwd")
python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["OCIv1"]["config"]
for e in c.get("Env") or []: print(e)
print("HOME=" + (sys.argv[2] or "/"))
' "$work/image.json" "$home" >"$work/environment"
echo "check-container: image root file system ${size} MB; entrypoint $entrypoint; user $uid, group $gid" >&2

# run ARGS...: the image as a container runs it, as the Kubernetes samples run it: PID 1 of
# its own PID and mount namespaces, its root file system read-only (readOnlyRootFilesystem),
# /proc and /dev mounted in it, a tmpfs at /tmp (the samples' emptyDir) and, with DATA set, that
# folder at /data (the Job's volume); the image's user and group, its environment.
run() {
  exec unshare --mount --pid --fork --propagation private sh -c '
    rootfs=$1; uid=$2; gid=$3; environment=$4; data=$5; shift 5
    mount --bind "$rootfs" "$rootfs" && mount -o remount,bind,ro "$rootfs" &&
    mount -t proc proc "$rootfs/proc" && mount --rbind /dev "$rootfs/dev" &&
    mount -t tmpfs -o mode=1777 tmpfs "$rootfs/tmp" || exit 70
    if [ -n "$data" ]; then mkdir -p "$rootfs/data" 2>/dev/null; mount --bind "$data" "$rootfs/data" || exit 71; fi
    set -f; IFS="
"
    exec chroot --userspec="$uid:$gid" "$rootfs" /usr/bin/env -i $(cat "$environment") "$@"' \
    check "$rootfs" "$uid" "$gid" "$work/environment" "${DATA:-}" "$@"
}
[[ -d "$rootfs/data" ]] || mkdir "$rootfs/data" # the Job's mount point (buildah's container copy)

# The server, with the listening address moved to a free loopback port (run execs unshare in
# the background subshell: $pid is unshare's, the server its child).
run $entrypoint serve --listen "127.0.0.1:$port" 2>"$work/serve.log" &
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
read -r running < <(awk '$1 == "Uid:" { u = $2 } $1 == "Gid:" { g = $2 } END { print u ":" g }' "/proc/$server/status")
[[ "$running" == "$uid:$gid" ]] || fail "the server runs as $running, not the image's $uid:$gid"
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
# A photo and a document go through the workers, by files under /tmp.
code=$(curl -sS -o "$work/photo-card.pdf" -w '%{http_code} %{content_type}' \
  -F "profile=@$root/assets/samples/profiles/harbor-lamp.json;type=application/json" \
  -F "photo=@$root/assets/samples/photos/harbor-lamp.jpg" "$url/v1/card")
[[ "$code" == "200 application/pdf" ]] || fail "/v1/card with a photo answered $code"
code=$(curl -sS -o "$work/thumb.png" -w '%{http_code} %{content_type}' \
  -F "file=@$root/assets/samples/documents/course-notes.pdf" "$url/v1/thumbnail")
[[ "$code" == "200 image/png" ]] || fail "/v1/thumbnail answered $code"
# The fonts' caches were written where the image's XDG_CACHE_HOME says, on the tmpfs.
cache=$(sed -n 's/^XDG_CACHE_HOME=//p' "$work/environment")
[[ -n "$cache" ]] && ls "/proc/$server/root$cache/imprint/fontconfig/"*.cache-* >/dev/null 2>&1 ||
  fail "no font cache under XDG_CACHE_HOME ('$cache') in the running container"
code=$(curl -sS -o "$work/error.json" -w '%{http_code}' -X POST "$url/v1/qr?level=H")
error=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["error"]["code"])' "$work/error.json")
[[ "$code $error" == "400 http.missingParameter" ]] || fail "/v1/qr without a payload: $code $error"

kill -TERM "$server"
status=0
wait "$pid" || status=$?
pid=""
[[ $status -eq 0 ]] || { cat "$work/serve.log" >&2; fail "SIGTERM: exit status $status, not 0"; }
grep -i -E 'read-only|EROFS|permission denied' "$work/serve.log" >&2 &&
  fail "the server met its read-only root (its log above)"

# The batch Job's command (examples/scale-out/imprint-batch-job.yaml) on a volume at /data,
# owned by the image's group as fsGroup makes it: a card with a photo and a thumbnail.
data="$work/data"
mkdir -p "$data"
cp -R "$root/assets/samples/profiles" "$root/assets/samples/photos" "$root/assets/samples/documents" "$data/"
cat >"$data/orders.jsonl" <<'JSONL'
{"id": "A-1", "kind": "card", "profile": "profiles/harbor-lamp.json", "photo": "photos/harbor-lamp.jpg"}
{"id": "T-1", "kind": "thumb", "file": "documents/course-notes.pdf"}
JSONL
chgrp -R "$gid" "$data" && chmod -R g+rwX "$data"
status=0
(DATA=$data run imprint batch /data/orders.jsonl -o /data/out --quiet) 2>"$work/batch.log" || status=$?
[[ $status -eq 0 ]] || { cat "$work/batch.log" >&2; fail "imprint batch: exit status $status, not 0"; }
made=$(find "$data/out" -type f ! -path '*/.state/*' | wc -l)
owners=$(find "$data/out" -type f -printf '%u\n' | sort -u | tr '\n' ' ')
[[ $made -ge 2 && "$owners" == "$uid " ]] ||
  fail "imprint batch made $made files (owners: $owners) in /data/out"
echo "check-container: ok: $tag (${size} MB), as $uid:$gid on a read-only root: answered /healthz, a QR code, cards (one with a photo), a thumbnail and an error, wrote its font caches under $cache, stopped on SIGTERM with 0; imprint batch made $made files in /data/out" >&2
