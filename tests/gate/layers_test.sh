#!/usr/bin/env bash
# The floors hold (scripts/check_layers.py on this tree), and the check
# itself catches an include that goes up (between rooms, and between core's
# own floors), libbpf or Qt in core, the BPF side including anything but
# its own headers, in core's folders too, and files of one floor that
# include each other in a loop (a header and its .cpp counting as one).
set -euo pipefail
check="$1"
repo="$2"
python3 "$check" "$repo" >/dev/null 2>&1 || { python3 "$check" "$repo"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bpf" "$work/collector/core/storage" "$work/collector/core/analysis" "$work/collector/probe" \
         "$work/collector/identity" "$work/collector/pipeline" "$work/gui/models"
printf '#include <bpf/bpf_helpers.h>\n#include "own_abi.h"\n' > "$work/bpf/ok.bpf.c"
printf '/* the ABI */\n' > "$work/bpf/own_abi.h"
printf '#include "core/model.h"\n' > "$work/bpf/up.h"
printf '#include "core/model.h"\n' > "$work/collector/probe/ok.cpp"
printf '#include "probe/probe.h"\n' > "$work/collector/core/up.cpp"
printf '#include "record/recorder.h"\n' > "$work/collector/core/storage/up.cpp"
printf '#include <bpf/libbpf.h>\n#include <QString>\n#include "lockscope_bpf.skel.h"\n' > "$work/collector/core/libs.cpp"
printf '#include "record/recorder.h"\n' > "$work/gui/models/bad.cpp"
printf '#include "core/model.h"\n#include "fleet/fleet_diff.h"\n' > "$work/gui/models/ok.cpp"
printf '#include "core/analysis/report.h"\n' > "$work/collector/core/storage/floor_up.cpp"
printf '#include "core/storage/session_store.h"\n#include "core/host/symbols.h"\n' > "$work/collector/core/analysis/ok.cpp"
printf '#include "pipeline/rollup.h"\n' > "$work/collector/identity/up.cpp"
printf '#include "identity/ladder.h"\n' > "$work/collector/pipeline/ok.cpp"
# A loop through a .cpp: sides.cpp -> verdicts.h -> sides.h; and a chain
# without one: a header, its .cpp, and a header both include.
printf '/* sides */\n' > "$work/collector/core/analysis/sides.h"
printf '#include "core/analysis/sides.h"\n#include "core/analysis/verdicts.h"\n' > "$work/collector/core/analysis/sides.cpp"
printf '#include "core/analysis/sides.h"\n' > "$work/collector/core/analysis/verdicts.h"
printf '#include "core/analysis/shared.h"\n' > "$work/collector/core/analysis/chain.h"
printf '#include "core/analysis/chain.h"\n#include "core/analysis/shared.h"\n' > "$work/collector/core/analysis/chain.cpp"
printf '/* shared */\n' > "$work/collector/core/analysis/shared.h"
if out=$(python3 "$check" "$work"); then
  echo "FAIL: the check passed a tree with includes against the floors" >&2; exit 1
fi
for want in "core includes probe/probe.h" "collector/core/storage/up.cpp:1: core includes record/recorder.h" \
            "core includes <bpf/libbpf.h>" "core includes <QString>" \
            "core includes <lockscope_bpf.skel.h>" "the GUI includes record/recorder.h" \
            "bpf/up.h:1: bpf includes core/model.h" \
            "collector/core/storage/floor_up.cpp:1: core/storage includes core/analysis/report.h (up a floor of core" \
            "collector/identity/up.cpp:1: identity includes pipeline/rollup.h" \
            "include loop in collector/core/: analysis/sides -> analysis/verdicts -> analysis/sides (collector/core/analysis/sides.cpp:2 includes collector/core/analysis/verdicts.h; collector/core/analysis/verdicts.h:1 includes collector/core/analysis/sides.h)"; do
  grep -qF "$want" <<<"$out" || { echo "FAIL: not reported: $want" >&2; echo "$out" >&2; exit 1; }
done
grep -q "ok.cpp\|ok.bpf.c" <<<"$out" && { echo "FAIL: a downward include was reported" >&2; exit 1; }
grep -q "chain\|shared" <<<"$out" && { echo "FAIL: includes without a loop were reported as one" >&2; exit 1; }
echo "layers: ok"
