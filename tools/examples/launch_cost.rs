//! Prints the launch cost of the trivial kernel on a device: eager launches against graph
//! replays, with and without a scalar update per replay.
//!
//! `cargo run --release -p kiln --example launch_cost -- [cpu|cuda|hip] [NODES] [REPLAYS]`

use kiln::measure::launch_cost as bench;
use kiln_runtime::{Device, DeviceKind};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let kind: DeviceKind = args.next().as_deref().unwrap_or("cuda").parse()?;
    let nodes: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(64);
    let replays: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(200);
    let dev = Device::open(kind, 0)?;
    let c = bench::launch_cost(&dev, nodes, replays)?;
    println!("device: {}", c.device);
    println!("nodes: {}, replays: {}", c.nodes, c.replays);
    println!("eager launch:                 {:8.3} us/node", c.eager_us_per_node);
    println!("eager, checked once:          {:8.3} us/node", c.prepared_us_per_node);
    println!("graph replay:                 {:8.3} us/node", c.graph_us_per_node);
    println!("graph replay, scalar updated: {:8.3} us/node", c.graph_update_us_per_node);
    Ok(())
}
