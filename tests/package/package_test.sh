#!/usr/bin/env bash
# The Debian packages as an administrator meets them: scripts/package.sh
# builds them (reusing this build tree), lintian finds no errors, apt
# installs them with their dependencies, the installed lockscope records
# and reports and the installed dashboard renders the session, and
# `apt-get purge` leaves none of their files behind.
# Usage: package_test.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
if [ "$(id -u)" -ne 0 ]; then
  echo "Skipped: installing packages needs root"
  exit 77
fi
started=$(date +%s)
work=$(mktemp -d)
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
export DEBIAN_FRONTEND=noninteractive
purge() { apt-get purge -y -qq lockscope lockscope-gui >/dev/null 2>&1; }
cleanup() {
  purge
  rm -rf "$work" /var/lib/private/lockscope-exporter /var/lib/lockscope-exporter
}
trap cleanup EXIT
# A run killed before its purge leaves them installed: start from nothing.
purge

# --built: other tests run beside this one, on the programs of this build
# directory; a build here (a version from a newer commit) would relink them
# under those tests.
"$src/scripts/package.sh" --build-dir "$build" --built || { echo "FAIL: scripts/package.sh failed"; exit 1; }
cli_deb=$(ls "$build"/packages/lockscope_*.deb)
gui_deb=$(ls "$build"/packages/lockscope-gui_*.deb 2>/dev/null)
version=$("$build/lockscope" --version | cut -d' ' -f2)
[[ $cli_deb == *"_${version}_"* ]] || fail "$cli_deb is not named by the built version $version"
depends=$(dpkg-deb -f "$cli_deb" Depends)
[[ $depends == *libbpf* && $depends == *libsqlite3* ]] || fail "lockscope's dependencies lack libbpf or libsqlite3: $depends"
[[ $depends != *qt* ]] || fail "lockscope depends on Qt: $depends"
echo "packaged in $(($(date +%s) - started)) s: $(basename "$cli_deb") $(basename "$gui_deb")"

# Warnings and notes are shown; errors fail.
lintian --fail-on error --suppress-tags-from-file /dev/null "$cli_deb" $gui_deb || fail "lintian reports errors"

if ! apt-get install -y -qq "$cli_deb" $gui_deb >"$work/apt.log" 2>&1; then
  cat "$work/apt.log"
  echo "FAIL: apt-get install failed"
  exit 1
fi
mapfile -t files < <(dpkg -L lockscope ${gui_deb:+lockscope-gui} | sort -u)

[ "$(command -v lockscope)" = /usr/bin/lockscope ] || fail "lockscope is not /usr/bin/lockscope"
[ "$(/usr/bin/lockscope --version)" = "lockscope $version" ] || fail "installed: $(/usr/bin/lockscope --version)"
/usr/bin/lockscope info >"$work/info" || fail "lockscope info failed: $(cat "$work/info")"
grep -q "record: will work" "$work/info" || fail "lockscope info: $(cat "$work/info")"
grep -q "^lockscope *$version$" "$work/info" || fail "lockscope info does not say version $version: $(head -1 "$work/info")"
session=$work/pipe.lockscope
/usr/bin/lockscope record --workload pipe -t 2 -d 1 -o "$session" 2>"$work/record.err" ||
  fail "record failed: $(cat "$work/record.err")"
/usr/bin/lockscope report "$session" >"$work/report" || fail "report failed"
grep -q "pipe_inode_info.mutex" "$work/report" || fail "the report does not show the pipe's lock: $(cat "$work/report")"
# Through a file: grep -q stops reading early, and pipefail would count the writer's SIGPIPE.
/usr/bin/lockscope report "$session" --format json >"$work/report.json" || fail "report --format json failed"
grep -q "\"tool_version\": *\"$version\"" "$work/report.json" ||
  fail "the session does not say it was made by lockscope $version"
if [ -n "$gui_deb" ]; then
  QT_QPA_PLATFORM=offscreen /usr/bin/lockscope-gui --screenshot "$work/overview.png" "$session" >/dev/null 2>&1 &&
    [ -s "$work/overview.png" ] || fail "the installed lockscope-gui did not render the session"
fi
# The exporter over TLS with a password, with the OpenSSL names civetweb loads from the package.
printf '%s\n' "${files[@]}" | grep -q '^/usr/lib/lockscope/liblockscope-tls-ssl.so$' ||
  fail "the package lacks /usr/lib/lockscope/liblockscope-tls-ssl.so, which TLS needs"
"$src/tests/exporter/make_certs.sh" "$work" || fail "openssl could not make the test certificates"
printf 'tls_server_config:\n  cert_file: server.pem\n  key_file: server-key.pem\nbasic_auth_users:\n  prometheus: %s\n' \
  "$(htpasswd -nbBC 10 prometheus 'scrape me' | cut -d: -f2)" >"$work/web.yml"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
/usr/bin/lockscope record --prometheus "127.0.0.1:$port" --web-config "$work/web.yml" -d 4 >/dev/null 2>"$work/tls.err" &
exporter=$!
code=""
for _ in $(seq 30); do
  code=$(curl -s --max-time 5 --cacert "$work/ca.pem" -u 'prometheus:scrape me' -o /dev/null -w '%{http_code}' \
    "https://localhost:$port/metrics") && [ "$code" = 200 ] && break
  sleep 0.1
done
[ "$code" = 200 ] || fail "the installed exporter does not serve HTTPS with the password ($code): $(cat "$work/tls.err")"
wait "$exporter" || fail "the installed exporter with a web config failed: $(cat "$work/tls.err")"
[ "$(man -w lockscope-record)" = /usr/share/man/man1/lockscope-record.1.gz ] || fail "man lockscope-record is not installed"
[ -f /usr/share/bash-completion/completions/lockscope ] || fail "no bash completion installed"
# The documentation, where record --help points: README.md and docs/, whose links hold.
for doc in README.md docs/cost.md docs/perf-options.md docs/report.md docs/screenshots/overview.png \
  examples/grafana/lockscope-dashboard.json; do
  [ -f "/usr/share/doc/lockscope/$doc" ] || fail "/usr/share/doc/lockscope/$doc is not installed"
done
/usr/bin/lockscope record --help | tr -s ' \n' ' ' | grep -q "docs/cost.md, in /usr/share/doc/lockscope" ||
  fail "record --help does not point to the installed docs/cost.md"
for page in /usr/share/doc/lockscope/README.md /usr/share/doc/lockscope/docs/*.md; do
  # Its links to other pages, pictures and examples (links into the sources point to the repository).
  for target in $(grep -o '](\([^)#:]*\)' "$page" | sed 's/^](//' | sort -u); do
    resolved=$(realpath -m "$(dirname "$page")/$target")
    case $resolved in
      /usr/share/doc/lockscope/README.md | /usr/share/doc/lockscope/docs/* | /usr/share/doc/lockscope/examples/*)
        [ -e "$resolved" ] || fail "$page links to $target, which is not installed" ;;
    esac
  done
done
[ -f /lib/systemd/system/lockscope-exporter.service ] || fail "lockscope-exporter.service is not installed"
grep -q '^ExecStart=/usr/bin/lockscope record --prometheus' /lib/systemd/system/lockscope-exporter.service ||
  fail "the unit does not run the installed lockscope"
[ -f /etc/default/lockscope-exporter ] || fail "/etc/default/lockscope-exporter is not installed"
# systemd's own check of the unit: syntax, the program, the man page it names.
verify=$(systemd-analyze verify /lib/systemd/system/lockscope-exporter.service 2>&1)
[ -z "$verify" ] || fail "systemd-analyze verify: $verify"
# What systemd would have made for the service (DynamicUser + StateDirectory), to be purged.
mkdir -p /var/lib/private/lockscope-exporter && touch /var/lib/private/lockscope-exporter/s.lockscope
ln -sfn private/lockscope-exporter /var/lib/lockscope-exporter

apt-get purge -y -qq lockscope ${gui_deb:+lockscope-gui} >"$work/apt.log" 2>&1 || { cat "$work/apt.log"; fail "apt-get purge failed"; }
for p in lockscope lockscope-gui; do
  status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null)
  [[ -n $status && $status != u* ]] && fail "$p is still known to dpkg after purge: $status"
done
for f in "${files[@]}"; do
  # Directories other packages share (/usr/bin, /usr/share/man/man1, ...) stay.
  if [ -e "$f" ] && ! [ -d "$f" ]; then fail "left behind: $f"; fi
  if [ -d "$f" ] && [[ $f == *lockscope* ]]; then fail "left behind: $f/"; fi
done
for f in /etc/default/lockscope-exporter /var/lib/lockscope-exporter /var/lib/private/lockscope-exporter; do
  [ -e "$f" ] || [ -L "$f" ] && fail "left behind: $f"
done

[ "$failures" -eq 0 ] || exit 1
echo "ok: packaged, lintian-clean, installed, recorded, reported and purged in $(($(date +%s) - started)) s"
