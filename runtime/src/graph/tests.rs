//! The decode graph's tests: replay against eager runs, re-checks, hazards, leave-out, L2
//! windows.

use super::*;
use crate::testing::{self, testgen};
use crate::{Device, Overrides};
use kiln_ir::ScalarType;
use rand::Rng;

const STEPS: u32 = 100;
const LEN: usize = (STEPS as usize + 1) * 32;

struct Data {
    a: Vec<f32>,
    b: Vec<f32>,
    c: Vec<u32>,
}

fn random_data() -> Data {
    let mut r = rand::thread_rng();
    Data {
        a: (0..LEN).map(|_| r.gen_range(-1.0f32..1.0)).collect(),
        b: (0..LEN).map(|_| r.gen_range(-1.0f32..1.0)).collect(),
        c: (0..STEPS as usize + 1).map(|_| r.gen()).collect(),
    }
}

/// The chain on the host, step by step, with the same roundings (one per operation).
fn reference(d: &Data) -> Data {
    let (mut a, mut b, mut c) = (d.a.clone(), d.b.clone(), d.c.clone());
    for pos in 1..=STEPS as usize {
        for l in 0..32 {
            a[pos * 32 + l] = b[(pos - 1) * 32 + l] * 1.5 + (pos + l) as f32;
        }
        for l in 0..32 {
            b[pos * 32 + l] = a[pos * 32 + l] + b[(pos - 1) * 32 + (l ^ 1)];
        }
        c[pos] = c[pos - 1].wrapping_mul(31).wrapping_add(a[pos * 32].to_bits());
    }
    Data { a, b, c }
}

/// A graph holding `d` in the buffers `a`, `b`, `c`, and no node yet.
fn with_buffers(rt: &Runtime, d: &Data) -> DecodeGraph {
    let dev = rt.device();
    let mut g = DecodeGraph::new();
    g.add_buffer("a", dev.upload(&d.a).unwrap()).unwrap();
    g.add_buffer("b", dev.upload(&d.b).unwrap()).unwrap();
    g.add_buffer("c", dev.upload(&d.c).unwrap()).unwrap();
    g
}

fn graph(rt: &Runtime, d: &Data) -> DecodeGraph {
    let mut g = with_buffers(rt, d);
    let pos = || NodeArgs::new().var("pos", "pos");
    g.add_node(rt, "mix", pos().buffer("a", "a").buffer("b", "b")).unwrap();
    g.add_node(rt, "acc", pos().buffer("a", "a").buffer("b", "b")).unwrap();
    g.add_node(rt, "count", pos().buffer("a", "a").buffer("c", "c")).unwrap();
    g
}

fn bits(g: &DecodeGraph) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let r = |n: &str| g.buffer(n).unwrap().read_bytes().unwrap();
    (r("a"), r("b"), r("c"))
}

fn replay_equals_eager_bitwise(dev: &Device) {
    let kernels = [testing::mix(), testing::acc(), testing::count()];
    let Some((_d, pkg)) = testing::package_for(dev, &kernels) else { return };
    let rt = Runtime::load_with(dev, &pkg, Overrides::none()).unwrap();
    let data = random_data();

    let mut eager = graph(&rt, &data);
    let order: Vec<String> =
        eager.order().unwrap().iter().map(|&i| eager.petgraph()[i].kernel.clone()).collect();
    assert_eq!(order, ["mix", "acc", "count"]);
    let hz: Vec<String> = eager
        .hazards()
        .iter()
        .map(|(a, b, h)| format!("{}->{} {h}", a.index(), b.index()))
        .collect();
    assert_eq!(hz, ["0->1 RAW on a", "0->1 WAR on b", "0->2 RAW on a"]);
    for pos in 1..=STEPS {
        eager.set_var("pos", pos);
        eager.run(&rt).unwrap();
    }

    let mut g = graph(&rt, &data);
    g.set_var("pos", 1u32);
    let mut cap = g.capture(&rt).unwrap();
    assert_eq!(cap.len(), 3);
    for pos in 1..=STEPS {
        cap.set_var("pos", pos).unwrap();
        cap.replay().unwrap();
    }
    assert_eq!(bits(&g), bits(&eager), "graph replay differs from the eager run");

    let want = reference(&data);
    let (a, b, c) = bits(&g);
    assert_eq!(a, crate::value::to_bytes(&want.a));
    assert_eq!(b, crate::value::to_bytes(&want.b));
    assert_eq!(c, crate::value::to_bytes(&want.c));

    // A replay is checked like a launch: a position past the buffers replays nothing.
    cap.set_var("pos", STEPS + 1).unwrap();
    let e = cap.replay().unwrap_err();
    assert!(e.to_string().contains("buffer `a` has 3232 elements, needs at least 3264"), "{e}");
    assert_eq!(bits(&g), (a, b, c));
    assert!(cap.set_var("nope", 1u32).is_err());
}

/// A replay re-checks only the nodes whose variables changed, and still runs every node.
fn replay_rechecks_only_changed_nodes(dev: &Device) {
    let kernels = [testing::mix(), testing::acc(), testing::count()];
    let Some((_d, pkg)) = testing::package_for(dev, &kernels) else { return };
    let rt = Runtime::load_with(dev, &pkg, Overrides::none()).unwrap();
    let data = random_data();
    let build = || {
        let mut g = with_buffers(&rt, &data);
        // `mix` and `count` follow `pos`; `acc` always works on position `fixed`.
        let pos = NodeArgs::new().var("pos", "pos");
        g.add_node(&rt, "mix", pos.buffer("a", "a").buffer("b", "b")).unwrap();
        let fixed = NodeArgs::new().var("pos", "fixed");
        g.add_node(&rt, "acc", fixed.buffer("a", "a").buffer("b", "b")).unwrap();
        let pos = NodeArgs::new().var("pos", "pos");
        g.add_node(&rt, "count", pos.buffer("a", "a").buffer("c", "c")).unwrap();
        g
    };
    let steps = [3u32, 3, 3, 7, 7, 2, 2, 2];
    let mut eager = build();
    eager.set_var("fixed", 5u32);
    let mut g = build();
    g.set_var("fixed", 5u32);
    g.set_var("pos", 3u32);
    let mut cap = g.capture(&rt).unwrap();
    let mut prev = 3;
    for &p in &steps {
        eager.set_var("pos", p);
        eager.run(&rt).unwrap();
        cap.set_var("pos", p).unwrap();
        cap.replay().unwrap();
        let want = if p == prev { 0 } else { 2 };
        assert_eq!(cap.rechecked(), want, "pos {prev} -> {p}");
        prev = p;
    }
    cap.set_var("fixed", 5u32).unwrap();
    cap.replay().unwrap();
    assert_eq!(cap.rechecked(), 0, "the same value is no change");
    eager.run(&rt).unwrap();
    cap.set_var("fixed", 6u32).unwrap();
    cap.replay().unwrap();
    assert_eq!(cap.rechecked(), 1);
    eager.set_var("fixed", 6u32);
    eager.run(&rt).unwrap();
    assert_eq!(bits(&g), bits(&eager), "replays with unchanged variables differ from eager");

    // A refused replay changes nothing and keeps the variable pending: the next good value
    // re-checks its nodes again.
    let before = bits(&g);
    cap.set_var("pos", STEPS + 1).unwrap();
    assert!(cap.replay().is_err());
    assert_eq!(bits(&g), before);
    assert!(cap.replay().is_err(), "still the refused value");
    cap.set_var("pos", 4u32).unwrap();
    cap.replay().unwrap();
    assert_eq!(cap.rechecked(), 2);
    eager.set_var("pos", 4u32);
    eager.run(&rt).unwrap();
    assert_eq!(bits(&g), bits(&eager));
}

/// `update` does a replay's host work and no launch: nothing runs, the next replay with the
/// same variables re-checks nothing more and runs what an eager run does; a refused update
/// leaves the graph as it was and the next good replay still re-checks.
fn update_prepares_the_next_replay_without_running(dev: &Device) {
    let kernels = [testing::mix(), testing::count()];
    let Some((_d, pkg)) = testing::package_for(dev, &kernels) else { return };
    let rt = Runtime::load_with(dev, &pkg, Overrides::none()).unwrap();
    let data = random_data();
    let build = || {
        let mut g = with_buffers(&rt, &data);
        let pos = NodeArgs::new().var("pos", "pos");
        g.add_node(&rt, "mix", pos.buffer("a", "a").buffer("b", "b")).unwrap();
        let pos = NodeArgs::new().var("pos", "pos");
        g.add_node(&rt, "count", pos.buffer("a", "a").buffer("c", "c")).unwrap();
        g
    };
    let mut eager = build();
    let mut g = build();
    g.set_var("pos", 3u32);
    let mut cap = g.capture(&rt).unwrap();
    cap.replay().unwrap();
    eager.set_var("pos", 3u32);
    eager.run(&rt).unwrap();
    let mut prev = 3;
    for p in [9u32, 10, 10, 2] {
        let before = bits(&g);
        cap.set_var("pos", p).unwrap();
        cap.update().unwrap();
        rt.synchronize().unwrap();
        assert_eq!(bits(&g), before, "an update ran something (pos {p})");
        cap.replay().unwrap();
        assert_eq!(cap.rechecked(), if p == prev { 0 } else { 2 }, "pos {prev} -> {p}");
        prev = p;
        eager.set_var("pos", p);
        eager.run(&rt).unwrap();
        assert_eq!(bits(&g), bits(&eager), "update then replay differs from eager at pos {p}");
    }
    // Updated at 11, replayed with nothing changed since: the two re-checks are the update's.
    cap.set_var("pos", 11u32).unwrap();
    cap.update().unwrap();
    cap.replay().unwrap();
    assert_eq!(cap.rechecked(), 2);
    eager.set_var("pos", 11u32);
    eager.run(&rt).unwrap();
    let before = bits(&g);
    cap.set_var("pos", STEPS + 1).unwrap();
    assert!(cap.update().is_err());
    rt.synchronize().unwrap();
    assert_eq!(bits(&g), before);
    cap.set_var("pos", 5u32).unwrap();
    cap.replay().unwrap();
    assert_eq!(cap.rechecked(), 2);
    eager.set_var("pos", 5u32);
    eager.run(&rt).unwrap();
    assert_eq!(bits(&g), bits(&eager));
}

/// Under an L2 window (streaming, then a persisting one larger than any set-aside part)
/// launches and a captured graph give the reference's bits; the window is cut to what the
/// device takes, windows no device takes are refused, and clearing it works. Only cuda
/// applies a window; the others answer that it was ignored.
fn an_l2_window_changes_no_result(dev: &Device) {
    use crate::device::{L2Access, L2Applied, L2Window};
    let kernels = [testing::mix(), testing::acc(), testing::count()];
    let Some((_d, pkg)) = testing::package_for(dev, &kernels) else { return };
    let rt = Runtime::load_with(dev, &pkg, Overrides::none()).unwrap();
    let data = random_data();
    let want = reference(&data);
    let expect = |g: &DecodeGraph| {
        let (a, b, c) = bits(g);
        assert_eq!(a, crate::value::to_bytes(&want.a));
        assert_eq!(b, crate::value::to_bytes(&want.b));
        assert_eq!(c, crate::value::to_bytes(&want.c));
    };
    for bad in [
        L2Window::streaming(4096, 0),
        L2Window::streaming(u64::MAX - 8, 64),
        L2Window::persisting(4096, 64, f32::NAN),
        L2Window::persisting(4096, 64, 1.5),
    ] {
        let e = dev.set_l2_window(Some(bad)).unwrap_err().to_string();
        assert!(e.starts_with("bad L2 window"), "{e}");
    }
    let a = dev.alloc(ScalarType::U8, 1).unwrap();
    let g = graph(&rt, &data);
    let span = g.buffer("a").unwrap();
    let windows = [
        L2Window::streaming(span.device_address(), span.bytes() as u64),
        // 1 TiB: past every device's largest window and set-aside part.
        L2Window::persisting(a.device_address(), 1 << 40, 1.0),
    ];
    for w in windows {
        let applied = dev.set_l2_window(Some(w)).unwrap();
        match (dev.kind(), applied) {
            (crate::DeviceKind::Cuda, L2Applied::Applied { window, max_window, set_aside }) => {
                assert_eq!(window.bytes, w.bytes.min(max_window));
                assert!(window.hit_ratio <= w.hit_ratio);
                let persists = w.hit == L2Access::Persisting;
                assert_eq!(set_aside > 0, persists, "{applied:?}");
                if persists {
                    let share = window.bytes as f64 * f64::from(window.hit_ratio);
                    assert!(share <= set_aside as f64 + 1.0, "{applied:?}");
                }
            }
            (crate::DeviceKind::Cuda, other) => {
                panic!("not applied on an sm_80+ GPU: {other:?}")
            }
            (_, applied) => assert_eq!(applied, L2Applied::Ignored),
        }
        let mut eager = graph(&rt, &data);
        let mut g = graph(&rt, &data);
        g.set_var("pos", 1u32);
        let mut cap = g.capture(&rt).unwrap();
        for pos in 1..=STEPS {
            eager.set_var("pos", pos);
            eager.run(&rt).unwrap();
            cap.set_var("pos", pos).unwrap();
            cap.replay().unwrap();
        }
        expect(&eager);
        expect(&g);
    }
    let cleared = dev.set_l2_window(None).unwrap();
    let on_cuda = dev.kind() == crate::DeviceKind::Cuda;
    assert_eq!(cleared, if on_cuda { L2Applied::Cleared } else { L2Applied::Ignored });
    let mut eager = graph(&rt, &data);
    for pos in 1..=STEPS {
        eager.set_var("pos", pos);
        eager.run(&rt).unwrap();
    }
    expect(&eager);
}

testgen!(
    replay_equals_eager_bitwise,
    replay_rechecks_only_changed_nodes,
    update_prepares_the_next_replay_without_running,
    an_l2_window_changes_no_result
);

/// The hazard edges of a random graph are exactly those of the pairwise definition: every
/// earlier node that writes what a node reads, reads what it writes, or writes what it writes.
#[test]
fn hazards_match_the_pairwise_definition() {
    let dev = Device::cpu(Default::default());
    let kernels = [testing::mix(), testing::acc(), testing::count()];
    let (_d, pkg) = testing::package_for(&dev, &kernels).unwrap();
    let rt = Runtime::load_with(&dev, &pkg, Overrides::none()).unwrap();
    let mut g = DecodeGraph::new();
    for name in ["p", "q", "r", "s", "t"] {
        g.add_buffer(name, dev.alloc(ScalarType::F32, 64).unwrap()).unwrap();
    }
    g.add_buffer("c", dev.alloc(ScalarType::U32, 4).unwrap()).unwrap();
    let mut r = rand::thread_rng();
    // Two different buffers: one buffer as `a` and `b` is refused (a writer aliases).
    let names = ["p", "q", "r", "s", "t"];
    for _ in 0..80 {
        let i = r.gen_range(0..5);
        let (a, b) = (names[i], names[(i + r.gen_range(1..5)) % 5]);
        let args = NodeArgs::new().scalar("pos", 1u32).buffer("a", a);
        match r.gen_range(0..3) {
            0 => g.add_node(&rt, "mix", args.buffer("b", b)).unwrap(),
            1 => g.add_node(&rt, "acc", args.buffer("b", b)).unwrap(),
            _ => g.add_node(&rt, "count", args.buffer("c", "c")).unwrap(),
        };
    }
    let nodes: Vec<&Node> = g.nodes().map(|(_, n)| n).collect();
    let mut want = vec![];
    for i in 0..nodes.len() {
        for j in 0..i {
            let (a, b) = (nodes[j], nodes[i]);
            for buf in a.writes.intersection(&b.reads) {
                want.push((j, i, HazardKind::ReadAfterWrite, buf.clone()));
            }
            for buf in a.reads.intersection(&b.writes) {
                want.push((j, i, HazardKind::WriteAfterRead, buf.clone()));
            }
            for buf in a.writes.intersection(&b.writes) {
                want.push((j, i, HazardKind::WriteAfterWrite, buf.clone()));
            }
        }
    }
    let mut got: Vec<_> = g
        .hazards()
        .into_iter()
        .map(|(a, b, h)| (a.index(), b.index(), h.kind, h.buffer.clone()))
        .collect();
    got.sort_by_key(|x| (x.1, x.0));
    want.sort_by_key(|x| (x.1, x.0));
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

/// Leaving a kernel out rebuilds the other nodes with the hazards they have among
/// themselves, and `leave_out` gives one row a kernel, in the order of its first node; a
/// kernel that is every node leaves nothing to time.
#[test]
fn leave_out_drops_one_kernel_at_a_time() {
    let dev = Device::cpu(Default::default());
    let kernels = [testing::mix(), testing::acc(), testing::count()];
    let (_d, pkg) = testing::package_for(&dev, &kernels).unwrap();
    let rt = Runtime::load_with(&dev, &pkg, Overrides::none()).unwrap();
    let data = random_data();
    let mut g = graph(&rt, &data);
    g.add_node(&rt, "mix", NodeArgs::new().var("pos", "pos").buffer("a", "a").buffer("b", "b"))
        .unwrap();
    g.set_var("pos", 2u32);
    let edges = |g: &DecodeGraph| -> Vec<String> {
        let name = |i: NodeIndex| g.petgraph()[i].kernel.clone();
        g.hazards().iter().map(|(a, b, h)| format!("{}->{} {h}", name(*a), name(*b))).collect()
    };
    let no_mix = g.without_kernel(&rt, "mix").unwrap();
    let kinds: Vec<_> = no_mix.nodes().map(|(_, n)| n.kernel.clone()).collect();
    assert_eq!(kinds, ["acc", "count"]);
    assert!(edges(&no_mix).is_empty(), "{:?}", edges(&no_mix));
    let no_acc = g.without_kernel(&rt, "acc").unwrap();
    assert_eq!(edges(&no_acc), ["mix->count RAW on a", "mix->mix WAW on a", "count->mix WAR on a"]);
    assert_eq!(no_acc.var("pos"), Some(2u32.into()));

    let lo = g.leave_out(&rt, 1, 0, 1).unwrap();
    let rows: Vec<_> = lo.kernels.iter().map(|k| (k.kernel.as_str(), k.nodes)).collect();
    assert_eq!(rows, [("mix", 2), ("acc", 1), ("count", 1)]);
    assert!(lo.whole_us > 0.0 && lo.kernels.iter().all(|k| k.without_us > 0.0), "{lo:?}");

    let mut one = DecodeGraph::new();
    one.add_buffer("a", dev.upload(&data.a).unwrap()).unwrap();
    one.add_buffer("b", dev.upload(&data.b).unwrap()).unwrap();
    one.set_var("pos", 1u32);
    let args = NodeArgs::new().var("pos", "pos").buffer("a", "a").buffer("b", "b");
    one.add_node(&rt, "mix", args).unwrap();
    let lo = one.leave_out(&rt, 2, 0, 1).unwrap();
    assert_eq!(lo.kernels.len(), 1);
    assert_eq!(lo.kernels[0].without_us, 0.0);
    assert_eq!(lo.in_step_us(&lo.kernels[0]), lo.whole_us);
}

#[test]
fn unset_variables_and_unknown_buffers_are_errors() {
    let dev = Device::cpu(Default::default());
    let (_d, pkg) = testing::package_for(&dev, &[testing::mix()]).unwrap();
    let rt = Runtime::load_with(&dev, &pkg, Overrides::none()).unwrap();
    let mut g = DecodeGraph::new();
    g.add_buffer("a", dev.alloc(ScalarType::F32, 64).unwrap()).unwrap();
    assert!(g.add_buffer("a", dev.alloc(ScalarType::F32, 1).unwrap()).is_err());
    let e = g.add_node(&rt, "mix", NodeArgs::new().buffer("a", "a").buffer("b", "zz")).unwrap_err();
    assert!(e.to_string().contains("no buffer `zz` in the graph"), "{e}");
    g.add_buffer("b", dev.alloc(ScalarType::F32, 64).unwrap()).unwrap();
    let e = g.add_node(&rt, "mix", NodeArgs::new().buffer("pos", "a")).unwrap_err();
    assert!(e.to_string().contains("`pos` is not a buffer parameter"), "{e}");
    g.add_node(&rt, "mix", NodeArgs::new().buffer("a", "a").buffer("b", "b").var("pos", "pos"))
        .unwrap();
    let e = g.run(&rt).unwrap_err();
    assert!(e.to_string().contains("variable `pos` (for `pos`) has no value"), "{e}");
}

/// A node whose written buffer parameter overlaps another of its buffer parameters (the
/// same name twice, or two names for one buffer) is refused when it is added, naming the
/// node, the kernel and both parameters; nothing is added.
#[test]
fn aliased_nodes_are_refused_when_added() {
    let dev = Device::cpu(Default::default());
    let (_d, pkg) = testing::package_for(&dev, &[testing::mix()]).unwrap();
    let rt = Runtime::load_with(&dev, &pkg, Overrides::none()).unwrap();
    let mut g = DecodeGraph::new();
    let x = dev.alloc(ScalarType::F32, 64).unwrap();
    g.add_buffer("x", x.clone()).unwrap();
    g.add_buffer("also_x", x).unwrap();
    g.add_buffer("y", dev.alloc(ScalarType::F32, 64).unwrap()).unwrap();
    for other in ["x", "also_x"] {
        let args = NodeArgs::new().buffer("a", "x").buffer("b", other).scalar("pos", 1u32);
        let e = g.add_node(&rt, "mix", args).unwrap_err();
        assert!(matches!(e, RuntimeError::Launch(crate::LaunchError::Aliased { .. })), "{e}");
        let text = e.to_string();
        assert!(
            text.contains(
                "node 0 (mix): `a` and `b` are bound to overlapping memory and `a` is written"
            ),
            "{text}"
        );
    }
    assert_eq!(g.nodes().count(), 0, "a refused node was added");
    g.add_node(&rt, "mix", NodeArgs::new().buffer("a", "x").buffer("b", "y").scalar("pos", 1u32))
        .unwrap();
}
