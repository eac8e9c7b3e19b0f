# Sourced by the bench scripts: sets $lockscope to the binary to run —
# $LOCKSCOPE if set, else this checkout's build/lockscope, else lockscope
# on PATH — or exits 2 with one sentence naming the calling script.
lockscope=${LOCKSCOPE:-}
if [[ -z $lockscope ]]; then
    repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    if [[ -x $repo/build/lockscope ]]; then lockscope=$repo/build/lockscope
    else lockscope=$(command -v lockscope || true); fi
fi
if [[ -z $lockscope || ! -x $lockscope ]]; then
    echo "$(basename "$0"): lockscope not found; build it or set LOCKSCOPE=path/to/lockscope" >&2
    exit 2
fi
