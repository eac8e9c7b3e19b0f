#!/usr/bin/env bash
# Builds perf with its BPF skeletons, so that `perf lock contention -b` (perf's
# own in-kernel lock profiler) can be measured beside lockscope
# (bench/overhead.py, bench/cost_report.sh). Debian's linux-perf is built
# without them. The source is Debian's linux-source package, unpacked here;
# nothing of it is kept in this tree.
#
# Where this kernel's kallsyms has no data symbols (no `runqueues`), perf's
# lock_contention.bpf.c cannot load: its collect_lock_syms program looks up
# the per-CPU run queues to name their locks. The copy unpacked here then has
# that one lookup left out (perf's run-queue locks stay unnamed; nothing else
# changes), and OUTDIR/perf.patched says so, for the cost table.
#
# usage: bench/build_perf.sh [OUTDIR]   (default build/perf; the binary is OUTDIR/perf)
# Needs the packages of scripts/install-deps.sh --bench-perf. A few minutes on 2 CPUs.
set -euo pipefail
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 0
fi
[[ $# -le 1 ]] || { echo "build_perf.sh: takes at most one argument, the output directory (try --help)" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$here/build/perf}")
die() { echo "build_perf.sh: $*" >&2; exit 1; }

tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -1 || true)
[[ -n $tarball ]] || die "no /usr/src/linux-source-*.tar.xz: run scripts/install-deps.sh --bench-perf"
version=$(basename "$tarball" .tar.xz)
src=$out/src/$version

if [[ ! -f $src/tools/perf/Makefile.perf ]]; then
    echo "build_perf.sh: unpacking $tarball" >&2
    rm -rf "$out/src"
    mkdir -p "$out/src"
    # Only what perf's build reads; its Makefile wants arm64's sysreg
    # generator even on x86.
    tar -xJf "$tarball" -C "$out/src" "$version/tools" "$version/include" "$version/arch/x86" \
        "$version/arch/arm64/tools" "$version/arch/arm64/include" "$version/scripts" "$version/kernel" \
        "$version/lib" "$version/Makefile"
fi

skel=$src/tools/perf/util/bpf_skel/lock_contention.bpf.c
rm -f "$out/perf.patched"
if ! grep -qw runqueues /proc/kallsyms; then
    # The run queues' address is resolved when the object loads, for all its
    # programs: without the symbol nothing of perf's loads. Leave that lookup
    # out (the loop then finds no run queue and names none).
    grep -q '^extern struct rq runqueues __ksym;$' "$skel" ||
        grep -q 'runqueues left out' "$skel" ||
        die "$skel does not declare runqueues as this script expects; look at it by hand"
    sed -i -e 's|^extern struct rq runqueues __ksym;$|/* runqueues left out: this kernel has no data symbols */|' \
        -e 's|bpf_per_cpu_ptr(&runqueues, i)|NULL|' "$skel"
    ! grep -qw '&runqueues' "$skel" || die "could not leave runqueues out of $skel"
    echo "collect_lock_syms without its runqueues lookup: this kernel's kallsyms has no data symbols" \
        >"$out/perf.patched"
elif grep -q 'runqueues left out' "$skel"; then
    # unpacked for a kernel without the symbol: perf's own file again
    tar -xJf "$tarball" -C "$out/src" "$version/tools/perf/util/bpf_skel/lock_contention.bpf.c"
fi

echo "build_perf.sh: building perf from $version with BUILD_BPF_SKEL=1" >&2
mkdir -p "$out/obj"
make -C "$src/tools/perf" O="$out/obj" -j"$(nproc)" BUILD_BPF_SKEL=1 NO_LIBPYTHON=1 NO_LIBPERL=1 \
    NO_JEVENTS=1 NO_LIBBABELTRACE=1 NO_GTK2=1 NO_LIBLLVM=1 NO_SDT=1 NO_JVMTI=1 NO_LIBCAP=1 \
    >"$out/build.log" 2>&1 || die "make failed; see $out/build.log"
cp "$out/obj/perf" "$out/perf"
"$out/perf" lock contention -b -a -- true >/dev/null 2>&1 ||
    die "$out/perf was built but 'perf lock contention -b' does not run here; see $out/build.log"
echo "build_perf.sh: $out/perf ($version)$([[ -f $out/perf.patched ]] && echo ", $(cat "$out/perf.patched")")"
