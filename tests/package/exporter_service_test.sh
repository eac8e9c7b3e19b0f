#!/usr/bin/env bash
# lockscope-exporter.service as a user of it would run it. Its command line,
# settings and capabilities are read from the unit file itself.
# - With systemd as PID 1: the unit runs as a transient service
#   (systemd-run, the unit's properties), /metrics answers, and after a
#   SIGKILL systemd starts it again (Restart=on-failure).
# - Without systemd (containers, this CI): the same command line runs under
#   the same capability set and no-new-privs with setpriv as an
#   unprivileged user; /metrics answers with every series the Grafana
#   example plots, a session series is written in the state directory, a
#   SIGKILL is a failure (which Restart=on-failure restarts) and a stop is
#   not; with CAP_BPF or CAP_PERFMON removed recording fails with one
#   sentence that names it, with CAP_SYSLOG removed it says that callers
#   cannot be named; with WEB_CONFIG set to a web-config file (TLS and a
#   password), /metrics answers only over TLS and only with the password.
# Usage: exporter_service_test.sh LOCKSCOPE SOURCE_DIR
set -uo pipefail
lockscope=$1
src=$2
if [ "$(id -u)" -ne 0 ]; then
  echo "Skipped: running a service's command line as another user needs root"
  exit 77
fi
unit=$src/packaging/lockscope-exporter.service
defaults=$src/packaging/lockscope-exporter.default
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

key() { sed -n "s/^$1=//p" "$unit" | tail -1; }
[ "$(key Restart)" = on-failure ] || fail "the unit does not restart on failure: Restart=$(key Restart)"
[ "$(key NoNewPrivileges)" = yes ] || fail "NoNewPrivileges is not yes"
[ "$(key DynamicUser)" = yes ] || fail "the unit runs as root (no DynamicUser)"
[ "$(key ProtectSystem)" = strict ] || fail "ProtectSystem is not strict"
caps=$(key AmbientCapabilities)
[ "$caps" = "$(key CapabilityBoundingSet)" ] || fail "bounding set '$(key CapabilityBoundingSet)' is not the ambient set '$caps'"
[[ " $caps " == *" CAP_BPF "* && " $caps " == *" CAP_PERFMON "* ]] || fail "capabilities '$caps' lack CAP_BPF or CAP_PERFMON"
# examples/prometheus scrapes the port the unit listens on by default.
port=$(sed -n 's/^LISTEN=.*:\([0-9]*\)$/\1/p' "$defaults")
grep -q "localhost:$port'" "$src/examples/prometheus/prometheus.yml" ||
  fail "examples/prometheus/prometheus.yml does not scrape port $port, the service's default"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
scrape() { curl -fsS --max-time 5 "http://127.0.0.1:$1/metrics"; }

# The unit's command line with its settings: the defaults file, then ours.
command_line() {  # LISTEN SESSION_ARGS [WEB_CONFIG] -> words on stdout, one per line
  local exec
  exec=$(key ExecStart)
  (
    set -a
    # shellcheck disable=SC1090
    . "$defaults"
    LISTEN=$1
    SESSION_ARGS=$2
    WEB_CONFIG=${3:-}
    INTERVAL=0.5
    set +a
    # systemd's rules: ${VAR} is one word, $VAR splits on white space.
    for word in $exec; do
      case $word in
        /usr/bin/lockscope) echo "$lockscope" ;;
        \$\{*\}) v=${word:2:-1}; echo "${!v}" ;;
        \$*) v=${word:1}; for w in ${!v}; do echo "$w"; done ;;
        *) echo "$word" ;;
      esac
    done
  )
}

if [ -d /run/systemd/system ]; then
  port=$(free_port)
  mapfile -t argv < <(command_line "127.0.0.1:$port" "")
  props=()
  for k in DynamicUser CapabilityBoundingSet AmbientCapabilities NoNewPrivileges ProtectSystem StateDirectory \
           ProtectHome PrivateTmp Restart RestartSec; do
    props+=(-p "$k=$(key $k)")
  done
  name=lockscope-exporter-test-$$
  # The binary from a place the dynamic user can read.
  install -m 0755 "$lockscope" "/run/$name-lockscope"
  argv[0]=/run/$name-lockscope
  systemd-run --unit="$name" "${props[@]}" "${argv[@]}" || fail "systemd-run failed"
  for _ in $(seq 50); do scrape "$port" >/dev/null 2>&1 && break; sleep 0.2; done
  grep -q '^lockscope_intervals_total' <<<"$(scrape "$port")" || fail "the service serves no metrics"
  first=$(systemctl show -p MainPID --value "$name")
  systemctl kill -s KILL "$name"
  restarted=""
  for _ in $(seq 100); do
    now=$(systemctl show -p MainPID --value "$name")
    if [ "$now" != 0 ] && [ "$now" != "$first" ]; then restarted=$now; break; fi
    sleep 0.2
  done
  [ -n "$restarted" ] || fail "killed, the service was not restarted"
  systemctl stop "$name"
  rm -f "/run/$name-lockscope"
else
  uid=61999  # from systemd's range for dynamic users; owns nothing here
  state=$work/state
  mkdir -p "$state" && chown "$uid:$uid" "$state"
  chmod 755 "$work"
  # CAPS ARGV...: becomes ARGV as the service's user with CAPS (a list of +cap);
  # in the background, $! is then the exporter itself.
  as_service() {
    local set=$1; shift
    exec setpriv --reuid=$uid --regid=$uid --clear-groups --inh-caps="-all$set" --ambient-caps="-all$set" \
      --bounding-set="-all$set" --no-new-privs "$@"
  }
  setpriv_caps=""
  for c in $caps; do
    c=${c#CAP_}
    setpriv_caps+=",+${c,,}"
  done

  port=$(free_port)
  mapfile -t argv < <(command_line "127.0.0.1:$port" "--session-dir $state/sessions --rotate-every 1h --keep 2")
  echo "running: ${argv[*]} with ${setpriv_caps#,}"
  as_service "$setpriv_caps" "${argv[@]}" >/dev/null 2>"$work/err" &
  pid=$!
  pids+=("$pid")
  metrics=""
  for _ in $(seq 100); do
    metrics=$(scrape "$port" 2>/dev/null) && grep -q '^lockscope_intervals_total [1-9]' <<<"$metrics" && break
    sleep 0.2
  done
  grep -q '^lockscope_intervals_total [1-9]' <<<"$metrics" || fail "no intervals served at /metrics: $(cat "$work/err")"
  # A pipe workload so that the lock series exist, then every series the dashboard plots.
  "$lockscope" workload pipe -t 2 -d 2 >/dev/null
  sleep 1.5
  metrics=$(scrape "$port")
  for name in $(grep -o 'lockscope_[a-z_]*' "$src/examples/grafana/lockscope-dashboard.json" | sort -u); do
    grep -q "^$name[{ ]" <<<"$metrics" || fail "the Grafana example plots $name, which the service does not serve"
  done
  grep -q 'lock="pipe_inode_info.mutex"' <<<"$metrics" ||
    fail "the pipe workload's lock is not named with $caps"
  grep -q "cannot be named (needs CAP_SYSLOG" "$work/err" && fail "with $caps callers cannot be named: $(cat "$work/err")"
  ls "$state/sessions"/lockscope-*.lockscope >/dev/null 2>&1 || fail "no session file in the state directory"
  kill -9 "$pid"
  wait "$pid"
  status=$?
  [ "$status" -ne 0 ] || fail "killed, the exporter exited 0, which Restart=on-failure would not restart"
  # A stop (SIGTERM) is a clean exit: systemd does not restart a stopped service.
  port=$(free_port)
  mapfile -t argv < <(command_line "127.0.0.1:$port" "")
  as_service "$setpriv_caps" "${argv[@]}" >/dev/null 2>"$work/err" &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 100); do scrape "$port" >/dev/null 2>&1 && break; sleep 0.2; done
  kill -TERM "$pid"
  wait "$pid"
  status=$?
  [ "$status" -eq 0 ] || fail "stopped with SIGTERM, the exporter exited $status: $(cat "$work/err")"

  # WEB_CONFIG: the same command line serves HTTPS with a password, and nothing else.
  "$src/tests/exporter/make_certs.sh" "$work" || fail "openssl could not make the test certificates"
  chmod 644 "$work"/*.pem  # readable by the service's user
  printf 'tls_server_config:\n  cert_file: server.pem\n  key_file: server-key.pem\nbasic_auth_users:\n  prometheus: %s\n' \
    "$(htpasswd -nbBC 10 prometheus 'scrape me' | cut -d: -f2)" >"$work/web.yml"
  chmod 644 "$work/web.yml"
  port=$(free_port)
  mapfile -t argv < <(command_line "127.0.0.1:$port" "" "$work/web.yml")
  as_service "$setpriv_caps" "${argv[@]}" >/dev/null 2>"$work/err" &
  pid=$!
  pids+=("$pid")
  https() { curl -sS --max-time 5 --cacert "$work/ca.pem" -o /dev/null -w '%{http_code}' "$@" "https://localhost:$port/metrics"; }
  for _ in $(seq 100); do [ "$(https -u 'prometheus:scrape me' 2>/dev/null)" = 200 ] && break; sleep 0.2; done
  [ "$(https -u 'prometheus:scrape me' 2>/dev/null)" = 200 ] ||
    fail "with WEB_CONFIG the service does not answer HTTPS with the password: $(cat "$work/err")"
  [ "$(https 2>/dev/null)" = 401 ] || fail "with WEB_CONFIG the service answers without the password"
  curl -s --max-time 5 "http://127.0.0.1:$port/metrics" >/dev/null && fail "with WEB_CONFIG the service answers plain HTTP"
  kill -TERM "$pid"
  wait "$pid" || fail "with WEB_CONFIG, stopped, the exporter exited $?: $(cat "$work/err")"

  # The set is the minimum: without CAP_BPF or CAP_PERFMON recording fails in
  # one sentence naming it; without CAP_SYSLOG it records but says callers
  # cannot be named.
  for c in $caps; do
    fewer=""
    for other in $caps; do
      [ "$other" = "$c" ] || fewer+=",+$(tr '[:upper:]' '[:lower:]' <<<"${other#CAP_}")"
    done
    port=$(free_port)
    mapfile -t argv < <(command_line "127.0.0.1:$port" "--duration 1")
    (as_service "$fewer" timeout 30 "${argv[@]}") >/dev/null 2>"$work/err"
    status=$?
    case $c in
      CAP_SYSLOG)
        [ "$status" -eq 0 ] || fail "without $c the exporter exited $status: $(cat "$work/err")"
        grep -q "callers, stacks and many locks cannot be named (needs CAP_SYSLOG" "$work/err" ||
          fail "without $c the exporter does not say that callers cannot be named: $(cat "$work/err")" ;;
      *)
        [ "$status" -eq 1 ] || fail "without $c the exporter exited $status, not 1: $(cat "$work/err")"
        grep -q "$c missing" "$work/err" || fail "without $c the error does not name it: $(cat "$work/err")"
        [ "$(grep -c . "$work/err")" -eq 1 ] || fail "without $c the error is not one sentence: $(cat "$work/err")" ;;
    esac
  done
fi

[ "$failures" -eq 0 ] || exit 1
echo "ok: the exporter runs with $caps only, serves what the examples read, serves HTTPS with a password" \
  "with WEB_CONFIG, and fails clearly without either capability"
