# What every call of this folder does first (sourced: `. "$(dirname "$0")/call.sh"; begin NAME
# BUDGET`): the log folder /tmp/NAME (copied to $OUT as NAME.tgz by `ck`), the time left of
# `BUDGET` seconds (`left`, and `lim S`: S or what is left, at least 5), the runtime-only `kiln`
# from the carried .cxd (`K`), the calling script and the GPU's name and clocks in the log.
# Run from the repository root, with the folder's scripts copied to .cxd.
set -uo pipefail
begin() {
  NAME=$1; O=${OUT:-/tmp/out}; R=/tmp/$NAME; rm -rf $R; mkdir -p $R/peer
  T0=$SECONDS; B=${BUDGET:-$2}
  C=$(pwd)/.cxd
  xz -dc $C/kiln.xz > /tmp/kiln && chmod +x /tmp/kiln; K=/tmp/kiln
  cp "$0" $R/
  { date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
  cat $R/env.log
}
ck() { tar czf $O/$NAME.tgz -C /tmp $NAME; }
left() { echo $((B - (SECONDS - T0))); }
lim() { local l; l=$(left); [ $l -gt $1 ] && echo $1 || echo $((l > 5 ? l : 5)); }
