# Sourced by the soak scripts after find_lockscope.sh, with the least
# duration they accept: checks $duration (DURATION_S) and root, or exits 2
# with one sentence; then makes $work, removed at exit once the processes
# in $pids are stopped.
soak_name=$(basename "$0")
if ! [[ $duration =~ ^[0-9]+$ ]] || (( duration < $1 )); then
    echo "$soak_name: DURATION_S must be a whole number of seconds, at least $1" >&2
    exit 2
fi
if [[ $(id -u) -ne 0 ]]; then
    echo "$soak_name: recording needs root (or CAP_BPF + CAP_PERFMON)" >&2
    exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/lockscope-${soak_name%.sh}.XXXXXX")
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
