//! Tests of `group`.

use super::*;
use crate::plumbing::intern::Interner;

#[test]
fn latency_counts_keep_every_offset() {
    let mut counts = LatencyCounts::default();
    for (offset, n) in [(3, 1), (1, 1), (70, 2), (1, 4), (LatencyCounts::DENSE, 1)] {
        counts.add(offset, n);
    }
    let want = BTreeMap::from([(1, 5), (3, 1), (LatencyCounts::DENSE, 1), (70, 2)]);
    assert_eq!(counts.into_map(), want);
}

fn ev(run: &str, agent: &str, turn: i64, ok: bool, class: Option<&str>) -> String {
    let class = class.map_or("null".to_string(), |c| format!("\"{c}\""));
    format!(
        r#"{{"event_id":"e","run_id":"{run}","turn":{turn},"agent_id":"{agent}","action_taken":{{"tool_name":"t"}},"action_succeeded":{ok},"failure_classification":{class}}}"#
    )
}

fn group(lines: &[String], buffer: usize) -> Vec<Pattern> {
    let mut g = Grouper::with_buffer(3, buffer);
    for l in lines {
        let v: EventView = serde_json::from_str(l).unwrap();
        g.add_event(&v);
    }
    g.finish().2
}

/// A signature's fields are a set: order and repeats do not split a
/// pattern, however many fields there are.
#[test]
fn divergence_fields_are_sorted_and_deduplicated() {
    let with = |fields: &[&str]| {
        let list = serde_json::to_string(fields).unwrap();
        ev("r", "a", 1, false, None).replace(
            "\"failure_classification\"",
            &format!("\"divergence_fields\":{list},\"failure_classification\""),
        )
    };
    let many: Vec<String> = (0..12).map(|i| format!("f{:02}", 11 - i)).collect();
    let mut many: Vec<&str> = many.iter().map(String::as_str).collect();
    many.extend(["f03", "f00"]);
    // Steps as triage-parse numbers them: patterns keep first-seen order.
    let lines: Vec<String> = [
        with(&["b", "a", "b"]),
        with(&["a", "b"]),
        with(&many),
        with(&many[2..]),
        with(&[]),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, l)| l.replace("\"turn\"", &format!("\"step\":{i},\"turn\"")))
    .collect();
    let patterns = group(&lines, 100);
    let fields: Vec<(Vec<String>, u64)> = patterns
        .iter()
        .map(|p| (p.divergence_fields.clone(), p.frequency))
        .collect();
    let all: Vec<String> = (0..12).map(|i| format!("f{i:02}")).collect();
    let most: Vec<String> = (0..10).map(|i| format!("f{i:02}")).collect();
    assert_eq!(
        fields,
        vec![
            (vec!["a".to_string(), "b".to_string()], 2),
            (all, 1),
            (most, 1),
            (vec![], 1),
        ]
    );
}

#[test]
fn recovery_offsets_follow_the_reference() {
    // failure at 1; same-turn success does not recover; success at 4 is offset 3.
    let lines = vec![
        ev("r", "a", 1, false, None),
        ev("r", "a", 1, true, None),
        ev("r", "b", 2, true, None),
        ev("r", "a", 4, true, None),
    ];
    for buffer in [0, 100] {
        let p = &group(&lines, buffer)[0];
        assert_eq!(p.frequency, 1);
        assert_eq!(p.recovered, 1, "buffer {buffer}");
        assert_eq!(p.recovery_latencies, BTreeMap::from([(3, 1)]));
        assert_eq!(p.tail_unrecovered, 0);
    }
}

#[test]
fn offset_four_is_outside_the_window_and_eleven_is_tail() {
    let lines = vec![
        ev("r", "a", 0, false, None),
        ev("r", "a", 4, true, None),
        ev("s", "a", 0, false, None),
        ev("s", "a", 11, true, None),
    ];
    let p = &group(&lines, 100)[0];
    assert_eq!(p.frequency, 2);
    assert_eq!(p.recovered, 0);
    assert_eq!(p.tail_unrecovered, 1);
}

#[test]
fn shuffled_lines_are_ordered_by_turn_while_buffering() {
    let lines = vec![
        ev("r", "a", 5, true, None),
        ev("r", "a", 1, false, None),
        ev("r", "a", 2, true, None),
    ];
    let p = &group(&lines, 100)[0];
    assert_eq!(p.recovery_latencies, BTreeMap::from([(1, 1)]));
}

proptest::proptest! {
    /// Whatever the order events arrive in, while buffering each
    /// failure's offset is to the first success of a later turn in its
    /// timeline: logs in order are resolved as they grow, the others
    /// (some after part of them was resolved) once sorted.
    #[test]
    fn buffered_recovery_is_exact_in_any_order(
        events in proptest::collection::vec((0..2usize, 0..6i64, proptest::bool::ANY), 0..40),
    ) {
        let lines: Vec<String> = events
            .iter()
            .map(|&(agent, turn, ok)| ev("r", ["a", "b"][agent], turn, ok, None))
            .collect();
        let mut want = BTreeMap::new();
        for &(agent, turn, ok) in &events {
            let next = events
                .iter()
                .filter(|&&(a, t, s)| a == agent && s && t > turn)
                .map(|e| e.1)
                .min();
            if let (false, Some(next)) = (ok, next) {
                *want.entry((agent, (next - turn) as u64)).or_insert(0) += 1;
            }
        }
        let latencies = |lines: &[String], buffer: usize| {
            let mut got = BTreeMap::new();
            for p in group(lines, buffer) {
                let agent = usize::from(p.agent_id == "b");
                for (offset, n) in p.recovery_latencies {
                    got.insert((agent, offset), n);
                }
            }
            got
        };
        proptest::prop_assert_eq!(&latencies(&lines, 1000), &want);
        // In turn order, streaming (from the start or after a few
        // events) is exact too.
        let mut in_order = events.clone();
        in_order.sort_by_key(|e| e.1);
        let lines: Vec<String> = in_order
            .iter()
            .map(|&(agent, turn, ok)| ev("r", ["a", "b"][agent], turn, ok, None))
            .collect();
        for buffer in [0, 3, 1000] {
            proptest::prop_assert_eq!(&latencies(&lines, buffer), &want, "buffer {}", buffer);
        }
    }
}

/// One agent failing and succeeding at a single turn, over and over,
/// keeps every failure pending: resolving must not rescan them all at
/// each success (300k such events took 3.4 s, now milliseconds).
#[test]
fn failures_pending_at_one_turn_cost_no_rescan() {
    let lines = [
        ev("r", "a", 7, false, None),
        ev("r", "a", 7, true, None),
        ev("r", "a", 8, true, None),
    ];
    let [failure, success, later] = lines
        .each_ref()
        .map(|l| serde_json::from_str::<EventView>(l).unwrap());
    for buffer in [0, usize::MAX] {
        let start = std::time::Instant::now();
        let mut g = Grouper::with_buffer(3, buffer);
        for _ in 0..100_000 {
            g.add_event_at(&failure, None);
            g.add_event_at(&success, None);
        }
        g.add_event_at(&later, None);
        let p = &g.finish().2[0];
        assert_eq!(p.recovery_latencies, BTreeMap::from([(1, 100_000)]));
        // Linear takes well under a second unoptimized; rescanning, minutes.
        let took = start.elapsed();
        assert!(
            took < std::time::Duration::from_secs(10),
            "buffer {buffer}: {took:?}"
        );
    }
}

#[test]
fn classified_success_is_incident_and_success() {
    let lines = vec![
        ev("r", "a", 1, false, None),
        ev("r", "a", 2, true, Some("information_lag")),
    ];
    let ps = group(&lines, 100);
    assert_eq!(ps.len(), 2);
    assert_eq!(ps[0].recovery_latencies, BTreeMap::from([(1, 1)]));
    assert_eq!(ps[1].failure_classification, "information_lag");
    assert_eq!(ps[1].tail_unrecovered, 1);
}

#[test]
fn ids_never_collide() {
    let a = pattern_id("a-b", "c", "d", &[]);
    let b = pattern_id("a", "b-c", "d", &[]);
    assert_ne!(a, b);
    let c = pattern_id("a/b", "c", "d", &[]);
    let d = pattern_id("a", "b/c", "d", &[]);
    assert_ne!(c, d);
    assert_ne!(
        pattern_id("a", "t", "c", &["none".into()]),
        pattern_id("a", "t", "c", &[])
    );
    assert_ne!(
        pattern_id("a", "t", "c", &["x+y".into()]),
        pattern_id("a", "t", "c", &["x".into(), "y".into()])
    );
    assert_eq!(
        pattern_id("planner", "dispatch", "coordination_failure", &["q".into()]),
        "planner/dispatch/coordination_failure/q"
    );
}

fn at(line: &str, time: &str) -> String {
    line.replacen('{', &format!(r#"{{"timestamp":"{time}","#), 1)
}

fn group_all(lines: &[String]) -> (Batch, Vec<Pattern>) {
    let mut g = Grouper::with_buffer(3, 100);
    for l in lines {
        let v: EventView = serde_json::from_str(l).unwrap();
        g.add_event(&v);
    }
    let (b, _, p) = g.finish();
    (b, p)
}

#[test]
fn runs_go_by_time_then_by_id() {
    let t = |s: i128| Some(Timestamp(s));
    let ids = |names: &[&str]| {
        let mut i = Interner::default();
        names.iter().for_each(|n| {
            i.intern(n);
        });
        i
    };
    let runs = ids(&["d", "c", "b", "a"]);
    // An untimed run stays after the run it followed.
    assert_eq!(
        time_order(&[t(30), None, t(10), t(20)], &runs),
        [2, 3, 0, 1]
    );
    // Runs of one instant by id, numbers by value; untimed runs in input order.
    let runs = ids(&["task-10", "task-9", "task-1"]);
    assert_eq!(time_order(&[t(5), t(5), t(5)], &runs), [2, 1, 0]);
    assert_eq!(time_order(&[None, None, None], &runs), [0, 1, 2]);
    assert_eq!(
        crate::record::natural_cmp("t007", "t7"),
        std::cmp::Ordering::Less
    );
    assert_eq!(
        crate::record::natural_cmp("a2b", "a10a"),
        std::cmp::Ordering::Less
    );
}

#[test]
fn runs_patterns_and_samples_follow_time_not_input_order() {
    let monday = vec![
        at(&ev("mon", "b", 1, false, Some("x")), "2026-04-27T09:00:00Z"),
        at(&ev("mon", "a", 2, false, Some("y")), "2026-04-27T09:01:00Z"),
    ];
    let sunday = vec![
        at(&ev("sun", "a", 1, false, Some("y")), "2026-04-26T09:00:00Z"),
        at(&ev("sun", "a", 2, false, Some("y")), "2026-04-26T10:30:00Z"),
    ];
    let forward: Vec<String> = sunday.iter().chain(&monday).cloned().collect();
    let backward: Vec<String> = monday.iter().chain(&sunday).cloned().collect();
    let (b1, p1) = group_all(&forward);
    let (b2, p2) = group_all(&backward);
    assert_eq!(b1.run_order, ["sun", "mon"]);
    assert_eq!(b1, b2);
    assert_eq!(p1, p2);
    assert_eq!(p1[0].agent_id, "a", "first seen on sunday");
    let runs: Vec<&str> = p1[0].run_counts.0.iter().map(|(r, _)| &**r).collect();
    assert_eq!(runs, ["sun", "mon"]);
    assert_eq!(
        p1[0].hour_counts,
        BTreeMap::from([
            ("2026-04-26T09:00:00Z".to_string(), 1),
            ("2026-04-26T10:00:00Z".to_string(), 1),
            ("2026-04-27T09:00:00Z".to_string(), 1),
        ])
    );
    assert_eq!(
        b1.run_first_timestamps,
        [
            Some("2026-04-26T09:00:00Z".to_string()),
            Some("2026-04-27T09:00:00Z".to_string())
        ]
    );
}

#[test]
fn the_earliest_failures_are_the_samples_in_any_input_order() {
    let lines: Vec<String> = (0..8)
        .map(|i| {
            at(
                &ev(&format!("r{i}"), "a", 1, false, None),
                &format!("2026-04-26T0{i}:00:00Z"),
            )
        })
        .collect();
    let reversed: Vec<String> = lines.iter().rev().cloned().collect();
    let samples = |ls: &[String]| -> Vec<String> {
        group_all(ls).1[0]
            .samples
            .iter()
            .map(|s| s.run_id.clone())
            .collect()
    };
    assert_eq!(samples(&lines), ["r0", "r1", "r2", "r3", "r4"]);
    assert_eq!(samples(&reversed), samples(&lines));
}

#[test]
fn merged_shards_are_in_time_order_whichever_came_first() {
    let shard = |run: &str, time: &str| {
        let (b, p) = group_all(&[at(&ev(run, "a", 1, false, None), time)]);
        (b, p)
    };
    let early = shard("early", "2026-04-26T09:00:00Z");
    let late = shard("late", "2026-04-27T09:00:00Z");
    let merge = |first: &(Batch, Vec<Pattern>), second: &(Batch, Vec<Pattern>)| {
        let mut g = Grouper::new(3);
        for (b, ps) in [first, second] {
            g.add_batch(b);
            ps.iter().for_each(|p| g.add_pattern(p));
        }
        let (b, _, p) = g.finish();
        (b, p)
    };
    let (b1, p1) = merge(&late, &early);
    let (b2, p2) = merge(&early, &late);
    assert_eq!(b1.run_order, ["early", "late"]);
    assert_eq!((b1, p1), (b2, p2));
}
