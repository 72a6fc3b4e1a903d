//! Properties of grouping: merging the partials of shards equals one pass
//! over the shards' events and run records (when no run spans two shards),
//! whatever the order of the lines and however runs fall into shards, with
//! runs that started at the same instant; buffering does not change an
//! in-order result; and counts in equal counts out.

use proptest::prelude::*;
use triage::group::Grouper;
use triage::record::{Batch, EventView, Outcome, Pattern, RunRec};

#[derive(Debug, Clone)]
struct Ev {
    run: u8,
    agent: u8,
    turn: i64,
    ok: bool,
    class: Option<u8>,
    divs: Vec<u8>,
}

const CLASSES: [&str; 3] = ["agent_error", "coordination_failure", "information_lag"];

impl Ev {
    fn json(&self, i: usize) -> String {
        let class = self.class.map_or("null".to_string(), |c| {
            format!("\"{}\"", CLASSES[c as usize])
        });
        let divs: Vec<String> = self.divs.iter().map(|d| format!("\"f{d}\"")).collect();
        format!(
            r#"{{"event_id":"e{i}","run_id":"run{}","turn":{},"step":{i},"agent_id":"a{}","action_taken":{{"tool_name":"t{}"}},"action_succeeded":{},"failure_classification":{class},"divergence_fields":[{}],"timestamp":"2026-04-2{}T10:00:00Z"}}"#,
            self.run,
            self.turn,
            self.agent,
            self.agent % 2,
            self.ok,
            divs.join(","),
            self.run % 3,
        )
    }
}

fn ev_strategy() -> impl Strategy<Value = Ev> {
    (
        0u8..6,
        0u8..3,
        0i64..25,
        any::<bool>(),
        proptest::option::weighted(0.3, 0u8..3),
        proptest::collection::vec(0u8..3, 0..3),
    )
        .prop_map(|(run, agent, turn, ok, class, divs)| Ev {
            run,
            agent,
            turn,
            ok,
            class,
            divs,
        })
}

type Grouped = (Batch, Vec<RunRec>, Vec<Pattern>);

/// A `run` record of run `run`: its outcome as a format states it.
fn run_line(run: u8, outcome: u8) -> String {
    let outcome = ["failed", "succeeded", "unknown"][outcome as usize % 3];
    let reason = if outcome == "failed" {
        r#","reason":"low_score","score":0.0"#
    } else {
        ""
    };
    format!(
        r#"{{"kind":"run","run_id":"run{run}","outcome":"{outcome}"{reason},"task_id":"t{}","trial":{}}}"#,
        run / 2,
        run % 2
    )
}

fn group(lines: &[String], buffer: usize) -> Grouped {
    let mut g = Grouper::with_buffer(3, buffer);
    for l in lines {
        if l.starts_with(r#"{"kind":"run""#) {
            g.add_run(&serde_json::from_str(l).unwrap());
            continue;
        }
        let v: EventView = serde_json::from_str(l).unwrap();
        g.add_event(&v);
    }
    g.finish()
}

fn merge(partials: &[Grouped]) -> Grouped {
    let mut g = Grouper::new(3);
    for (b, runs, ps) in partials {
        // Partials travel as NDJSON between processes.
        let b: Batch = serde_json::from_str(&serde_json::to_string(b).unwrap()).unwrap();
        g.add_batch(&b);
        for r in runs {
            let r: RunRec = serde_json::from_str(&serde_json::to_string(r).unwrap()).unwrap();
            g.add_run(&r);
        }
        for p in ps {
            let p: Pattern = serde_json::from_str(&serde_json::to_string(p).unwrap()).unwrap();
            g.add_pattern(&p);
        }
    }
    g.finish()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn merge_of_shards_equals_one_pass(evs in proptest::collection::vec(ev_strategy(), 0..120), shards in 1usize..4) {
        // Shard by run; the one pass reads the shards one after another.
        let mut by_shard: Vec<Vec<String>> = vec![Vec::new(); shards];
        for (i, e) in evs.iter().enumerate() {
            by_shard[e.run as usize % shards].push(e.json(i));
        }
        let partials: Vec<_> = by_shard.iter().map(|s| group(s, usize::MAX)).collect();
        let merged = merge(&partials);
        let all: Vec<String> = by_shard.concat();
        let one = group(&all, usize::MAX);
        prop_assert_eq!(merged, one);
    }

    #[test]
    fn any_order_and_any_sharding_give_one_answer(
        evs in proptest::collection::vec(ev_strategy(), 1..120),
        outcomes in proptest::collection::vec(0u8..3, 6),
        shard_of_run in proptest::collection::vec(0usize..4, 6),
        order in proptest::collection::vec(any::<u32>(), 126),
    ) {
        // Every run starts at one of three instants, so most runs tie.
        let mut lines: Vec<(u8, String)> = evs.iter().enumerate().map(|(i, e)| (e.run, e.json(i))).collect();
        // Run records of runs with events: a run without any has no time,
        // and keeps its place in the input.
        for (run, o) in outcomes.iter().enumerate() {
            if evs.iter().any(|e| e.run as usize == run) {
                lines.push((run as u8, run_line(run as u8, *o)));
            }
        }
        let one = group(&lines.iter().map(|l| l.1.clone()).collect::<Vec<_>>(), usize::MAX);
        // The same lines shuffled, and cut into shards by run.
        let mut keyed: Vec<(u32, (u8, String))> = lines.into_iter().enumerate().map(|(i, l)| (order[i % order.len()].wrapping_add(i as u32), l)).collect();
        keyed.sort_by_key(|(k, _)| *k);
        let shuffled: Vec<(u8, String)> = keyed.into_iter().map(|(_, l)| l).collect();
        let all: Vec<String> = shuffled.iter().map(|l| l.1.clone()).collect();
        prop_assert_eq!(&group(&all, usize::MAX), &one);
        let mut shards: Vec<Vec<String>> = vec![Vec::new(); 4];
        for (run, line) in &shuffled {
            shards[shard_of_run[*run as usize]].push(line.clone());
        }
        let partials: Vec<Grouped> = shards.iter().map(|s| group(s, usize::MAX)).collect();
        let merged = merge(&partials);
        prop_assert_eq!(&merged, &one);
        let failed = merged.1.iter().filter(|r| r.outcome == Outcome::Failed).count() as u64;
        prop_assert_eq!(merged.0.runs_failed, failed);
    }

    #[test]
    fn counts_in_equal_counts_out(evs in proptest::collection::vec(ev_strategy(), 0..150)) {
        let lines: Vec<String> = evs.iter().enumerate().map(|(i, e)| e.json(i)).collect();
        let (batch, runs, patterns) = group(&lines, usize::MAX);
        prop_assert_eq!(runs.iter().map(|r| r.failure_events.unwrap()).sum::<u64>(), batch.failures_total);
        prop_assert_eq!(batch.events_total, evs.len() as u64);
        let failures = evs.iter().filter(|e| !e.ok || e.class.is_some()).count() as u64;
        prop_assert_eq!(batch.failures_total, failures);
        prop_assert_eq!(patterns.iter().map(|p| p.frequency).sum::<u64>(), failures);
        for p in &patterns {
            prop_assert!(p.recovered + p.tail_unrecovered <= p.frequency);
            prop_assert_eq!(p.run_counts.0.iter().map(|(_, n)| n).sum::<u64>(), p.frequency);
        }
    }

    #[test]
    fn streaming_equals_buffering_when_runs_come_in_turn_order(evs in proptest::collection::vec(ev_strategy(), 0..150), buffer in 0usize..40) {
        let mut evs = evs;
        evs.sort_by_key(|e| (e.run, e.turn));
        let lines: Vec<String> = evs.iter().enumerate().map(|(i, e)| e.json(i)).collect();
        prop_assert_eq!(group(&lines, buffer), group(&lines, usize::MAX));
    }
}
