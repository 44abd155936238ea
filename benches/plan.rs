//! Benchmark: the plan for a 10,000-pod CloneSet (partition 50%, maxUnavailable 10%, weight
//! priority and a scatter term), median and p99 over N runs. Plain `std::time`, no harness.
//!
//! `cargo bench --bench plan` (add `-- N` to change the run count); `cargo test --bench plan`
//! runs it in the dev profile without a release build. Times are wall-clock: on a loaded machine
//! compare with the process's CPU time (`/usr/bin/time`).

use std::{collections::BTreeMap, hint::black_box, time::Instant};

use k8s_openapi::apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString};
use kruise_tui::kruise::{
    FeatureGates, KruiseVersion,
    plan::{self, Change, Guards, PlanInput, PlanPod, PlanWorkload},
    updatesort::{PriorityStrategy, ScatterTerm, WeightTerm},
};

const PODS: usize = 10_000;
const NOW: i64 = 1_700_000_000;

fn input() -> PlanInput {
    let pods = (0..PODS)
        .map(|i| PlanPod {
            name: format!("web-{i:05}"),
            revision: if i % 10 == 0 { "web-new" } else { "web-old" }.to_owned(),
            phase: "Running".to_owned(),
            node_name: format!("node-{}", i % 300),
            ready: i % 97 != 0,
            ready_since: Some(NOW - (i as i64 * 37) % 86_400),
            in_place_update_ready: true,
            labels: BTreeMap::from([
                ("app".to_owned(), "web".to_owned()),
                ("zone".to_owned(), format!("z{}", i % 3)),
            ]),
            created: Some(NOW - 100_000 + i as i64),
            restarts: (i % 5) as i32,
            ..PlanPod::default()
        })
        .collect();
    PlanInput {
        workload: PlanWorkload {
            namespace: "bench".to_owned(),
            name: "web".to_owned(),
            replicas: PODS as i32,
            partition: Some(IntOrString::String("90%".to_owned())),
            max_unavailable: Some(IntOrString::String("10%".to_owned())),
            current_revision: "web-old".to_owned(),
            update_revision: "web-new".to_owned(),
            strategy_type: "InPlaceIfPossible".to_owned(),
            priority: Some(PriorityStrategy {
                weight_priority: vec![WeightTerm {
                    weight: 50,
                    match_selector: LabelSelector {
                        match_labels: Some(BTreeMap::from([("zone".to_owned(), "z1".to_owned())])),
                        match_expressions: None,
                    },
                }],
                order_priority: Vec::new(),
            }),
            scatter: vec![ScatterTerm {
                key: "zone".to_owned(),
                value: "z2".to_owned(),
            }],
            ..PlanWorkload::default()
        },
        pods,
        change: Change::Partition("50%".to_owned()),
        guards: Guards::default(),
        gates: FeatureGates::new(),
        version: KruiseVersion::V1_8,
        now: NOW,
    }
}

fn main() {
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(50);
    let input = input();
    let warm = plan::plan(&input).expect("the bench input is valid");
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        let p = plan::plan(black_box(&input));
        times.push(start.elapsed());
        black_box(p.ok());
    }
    times.sort();
    let pick = |q: f64| times[((times.len() as f64 - 1.0) * q).round() as usize];
    println!(
        "plan/cloneset {PODS} pods: {} moves ({} next), {runs} runs: median {:.2} ms, p99 {:.2} ms, min {:.2} ms",
        warm.moves.len(),
        warm.next_step().count(),
        pick(0.5).as_secs_f64() * 1e3,
        pick(0.99).as_secs_f64() * 1e3,
        times[0].as_secs_f64() * 1e3,
    );
}
