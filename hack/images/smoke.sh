#!/usr/bin/env bash
# Proves that each named local image (default: all) really runs: starts a private containerd
# (own root, state and socket under a temp dir; no CRI, no network but each container's own
# loopback), imports the images with load.sh and runs one check per image with `ctr run` —
# read-only root, /tmp a tmpfs, as the image's non-root user. Stops containerd and removes
# everything at the end. Needs root and the Debian packages containerd and runc.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[ "$(id -u)" = 0 ] || die "smoke.sh needs root (it runs containerd)"
command -v containerd >/dev/null && command -v runc >/dev/null || die "needs containerd and runc (apt-get install containerd runc)"

names=("$@")
[ ${#names[@]} -gt 0 ] || names=(pause shell bash python go bun node postgres commerce)
dir=$(mktemp -d /tmp/cronscale-images-smoke.XXXXXX)
sock="$dir/containerd.sock"
cat >"$dir/config.toml" <<TOML
version = 2
root = "$dir/root"
state = "$dir/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$sock"
[ttrpc]
  address = "$sock.ttrpc"
TOML
containerd --config "$dir/config.toml" >"$dir/containerd.log" 2>&1 &
ctd=$!
ctr_() { ctr -a "$sock" -n k8s.io "$@"; }
cleanup() {
  for c in $(ctr_ containers ls -q 2>/dev/null); do ctr_ task kill -s SIGKILL "$c" >/dev/null 2>&1 || true; ctr_ task delete -f "$c" >/dev/null 2>&1 || true; ctr_ containers rm "$c" >/dev/null 2>&1 || true; done
  kill "$ctd" 2>/dev/null && wait "$ctd" 2>/dev/null || true
  umount -R "$dir/root" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.2; done
[ -S "$sock" ] || { cat "$dir/containerd.log" >&2; die "private containerd did not start"; }

declare -A ref
while read -r r; do n="${r#"$IMAGE_REPO_PREFIX/"}"; ref[${n%%:*}]="$r"; done < <(CONTAINERD_ADDRESS="$sock" "$IMAGES_DIR/load.sh" "${names[@]}")

mkdir -p "$dir/scripts"
cat >"$dir/scripts/main.go" <<'GO'
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Println("go says", os.Getenv("GREETING"))
	fmt.Fprintln(os.Stderr, "go err")
	os.Exit(5)
}
GO
cat >"$dir/scripts/main.ts" <<'TS'
const greeting: string = process.env.GREETING ?? "";
console.log("bun says", greeting);
console.error("bun err");
process.exit(6);
TS
cat >"$dir/scripts/http.sh" <<'SH'
get() { exec 3<>"/dev/tcp/127.0.0.1/$1"; printf 'GET %s HTTP/1.0\r\n\r\n' "$2" >&3; tr -d '\r' <&3 | sed -n '1p;$p'; exec 3>&-; }
for i in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/8080) 2>/dev/null && break; sleep 0.2; done
get 8080 /readyz
exec 3<>/dev/tcp/127.0.0.1/8080; printf 'GET /api/v1/products HTTP/1.0\r\nAuthorization: Bearer %s\r\n\r\n' "$API_KEY" >&3
tr -d '\r' <&3 | sed -n '1p;$p'
SH

fails=0
n=0
# check NAME WANT_EXIT WANT_REGEX CMD... — runs CMD in the image; WANT_REGEX must match its
# output (stdout and stderr, lines joined by spaces).
check() {
  local name="$1" want_exit="$2" want="$3" out code start
  shift 3
  n=$((n + 1))
  start=$(date +%s.%N)
  set +e
  out=$(ctr_ run --rm --read-only --env GREETING=hello \
    --mount "type=tmpfs,src=tmpfs,destination=/tmp,options=rw:nosuid:nodev:mode=1777" \
    --mount "type=bind,src=$dir/scripts,destination=/scripts,options=rbind:ro" \
    "${NET_ARGS[@]}" "${ref[$name]}" "smoke-$name-$n" "$@" 2>&1)
  code=$?
  set -e
  local took; took=$(printf '%.1f' "$(echo "$(date +%s.%N) - $start" | bc 2>/dev/null || echo 0)")
  if [ "$code" = "$want_exit" ] && tr '\n' ' ' <<<"$out" | grep -Eq "$want"; then
    echo "ok   $name (exit $code, ${took}s): $(tr '\n' ' ' <<<"$out" | cut -c1-110)"
  else
    echo "FAIL $name: exit $code (want $want_exit), output: $out"
    fails=$((fails + 1))
  fi
}
NET_ARGS=()
for name in "${names[@]}"; do
  case "$name" in
    pause)
      ctr_ run -d "${ref[pause]}" smoke-pause >/dev/null
      sleep 0.5
      ctr_ task kill -s SIGTERM smoke-pause
      code=$(ctr_ task ls | awk '$1 == "smoke-pause" { print $3 }')
      for _ in $(seq 25); do [ "$code" = STOPPED ] && break; sleep 0.2; code=$(ctr_ task ls | awk '$1 == "smoke-pause" { print $3 }'); done
      n=$((n + 1))
      if [ "$code" = STOPPED ]; then echo "ok   pause (stops on SIGTERM)"; else echo "FAIL pause: $code after SIGTERM"; fails=$((fails + 1)); fi
      ctr_ task delete smoke-pause >/dev/null 2>&1 || true; ctr_ containers rm smoke-pause >/dev/null ;;
    shell)
      check shell 0 'uid=65532.*GNU bash' bash -c 'id; bash --version | head -1; ps -o pid= -p 1; sed --version | head -1'
      # tini as PID 1 hands SIGTERM to the script: the container stops at once, no grace wait.
      ctr_ run -d "${ref[shell]}" smoke-tini tini -- bash -c 'sleep 600' >/dev/null
      sleep 0.5
      ctr_ task kill -s SIGTERM smoke-tini
      n=$((n + 1))
      state=""
      for _ in $(seq 15); do state=$(ctr_ task ls | awk '$1 == "smoke-tini" { print $3 }'); [ "$state" = STOPPED ] && break; sleep 0.2; done
      if [ "$state" = STOPPED ]; then echo "ok   shell (tini -- bash stops within 3 s of SIGTERM)"; else echo "FAIL shell: tini -- bash still $state 3 s after SIGTERM"; fails=$((fails + 1)); fi
      ctr_ task delete -f smoke-tini >/dev/null 2>&1 || true; ctr_ containers rm smoke-tini >/dev/null ;;
    bash) check bash 3 'bash says hello.*bash err|bash err.*bash says hello' bash -c 'echo "bash says $GREETING"; echo "bash err" >&2; echo "{\"a\":1}" | jq .a; exit 3' ;;
    python) check python 4 'python says hello' python3 -c 'import os, sys, json, zoneinfo, datetime; print("python says", os.environ["GREETING"], datetime.datetime(2026, 7, 1, tzinfo=zoneinfo.ZoneInfo("Europe/Berlin")).tzname()); print("python err", file=sys.stderr); sys.exit(4)' ;;
    go) check go 5 'go says hello' bash -c 'go build -o /tmp/main /scripts/main.go && exec /tmp/main' ;;
    bun) check bun 6 'bun says hello' bun run /scripts/main.ts ;;
    node) check node 7 'node says hello v24' bash -c 'node -e "console.log(\"node says\", process.env.GREETING, process.version); console.error(\"node err\"); process.exit(7)"; c=$?; npm --version; exit $c' ;;
    postgres)
      ctr_ run -d --env POSTGRES_PASSWORD=smoke-pw --env POSTGRES_USER=app --env POSTGRES_DB=shop "${ref[postgres]}" smoke-pg >/dev/null
      pid=$(ctr_ task ls | awk '$1 == "smoke-pg" { print $2 }')
      NET_ARGS=(--with-ns "network:/proc/$pid/ns/net")
      for _ in $(seq 120); do ctr_ task exec --exec-id "r$RANDOM" smoke-pg pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
      check postgres 0 'app\|shop' bash -c 'PGPASSWORD=smoke-pw psql -h 127.0.0.1 -U app -d shop -Atc "select current_user, current_database()"'
      check postgres 2 'password authentication failed' bash -c 'PGPASSWORD=wrong psql -h 127.0.0.1 -U app -d shop -Atc "select 1"'
      if [[ " ${names[*]} " == *" commerce "* ]]; then
        # The service in postgres's network namespace, read-only root, /tmp a tmpfs: migrations
        # run, /readyz answers, the API key reads the products.
        ctr_ run -d --read-only "${NET_ARGS[@]}" \
          --mount "type=tmpfs,src=tmpfs,destination=/tmp,options=rw:nosuid:nodev:mode=1777" \
          --env DATABASE_URL=postgres://app:smoke-pw@127.0.0.1:5432/shop --env API_KEY=csk_smoke0123456789012345678901234567890 \
          "${ref[commerce]}" smoke-commerce >/dev/null
        ref[commerce-client]="${ref[shell]:-$(CONTAINERD_ADDRESS="$sock" "$IMAGES_DIR/load.sh" shell)}"
        API_KEY=csk_smoke0123456789012345678901234567890
        check commerce-client 0 'HTTP/1.1 200 OK.*"ready".*HTTP/1.1 200 OK.*"data":\[\]' bash -c "API_KEY=$API_KEY bash /scripts/http.sh"
        # An unknown setting under the service's prefix: refused at start, named, exit 78.
        check commerce 78 'COMMERCE_NO_SUCH_SETTING: unknown setting' env COMMERCE_NO_SUCH_SETTING=1 node /app/src/main.ts
      fi
      NET_ARGS=() ;;
    commerce) [[ " ${names[*]} " == *" postgres "* ]] || echo "skip commerce: checked together with postgres (it needs the database)" ;;
    *) echo "skip $name: no check defined" ;;
  esac
done
echo "$((n - fails)) passed, $fails failed"
[ "$fails" = 0 ]
