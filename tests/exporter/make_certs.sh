#!/usr/bin/env bash
# Certificates for the exporter's TLS tests, made with openssl as a user
# would: a CA and a server certificate it signed for localhost and
# 127.0.0.1; a second CA for clients and a client certificate it signed;
# and a self-signed client certificate no one trusts.
# Usage: make_certs.sh DIR
set -euo pipefail
cd "$1"
ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
openssl req -x509 "${ec[@]}" -keyout ca-key.pem -out ca.pem -days 2 -subj /CN=test-ca 2>/dev/null
openssl req "${ec[@]}" -keyout server-key.pem -out server.csr -subj /CN=localhost 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 2 -extfile server.ext \
  -out server.pem 2>/dev/null
openssl req -x509 "${ec[@]}" -keyout client-ca-key.pem -out client-ca.pem -days 2 -subj /CN=client-ca 2>/dev/null
openssl req "${ec[@]}" -keyout client-key.pem -out client.csr -subj /CN=prometheus 2>/dev/null
openssl x509 -req -in client.csr -CA client-ca.pem -CAkey client-ca-key.pem -CAcreateserial -days 2 \
  -out client.pem 2>/dev/null
openssl req -x509 "${ec[@]}" -keyout stray-key.pem -out stray.pem -days 2 -subj /CN=stray 2>/dev/null
