//! `kiln tune` end to end through the real binary (the cpu device: its times mean nothing,
//! the path is what is checked).
#![cfg(feature = "llvm")]

mod common;

use common::{write_f32, Env};
use kiln_runtime::Package;

/// `kiln tune` on the cpu device, end to end: candidates built, gated, a run stopped by its
/// budget resumed by the same command, the tuning file written with provenance; then a build
/// with that file routes the bucket to its tuned variant on that arch only, and the router's
/// explanation says so (and says "default" elsewhere). The cpu device's times mean nothing;
/// the path is what is checked.
#[test]
fn tune_gates_times_resumes_and_a_build_routes_to_the_winner() {
    let env = Env::new();
    let tune = |budget: &str| {
        env.kiln(&[
            "tune",
            "--device",
            "cpu",
            "--arch",
            "gfx1100",
            "--kernel",
            "row_top_prob",
            "--shapes",
            "rows1_nlo",
            "--candidates",
            "cand",
            "--out",
            "gfx1100.ron",
            "--replays",
            "1",
            "--budget-s",
            budget,
        ])
        .ok()
    };
    let first = tune("0");
    assert!(first.stdout.contains("budget of 0 s reached"), "{}", first.show());
    assert!(first.stdout.contains("not finished (budget)"), "{}", first.show());
    assert!(
        first.stdout.contains("refused cand_wgs256_subgroups2: not a candidate"),
        "{}",
        first.show()
    );
    assert!(first.stdout.contains("4 of 4 candidates of row_top_prob give the baseline's bits"));
    let log = std::fs::read_to_string(env.path("cand/tune-progress.jsonl")).unwrap();
    assert_eq!(log.lines().filter(|l| l.contains("\"gate\"")).count(), 4, "{log}");
    assert!(!log.contains("\"time\""), "the budget stopped it before any timing: {log}");
    let second = tune("600");
    assert!(!second.stdout.contains("budget of"), "{}", second.show());
    let text = std::fs::read_to_string(env.path("gfx1100.ron")).unwrap();
    let file = kiln_specs::tune::parse_tuning("gfx1100.ron", "gfx1100", &text).unwrap();
    let [entry] = file.entries.as_slice() else { panic!("one entry: {text}") };
    assert_eq!((entry.kernel.as_str(), entry.bucket.as_str()), ("row_top_prob", "rows1_nlo"));
    assert!(entry.provenance.device.contains("cpu") && entry.provenance.date.starts_with("20"));
    assert!(!entry.provenance.llvm.is_empty() && !entry.provenance.kiln.is_empty());
    // The gate ran once: the resumed run kept its verdicts.
    let log = std::fs::read_to_string(env.path("cand/tune-progress.jsonl")).unwrap();
    assert_eq!(log.lines().filter(|l| l.contains("\"gate\"")).count(), 4, "{log}");
    // Force a winner, so the build has a tuned variant whatever the cpu timed.
    let mut forced = file.clone();
    forced.entries[0].knobs = Some(vec![("wgs".into(), 1), ("subgroups".into(), 2)]);
    let forced = ron::ser::to_string_pretty(&forced, Default::default()).unwrap();
    std::fs::write(env.path("forced.ron"), &forced).unwrap();
    env.kiln(&[
        "build",
        "--kernel",
        "row_top_prob",
        "--arch",
        "gfx1100,gfx906",
        "--tuning",
        "forced.ron",
        "-o",
        "pkg",
    ])
    .ok();
    let pkg = Package::open(env.path("pkg")).unwrap();
    assert!(pkg.find("row_top_prob", "tuned_rows1_nlo", "gfx1100").is_some());
    assert!(pkg.find("row_top_prob", "tuned_rows1_nlo", "gfx906").is_none());
    let routes = pkg.routes("row_top_prob").unwrap();
    assert_eq!(routes.tuning.len(), 8, "4 buckets x 2 archs: {:?}", routes.tuning);
    assert_eq!(routes.tuning.iter().filter(|b| b.tuned.is_some()).count(), 1);
    let logits: Vec<f32> = (0..3000).map(|i| ((i * 7919) % 1000) as f32 / 100.0).collect();
    write_f32(&env.path("logits.npy"), &[3000], &logits);
    let run = |arch: &str, rows: &str| {
        env.kiln(&[
            "run",
            "row_top_prob",
            "--package",
            "pkg",
            "--arch",
            arch,
            "--arg",
            "logits=logits.npy",
            "--shape",
            &format!("rows={rows}"),
            "--shape",
            &format!("n={}", 3000 / rows.parse::<usize>().unwrap()),
            "--out",
            "o",
        ])
        .ok()
        .stderr
    };
    let tuned = run("gfx1100", "1");
    assert!(tuned.contains("tuned: bucket `rows1_nlo` of gfx1100 (wgs=1 subgroups=2)"), "{tuned}");
    let other_bucket = run("gfx1100", "3");
    assert!(
        other_bucket.contains("default: no tuned bucket of gfx1100 admits the call"),
        "{other_bucket}"
    );
    let other_arch = run("gfx906", "1");
    assert!(other_arch.contains("default: row_top_prob is untuned on gfx906"), "{other_arch}");
    // A tuning file with knobs outside the space is refused, naming the file and the entry.
    std::fs::write(env.path("bad.ron"), forced.replace("(\"subgroups\", 2)", "(\"subgroups\", 3)"))
        .unwrap();
    let e = env
        .kiln(&[
            "build",
            "--kernel",
            "row_top_prob",
            "--arch",
            "gfx1100",
            "--tuning",
            "bad.ron",
            "-o",
            "pkg2",
        ])
        .fails();
    assert!(e.contains("bad.ron: entry 0") && e.contains("subgroups=3"), "{e}");
}
