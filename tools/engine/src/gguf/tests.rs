//! The reader against a file written by the `gguf` package (`scripts/engine-tiny-gguf.py`), and
//! against hand-made headers: every truncation, corrupt counts and types, bad tensor places.

use super::*;

const TINY: &[u8] = include_bytes!("../../tests/data/tiny.gguf");

#[test]
fn reads_the_gguf_packages_file() {
    let (version, md, tensors) = parse(TINY).unwrap();
    assert_eq!(version, 3);
    assert_eq!(md["general.architecture"], Value::Str("llama".into()));
    assert_eq!(md["t.u8"], Value::U8(200));
    assert_eq!(md["t.i8"], Value::I8(-7));
    assert_eq!(md["t.u16"], Value::U16(60000));
    assert_eq!(md["t.i16"], Value::I16(-30000));
    assert_eq!(md["t.u32"], Value::U32(4_000_000_000));
    assert_eq!(md["t.i32"], Value::I32(-2_000_000_000));
    assert_eq!(md["t.f32"], Value::F32(1.5));
    assert_eq!(md["t.bool"], Value::Bool(true));
    assert_eq!(md["t.str"], Value::Str("héllo".into()));
    let arr = ["a", "Ġb", "c d"].map(|s| Value::Str(s.into())).to_vec();
    assert_eq!(md["t.arr"], Value::Array(arr));
    assert_eq!(md["t.u64"], Value::U64(1 << 40));
    assert_eq!(md["t.i64"], Value::I64(-(1 << 40)));
    assert_eq!(md["t.f64"], Value::F64(0.25));
    let names: Vec<_> = tensors.iter().map(|t| (t.name.as_str(), t.ty, t.dims.clone())).collect();
    assert_eq!(
        names,
        [
            ("a", GgmlType::F32, vec![4, 2]),
            ("b", GgmlType::Q8_0, vec![32, 2]),
            ("c", GgmlType::Q4_1, vec![64, 1])
        ]
    );
    let a = &tensors[0];
    let vals: Vec<f32> = TINY[a.start as usize..(a.start + a.bytes) as usize]
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(vals, (0..8).map(|i| i as f32).collect::<Vec<_>>());
    // Q8_0 row of linspace(-1, 1): d = 1/127 as f16, first quant -127.
    let b = &tensors[1];
    assert_eq!(b.bytes, 2 * 34);
    let d = half::f16::from_le_bytes([TINY[b.start as usize], TINY[b.start as usize + 1]]);
    assert!((d.to_f32() - 1.0 / 127.0).abs() < 1e-5, "{d}");
    assert_eq!(TINY[b.start as usize + 2] as i8, -127);
    // Q4_1 of linspace(0, 3): the first block's min is 0.
    let c = &tensors[2];
    assert_eq!(c.bytes, 2 * 20);
    let m = half::f16::from_le_bytes([TINY[c.start as usize + 2], TINY[c.start as usize + 3]]);
    assert_eq!(m.to_f32(), 0.0);
}

#[test]
fn open_maps_the_file_and_names_it_when_missing() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.gguf");
    std::fs::write(&p, TINY).unwrap();
    let g = Gguf::open(&p).unwrap();
    let t = g.tensor("a").unwrap().clone();
    assert_eq!(g.data(&t).len(), 32);
    assert_eq!(g.get("t.str").and_then(Value::as_str), Some("héllo"));
    let e = Gguf::open(dir.path().join("absent.gguf")).unwrap_err();
    assert!(e.to_string().contains("absent.gguf"), "{e}");
}

#[test]
fn every_truncation_is_refused_with_its_offset() {
    // Every prefix of the file: the header prefixes are truncations at or before the cut; the
    // ones that keep the header but cut tensor data name the tensor past the end.
    let (.., tensors) = parse(TINY).unwrap();
    let header_end = tensors[0].start as usize;
    let data_end = tensors.iter().map(|t| t.start + t.bytes).max().unwrap() as usize;
    for cut in 0..TINY.len() {
        // The writer pads the file after the last tensor: those cuts lose nothing.
        if cut >= data_end {
            assert!(parse(&TINY[..cut]).is_ok(), "cut {cut}");
            continue;
        }
        let e = parse(&TINY[..cut]).unwrap_err();
        match &e {
            GgufError::Truncated { offset, left, .. } => {
                assert!(cut < header_end, "cut {cut}: {e}");
                assert!(*offset as usize <= cut && *left as usize == cut - *offset as usize);
            }
            GgufError::TensorData { why, .. } => {
                assert!(why.contains("past the end"), "cut {cut}: {e}");
            }
            other => panic!("cut {cut}: unexpected {other}"),
        }
    }
}

/// A hand-made GGUF: `kvs` as raw (key, type, value bytes), tensors as (name, dims, type,
/// offset), then `data` bytes after alignment to 32.
fn file(
    kvs: &[(&str, u32, Vec<u8>)],
    tensors: &[(&str, &[u64], u32, u64)],
    data: usize,
) -> Vec<u8> {
    let mut v = b"GGUF".to_vec();
    v.extend(3u32.to_le_bytes());
    v.extend((tensors.len() as u64).to_le_bytes());
    v.extend((kvs.len() as u64).to_le_bytes());
    let s = |v: &mut Vec<u8>, s: &str| {
        v.extend((s.len() as u64).to_le_bytes());
        v.extend(s.as_bytes());
    };
    for (k, ty, val) in kvs {
        s(&mut v, k);
        v.extend(ty.to_le_bytes());
        v.extend(val);
    }
    for (name, dims, ty, off) in tensors {
        s(&mut v, name);
        v.extend((dims.len() as u32).to_le_bytes());
        for d in *dims {
            v.extend(d.to_le_bytes());
        }
        v.extend(ty.to_le_bytes());
        v.extend(off.to_le_bytes());
    }
    v.resize(v.len().div_ceil(32) * 32 + data, 0);
    v
}

#[test]
fn corrupt_headers_are_refused_with_what_and_where() {
    let e = parse(b"GGML\x03\0\0\0").unwrap_err();
    assert!(matches!(e, GgufError::BadMagic { .. }), "{e}");
    let mut f = file(&[], &[], 0);
    f[4] = 9;
    assert!(matches!(parse(&f).unwrap_err(), GgufError::Version(9)));
    // A value type GGUF does not define, at the offset of the type.
    let f = file(&[("k", 13, vec![0; 4])], &[], 0);
    match parse(&f).unwrap_err() {
        GgufError::ValueType { what, offset, ty } => {
            assert_eq!((what.as_str(), offset, ty), ("`k`", 24 + 8 + 1, 13));
        }
        e => panic!("{e}"),
    }
    // An array claiming 2^40 elements: refused as a truncation before any allocation.
    let mut arr = 4u32.to_le_bytes().to_vec();
    arr.extend((1u64 << 40).to_le_bytes());
    let e = parse(&file(&[("big", 9, arr)], &[], 0)).unwrap_err();
    assert!(matches!(e, GgufError::Truncated { need, .. } if need == 1 << 40), "{e}");
    // A string that is not UTF-8.
    let mut bad = 2u64.to_le_bytes().to_vec();
    bad.extend([0xff, 0xfe]);
    let e = parse(&file(&[("s", 8, bad)], &[], 0)).unwrap_err();
    assert!(matches!(e, GgufError::Utf8 { .. }), "{e}");
    // Duplicate keys.
    let e = parse(&file(&[("k", 4, vec![1; 4]), ("k", 4, vec![2; 4])], &[], 0)).unwrap_err();
    assert!(matches!(e, GgufError::Duplicate { what: "metadata key", .. }), "{e}");
    // Alignment 24.
    let e = parse(&file(&[("general.alignment", 4, 24u32.to_le_bytes().to_vec())], &[], 0));
    assert!(matches!(e.unwrap_err(), GgufError::Alignment(24)));
}

#[test]
fn bad_tensors_are_refused_naming_the_tensor() {
    let ok = file(&[], &[("w", &[32, 2], 8, 0)], 68);
    assert_eq!(parse(&ok).unwrap().2[0].bytes, 68);
    // Q6_K (14): named by ggml's name and id, with the supported list.
    let e = parse(&file(&[], &[("w", &[256], 14, 0)], 210)).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("`w`") && msg.contains("Q6_K") && msg.contains("Q4_1 (3)"), "{msg}");
    // A row that is not whole blocks.
    let e = parse(&file(&[], &[("w", &[48, 1], 8, 0)], 68)).unwrap_err();
    assert!(matches!(e, GgufError::PartialBlock { row: 48, block: 32, .. }), "{e}");
    // Data past the end, misaligned data, overflowing dims, 0 or 5 dims, duplicate names.
    let e = parse(&file(&[], &[("w", &[32, 2], 8, 0)], 67)).unwrap_err();
    assert!(matches!(e, GgufError::TensorData { ref why, .. } if why.contains("past the end")));
    let e = parse(&file(&[], &[("w", &[32, 1], 8, 4)], 68)).unwrap_err();
    assert!(matches!(e, GgufError::TensorData { ref why, .. } if why.contains("aligned")));
    let e = parse(&file(&[], &[("w", &[1 << 40, 1 << 40], 0, 0)], 0)).unwrap_err();
    assert!(matches!(e, GgufError::TensorData { ref why, .. } if why.contains("overflows")));
    for dims in [&[][..], &[1, 1, 1, 1, 1]] {
        let e = parse(&file(&[], &[("w", dims, 0, 0)], 4)).unwrap_err();
        assert!(matches!(e, GgufError::Dims { .. }), "{e}");
    }
    let e = parse(&file(&[], &[("w", &[1], 0, 0), ("w", &[1], 0, 32)], 64)).unwrap_err();
    assert!(matches!(e, GgufError::Duplicate { what: "tensor", .. }), "{e}");
}

#[test]
fn random_corruption_never_panics() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(16);
    for _ in 0..2000 {
        let mut f = TINY.to_vec();
        for _ in 0..rng.gen_range(1..4) {
            let i = rng.gen_range(0..f.len());
            f[i] = rng.gen();
        }
        // Ok or a refusal; what matters is no panic and no huge allocation.
        let _ = parse(&f);
    }
}
