//! get_rows_q8_0 in the interpreter, at wave 32 and 64, against ggml's dequantization on the
//! host (`f32(q) * f32(d)`, bit for bit), with NaN rows for ids past the table or negative.

use crate::common;
use common::*;
use kiln_specs::cases::Rng;
use kiln_specs::Parity;
use rand::Rng as _;

#[test]
fn rows_equal_ggml_dequantization_and_bad_ids_give_nan() {
    let Parity::Buffers(cases) = fam("get_rows_q8_0").parity else { panic!("buffer cases") };
    let mut rng = Rng::new(rng("get_rows").gen());
    for case in cases(&mut rng, false) {
        let s = |n: &str| case.scalars.iter().find(|x| x.0 == n).unwrap().2 as usize;
        let (t, k, rows) = (s("t"), s("k"), s("rows"));
        let table = case.inputs[0].2.clone();
        let ids_b = case.inputs[1].2.clone();
        let ids: Vec<u32> =
            ids_b.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
        assert!(ids.iter().any(|&i| i as usize >= rows) || t <= 2, "{}: a bad id", case.name);
        for (_, wave) in waves() {
            let k_ = &variants("get_rows_q8_0", wave)[0].1;
            let call = Call::new()
                .buf("table", table.clone())
                .buf("ids", ids_b.clone())
                .u32("t", t as u32)
                .u32("k", k as u32)
                .u32("rows", rows as u32);
            let args = run(k_, &call);
            let got = bytes_f32(out(k_, &args, "out"));
            assert_eq!(got.len(), t * k);
            for (j, &id) in ids.iter().enumerate() {
                for i in 0..k {
                    let g = got[j * k + i];
                    if id as usize >= rows {
                        assert!(g.is_nan(), "{}: token {j} id {id} [{i}] = {g}", case.name);
                        continue;
                    }
                    let blk = (id as usize * k + i) / 32 * 34;
                    let d = half::f16::from_le_bytes([table[blk], table[blk + 1]]).to_f32();
                    let want = table[blk + 2 + i % 32] as i8 as f32 * d;
                    assert!(
                        same_f32(g, want),
                        "{} wave {wave}: [{j}][{i}] {g} vs {want}",
                        case.name
                    );
                }
            }
        }
    }
}
