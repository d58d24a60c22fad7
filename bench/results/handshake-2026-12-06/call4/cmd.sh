# Call 4 (the same H200): issue 12's MoE one-token case and N = 4096, T = 8, every variant.
R=$OUT/cJ; mkdir -p $R; timeout 95 /tmp/kiln bench --package /tmp/pnew/dist --kernel gemv_moe_q8_0_qwen3_t1,gemv_q8_0_rp_k4_n4096_t8 --replays 10 --json $R/bench.json > $R/bench.log 2>&1; echo rc $?; grep -E "^gemv" $R/bench.log | sort -u | cut -c1-300
