//! Every variant of every family builds and passes the verifier for every arch of the build
//! matrix, at every wave size the arch runs.

use kiln_ir::{verify, Target};
use kiln_specs::{build_matrix, library};

#[test]
fn every_variant_verifies_on_every_arch() {
    let mut failures = vec![];
    let mut checked = 0;
    for arch in build_matrix().archs {
        let target = Target::by_name(&arch).expect("build.ron names known archs");
        for &wave in target.wave_sizes {
            for family in library() {
                for v in &family.variants {
                    let k = (v.build)(target, wave);
                    assert_eq!(k.wave_size, wave);
                    if let Err(e) = verify(&k, Some(target)) {
                        failures.push(format!(
                            "{}/{} on {arch} wave {wave}:\n{e}",
                            family.name, v.name
                        ));
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(checked > 0);
}

#[test]
fn family_names_are_unique_and_baseline_first() {
    let lib = library();
    let mut names: Vec<_> = lib.iter().map(|f| f.name).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), lib.len());
    for f in &lib {
        assert_eq!(f.baseline().name, "baseline", "{}", f.name);
    }
}

#[test]
fn kernels_round_trip_through_ron() {
    let t = Target::by_name("gfx1100").unwrap();
    for family in library() {
        for v in &family.variants {
            let k = (v.build)(t, 32);
            let back = kiln_ir::Kernel::from_ron(&k.to_ron()).unwrap();
            assert_eq!(back, k, "{}/{}", family.name, v.name);
        }
    }
}
