#!/usr/bin/env bash
# Call 4 (2026-12-02, eleventh session): more samples of call 3's A/B at ~587 positions
# (`short_r1t640` routed against `r1` forced), both models, alternating; the same package.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c4; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c4.tgz -C /tmp c4; }
K=./.carry/kiln
rm -rf /tmp/a && mkdir -p /tmp/a && tar xzf .carry/a.tgz -C /tmp/a
V=.carry/smol-vocab.gguf
cp .carry/c4.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
( for q in q4_1 q8_0; do $K random-model --shape smollm2-135m --type $q --vocab-from $V -o /tmp/rs-$q.gguf; done ) > $R/models.log 2>&1
sha256sum /tmp/rs-*.gguf > $R/models.sha256
for i in $(seq 10); do cat tools/engine/ref/generate.txt; done > /tmp/long-10.txt
timeout 120 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/a/dist --device cuda --prompt hi -n 4 > $R/warm.log 2>&1
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c1-112) | $(grep -h 'decode:' $2 | cut -c30-90)"; }
run() { # name model prompt-file [env]
  env ${4:-KILN_X=1} timeout 90 $K generate --model /tmp/$2.gguf --package /tmp/a/dist --device cuda --prompt-file $3 -n 128 --ctx 2304 --profile --json $R/prof-$1.json > $R/prof-$1.log 2>&1
  line "$1" $R/prof-$1.log
}
R1=KILN_ROUTE_ATTENTION_DECODE_ROPE_Q8_0_D64_Q8_1S=r1
for i in 1 2 3; do for q in q8_0 q4_1; do
  run $q-long10-r1-$i rs-$q /tmp/long-10.txt $R1
  run $q-long10-t640-$i rs-$q /tmp/long-10.txt
done; done
ck
