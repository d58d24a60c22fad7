# The A/B of call 5 (the warm machine of call 3, its package and model): the Q8_0 gate/up norm
# GEMV's route forced to p1 and p2 in turn, twice.
K=./.carry/kiln; P=/tmp/k/dist; mkdir -p $OUT/ab; for i in 1 2; do for v in p1 p2; do env KILN_ROUTE_GEMV_Q8_0_RP_SWIGLU_Q8_1S_NORM=$v timeout 40 $K generate --model /tmp/rs-q8_0.gguf --package $P --device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile > $OUT/ab/ab-$v-$i.log 2>&1; done; done
