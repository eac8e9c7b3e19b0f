#!/usr/bin/env bash
# The floors hold (scripts/check_layers.py on this tree), and the check
# itself catches an include that goes up, and libbpf or Qt in core.
set -euo pipefail
check="$1"
repo="$2"
python3 "$check" "$repo" >/dev/null || { python3 "$check" "$repo"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/collector/core" "$work/collector/probe" "$work/gui/models"
printf '#include "core/model.h"\n' > "$work/collector/probe/ok.cpp"
printf '#include "probe/probe.h"\n' > "$work/collector/core/up.cpp"
printf '#include <bpf/libbpf.h>\n#include <QString>\n' > "$work/collector/core/libs.cpp"
printf '#include "probe/recorder.h"\n' > "$work/gui/models/bad.cpp"
if out=$(python3 "$check" "$work"); then
  echo "FAIL: the check passed a tree with includes against the floors" >&2; exit 1
fi
for want in "core includes probe/probe.h" "core includes <bpf/libbpf.h>" "core includes <QString>" \
            "the GUI includes probe/recorder.h"; do
  grep -qF "$want" <<<"$out" || { echo "FAIL: not reported: $want" >&2; echo "$out" >&2; exit 1; }
done
grep -q "ok.cpp" <<<"$out" && { echo "FAIL: a downward include was reported" >&2; exit 1; }
echo "layers: ok"
