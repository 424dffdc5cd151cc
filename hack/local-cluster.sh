#!/usr/bin/env bash
# A real, single-node kube-apiserver + etcd on loopback, with no Docker.
#
#   hack/local-cluster.sh up                 start (build kube-apiserver first if needed)
#   hack/local-cluster.sh env                print `export KUBECONFIG=...` for the running cluster
#   hack/local-cluster.sh restart-apiserver  stop and start kube-apiserver only (etcd keeps the data)
#   hack/local-cluster.sh compact            compact etcd history up to its current revision
#   hack/local-cluster.sh down               stop what `up` started, by pid, and remove its data
#
# etcd and etcdctl are built from the Go module proxy by the nested module in
# hack/etcd, into hack/etcd/bin; kube-apiserver likewise by hack/kube-apiserver,
# into hack/kube-apiserver/bin (both git-ignored). Each build runs once
# (minutes on 2 cores); later ones hit the Go build cache.
#
# Why not Debian's etcd-server (3.4.23): kube-apiserver serves a watch-list
# (the streaming WATCH client-go's reflector opens first) of a watch-cached
# resource only when etcd supports RequestWatchProgress (3.4.31+, 3.5.13+).
# On 3.4.23 such a stream ends in a 500 ERROR event ("the required storage
# feature RequestWatchProgress is disabled") and every informer falls back to
# LIST. hack/etcd builds 3.6.8, what kubeadm v1.36.3 deploys.
# State lives in $LOCAL_CLUSTER_DIR (default hack/.cluster, git-ignored).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
state=${LOCAL_CLUSTER_DIR:-$root/hack/.cluster}
kas_dir=$root/hack/kube-apiserver
kas=$kas_dir/bin/kube-apiserver
etcd_dir=$root/hack/etcd
etcd=$etcd_dir/bin/etcd
etcdctl=$etcd_dir/bin/etcdctl

log() { echo "local-cluster: $*" >&2; }
die() { log "$*"; exit 1; }

ensure_etcd() {
  if [ ! -x "$etcd" ] || [ ! -x "$etcdctl" ]; then
    log "building etcd and etcdctl from the Go module proxy (seconds when the Go build cache has them; the first time, a few minutes on 2 cores)"
  fi
  (cd "$etcd_dir" && go build -o bin/etcd go.etcd.io/etcd/server/v3 &&
    go build -o bin/etcdctl go.etcd.io/etcd/etcdctl/v3)
}

ensure_kube_apiserver() {
  # go build is a no-op (seconds) when the Go build cache already has it.
  if [ ! -x "$kas" ]; then
    log "building kube-apiserver from the Go module proxy (seconds when the Go build cache has it; the first time, several minutes on 2 cores)"
  fi
  (cd "$kas_dir" && go build -o bin/kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver)
}

# free_port prints a loopback TCP port nothing listens on, trying random
# ports in the ephemeral range (bash's /dev/tcp fails to connect to a free one).
free_port() {
  local port
  for _ in $(seq 100); do
    port=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"; return
    fi
  done
  die "found no free port on 127.0.0.1"
}

ensure_tools() {
  local missing=()
  command -v curl >/dev/null || missing+=(curl)
  command -v openssl >/dev/null || missing+=(openssl)
  [ ${#missing[@]} -eq 0 ] && return
  [ "$(id -u)" = 0 ] || die "missing ${missing[*]}; run: sudo apt-get install ${missing[*]}"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

wait_for() { # wait_for SECONDS DESCRIPTION COMMAND...
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.5
  done
  log "$what is ready"
}

# Flags worth knowing:
#   --etcd-compaction-interval=0   etcd history is compacted only when a test
#                                  asks (hack/local-cluster.sh compact);
#   --watch-cache-sizes=configmaps#0
#                                  configmaps bypass the API server's watch
#                                  cache and are served from etcd, so LISTs of
#                                  them really page and a continue token really
#                                  expires on compaction (the e2e tests use
#                                  configmaps for that); pods keep the watch
#                                  cache, as in a default cluster.
start_apiserver() {
  # shellcheck disable=SC1091
  . "$state/ports"
  "$kas" \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$API_PORT" \
    --cert-dir="$state/certs" \
    --token-auth-file="$state/tokens.csv" \
    --authorization-mode=RBAC \
    --service-account-issuer=https://kubernetes.default.svc \
    --service-account-key-file="$state/sa.pub" \
    --service-account-signing-key-file="$state/sa.key" \
    --service-cluster-ip-range=10.0.0.0/24 \
    --disable-admission-plugins=ServiceAccount \
    --endpoint-reconciler-type=none \
    --etcd-compaction-interval=0 \
    --watch-cache-sizes=configmaps#0 \
    >"$state/kube-apiserver.log" 2>&1 &
  echo $! >"$state/kube-apiserver.pid"
  if ! wait_for 120 "kube-apiserver on https://127.0.0.1:$API_PORT" \
      curl -fsk -H "Authorization: Bearer $(cat "$state/token")" "https://127.0.0.1:$API_PORT/readyz"; then
    tail -20 "$state/kube-apiserver.log" >&2
    die "kube-apiserver did not become ready within 120s (log: $state/kube-apiserver.log)"
  fi
}

stop_pid() { # stop_pid NAME
  local f="$state/$1.pid"
  [ -f "$f" ] || return 0
  local pid
  pid=$(cat "$f")
  if kill "$pid" 2>/dev/null; then
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

up() {
  if [ -f "$state/kube-apiserver.pid" ] && kill -0 "$(cat "$state/kube-apiserver.pid")" 2>/dev/null; then
    log "already running"; env_cmd; return
  fi
  ensure_tools
  ensure_etcd
  ensure_kube_apiserver
  rm -rf "$state"; mkdir -p "$state/certs"
  echo "ETCD_PORT=$(free_port)" >"$state/ports"
  echo "ETCD_PEER_PORT=$(free_port)" >>"$state/ports"
  echo "API_PORT=$(free_port)" >>"$state/ports"
  # shellcheck disable=SC1091
  . "$state/ports"

  "$etcd" --name local --data-dir "$state/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "local=http://127.0.0.1:$ETCD_PEER_PORT" \
    >"$state/etcd.log" 2>&1 &
  echo $! >"$state/etcd.pid"
  wait_for 30 "etcd on 127.0.0.1:$ETCD_PORT" curl -fs "http://127.0.0.1:$ETCD_PORT/health" ||
    { tail -20 "$state/etcd.log" >&2; die "etcd did not become healthy (log: $state/etcd.log)"; }

  openssl genrsa -out "$state/sa.key" 2048 2>/dev/null
  openssl rsa -in "$state/sa.key" -pubout -out "$state/sa.pub" 2>/dev/null
  head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$state/token"
  # token,user,uid,"groups": system:masters bypasses RBAC. "nobody" has no
  # RBAC bindings at all: the e2e tests use it to see a forbidden list.
  echo "$(cat "$state/token"),admin,admin,\"system:masters\"" >"$state/tokens.csv"
  echo "$(cat "$state/token")nobody,nobody,nobody" >>"$state/tokens.csv"

  start_apiserver

  cat >"$state/kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority: $state/certs/apiserver.crt
users:
- name: admin
  user:
    token: $(cat "$state/token")
- name: nobody
  user:
    token: $(cat "$state/token")nobody
contexts:
- name: local
  context: {cluster: local, user: admin}
- name: nobody
  context: {cluster: local, user: nobody}
current-context: local
KUBECONFIG
  env_cmd
}

env_cmd() {
  [ -f "$state/kubeconfig" ] || die "no cluster is up (run: hack/local-cluster.sh up)"
  # shellcheck disable=SC1091
  . "$state/ports"
  echo "export KUBECONFIG=$state/kubeconfig"
  echo "export LOCAL_CLUSTER_ETCD=http://127.0.0.1:$ETCD_PORT"
}

down() {
  stop_pid kube-apiserver
  stop_pid etcd
  rm -rf "$state"
  log "stopped"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  env) env_cmd ;;
  restart-apiserver) stop_pid kube-apiserver; start_apiserver ;;
  compact)
    # shellcheck disable=SC1091
    . "$state/ports"
    rev=$("$etcdctl" --endpoints "http://127.0.0.1:$ETCD_PORT" endpoint status --write-out=fields | awk -F' : ' '/^"Revision"/ {print $2}')
    "$etcdctl" --endpoints "http://127.0.0.1:$ETCD_PORT" compact "$rev" >&2
    echo "$rev" ;;
  *) echo "usage: $0 up|down|env|restart-apiserver|compact" >&2; exit 2 ;;
esac
