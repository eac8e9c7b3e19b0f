#!/usr/bin/env bash
# record --prometheus --web-config as Prometheus and an intruder see it:
# - TLS + basic auth: curl --cacert -u user:pass gets 200 and a body that
#   `promtool check metrics` accepts; no password, a wrong password or an
#   unknown user get 401; plain HTTP on the port gets no HTTP answer at all;
#   a client that offers at most TLS 1.1 is refused (TLS 1.2 minimum).
# - RequireAndVerifyClientCert: a client certificate signed by
#   client_ca_file gets 200; none, or one no one signed, fail the handshake.
#   VerifyClientCertIfGiven: none or a signed one get 200, one no one signed
#   fails; min_version TLS13 refuses a TLS 1.2 client.
# - A bad file: exit 1 with one sentence, and the port is never opened.
# Usage: exporter_tls_test.sh LOCKSCOPE
set -uo pipefail
lockscope=$1
here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" -ne 0 ]; then
  echo "Skipped: recording needs root"
  exit 77
fi
work=$(mktemp -d)
pid=""
cleanup() {
  [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$here/make_certs.sh" "$work" || { echo "FAIL: openssl could not make the certificates"; exit 1; }
hash=$(htpasswd -nbBC 10 prometheus 'scrape me' | cut -d: -f2)
cat >"$work/auth.yml" <<YAML
tls_server_config:
  cert_file: server.pem
  key_file: server-key.pem
basic_auth_users:
  prometheus: $hash
YAML
cat >"$work/mtls.yml" <<YAML
tls_server_config:
  cert_file: server.pem
  key_file: server-key.pem
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: client-ca.pem
YAML

cat >"$work/optional.yml" <<YAML
tls_server_config:
  cert_file: server.pem
  key_file: server-key.pem
  client_auth_type: VerifyClientCertIfGiven
  client_ca_file: client-ca.pem
  min_version: TLS13
YAML

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# CONFIG -> starts the exporter; sets $pid and $port, waits until it answers TLS.
start() {
  port=$(free_port)
  "$lockscope" record --prometheus "127.0.0.1:$port" --web-config "$work/$1" -i 0.5 >/dev/null 2>"$work/err" &
  pid=$!
  for _ in $(seq 100); do
    grep -q "serving Prometheus metrics at https://127.0.0.1:$port/metrics" "$work/err" && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  fail "the exporter did not start with $1: $(cat "$work/err")"
  return 1
}
stop() { kill -TERM "$pid"; wait "$pid"; local s=$?; pid=""; [ "$s" -eq 0 ] || fail "the exporter exited $s: $(cat "$work/err")"; }
url() { echo "https://localhost:$port/metrics"; }
# curl ARGS... -> "HTTP_CODE CURL_EXIT" with the body in $work/body
get() {
  local code
  code=$(curl -sS --max-time 10 -o "$work/body" -w '%{http_code}' "$@" 2>"$work/curl-err")
  echo "$code $?"
}

if start auth.yml; then
  for _ in $(seq 50); do  # wait for the first interval's series
    curl -s --cacert "$work/ca.pem" -u 'prometheus:scrape me' "$(url)" | grep -q '^lockscope_intervals_total [1-9]' && break
    sleep 0.1
  done
  r=$(get --cacert "$work/ca.pem" -u 'prometheus:scrape me' "$(url)")
  [ "$r" = "200 0" ] || fail "with the password: '$r', not 200: $(cat "$work/curl-err")"
  grep -q '^lockscope_intervals_total [1-9]' "$work/body" || fail "with the password the body has no lockscope series"
  promtool check metrics <"$work/body" >"$work/promtool" 2>&1 || fail "promtool rejects the body: $(cat "$work/promtool")"
  r=$(get --cacert "$work/ca.pem" "$(url)")
  [ "$r" = "401 0" ] || fail "without a password: '$r', not 401"
  grep -q lockscope_ "$work/body" && fail "without a password the 401 carries metrics"
  r=$(get --cacert "$work/ca.pem" -u 'prometheus:scrape you' "$(url)")
  [ "$r" = "401 0" ] || fail "with a wrong password: '$r', not 401"
  r=$(get --cacert "$work/ca.pem" -u 'grafana:scrape me' "$(url)")
  [ "$r" = "401 0" ] || fail "as an unknown user: '$r', not 401"
  r=$(get "http://127.0.0.1:$port/metrics")
  [[ "$r" == 000* ]] || fail "plain HTTP got an HTTP answer: '$r'"
  [ -s "$work/body" ] && fail "plain HTTP got bytes back: $(head -c 200 "$work/body")"
  r=$(get --cacert "$work/ca.pem" -u 'prometheus:scrape me' --tls-max 1.1 "$(url)")
  [[ "$r" == 000* ]] || fail "a TLS 1.1 client was served: '$r'"
  r=$(get -u 'prometheus:scrape me' "$(url)")
  [[ "$r" == "000 60" ]] || fail "a client that does not trust the CA: '$r', not a certificate error"
  stop
fi

if start mtls.yml; then
  r=$(get --cacert "$work/ca.pem" --cert "$work/client.pem" --key "$work/client-key.pem" "$(url)")
  [ "$r" = "200 0" ] || fail "with a client certificate the CA signed: '$r', not 200: $(cat "$work/curl-err")"
  promtool check metrics <"$work/body" >"$work/promtool" 2>&1 || fail "promtool rejects the body: $(cat "$work/promtool")"
  r=$(get --cacert "$work/ca.pem" "$(url)")
  [[ "$r" == 000* ]] || fail "without a client certificate: '$r', not a TLS error"
  r=$(get --cacert "$work/ca.pem" --cert "$work/stray.pem" --key "$work/stray-key.pem" "$(url)")
  [[ "$r" == 000* ]] || fail "with a client certificate no one signed: '$r', not a TLS error"
  kill -0 "$pid" 2>/dev/null || fail "refused handshakes stopped the exporter"
  stop
fi

if start optional.yml; then
  r=$(get --cacert "$work/ca.pem" "$(url)")
  [ "$r" = "200 0" ] || fail "VerifyClientCertIfGiven without a certificate: '$r', not 200"
  r=$(get --cacert "$work/ca.pem" --cert "$work/client.pem" --key "$work/client-key.pem" "$(url)")
  [ "$r" = "200 0" ] || fail "VerifyClientCertIfGiven with a signed certificate: '$r', not 200"
  r=$(get --cacert "$work/ca.pem" --cert "$work/stray.pem" --key "$work/stray-key.pem" "$(url)")
  [[ "$r" == 000* ]] || fail "VerifyClientCertIfGiven with a certificate no one signed: '$r', not a TLS error"
  r=$(get --cacert "$work/ca.pem" --tls-max 1.2 "$(url)")
  [[ "$r" == 000* ]] || fail "min_version TLS13 served a TLS 1.2 client: '$r'"
  stop
fi

# A bad file stops the start, in one sentence, before the port is opened.
printf 'tls_server_config:\n  cert_file: server.pem\n  key_file: server-key.pem\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n' \
  >"$work/bad.yml"
port=$(free_port)
timeout 20 "$lockscope" record --prometheus "127.0.0.1:$port" --web-config "$work/bad.yml" >/dev/null 2>"$work/err"
status=$?
[ "$status" -eq 1 ] || fail "a bad web config exited $status, not 1"
[ "$(grep -c . "$work/err")" -eq 1 ] || fail "a bad web config is not refused in one line: $(cat "$work/err")"
grep -q "bad.yml: tls_server_config.cipher_suites is not supported" "$work/err" ||
  fail "the refusal does not name the file and the field: $(cat "$work/err")"

[ "$failures" -eq 0 ] || exit 1
echo "ok: 200 with the password and promtool accepts the body; 401 without; plain HTTP, TLS 1.1 and" \
  "missing or stray client certificates refused; a bad file refused in one sentence"
