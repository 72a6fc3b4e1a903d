//! The layering of src/ (see ARCHITECTURE.md): a module may use modules of
//! its own layer or of layers below it, never of a layer above, and sibling
//! modules never form an import cycle. Read from the `crate::`, `super::`
//! and `self::` paths of every file outside its `#[cfg(test)]` module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top to bottom; each top-level module of src/ belongs to exactly one.
const LAYERS: &[(&str, &[&str])] = &[
    ("face", &["cli", "cmd"]),
    (
        "orchestration",
        &["pipeline", "diff", "judge", "narrate", "recv", "tracegen"],
    ),
    ("formats", &["adapters"]),
    ("analysis", &["group", "score", "classify", "explain"]),
    ("output", &["render", "alert", "outcomes"]),
    ("services", &["llm", "http_retry"]),
    ("contract", &["record", "config", "timestamp", "stream"]),
    ("io", &["io"]),
];

/// A module path under src/: `["adapters", "otlp"]` for adapters/otlp.rs.
type ModPath = Vec<String>;

fn layer_of(top: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, mods)| mods.contains(&top))
}

fn module_files(src: &Path) -> BTreeMap<ModPath, PathBuf> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.file_name().unwrap() != "bin" {
                    dirs.push(path);
                }
                continue;
            }
            // A module's tests (`mod tests;` in tests.rs) are not part of the build.
            if path.extension().is_none_or(|e| e != "rs") || path.file_name().unwrap() == "tests.rs"
            {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut parts: ModPath = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
                parts.pop();
            }
            out.insert(parts, path);
        }
    }
    out
}

/// The text the build sees outside tests, with line comments dropped.
fn code_outside_tests(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
        // Paths are ASCII; this keeps every byte index a char boundary.
        .chars()
        .map(|c| if c.is_ascii() { c } else { ' ' })
        .collect()
}

/// Every path that starts with `crate`, `super` or `self`, with `use`
/// groups (`crate::a::{b, c::{d}}`) expanded.
fn paths(code: &str) -> Vec<Vec<String>> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let ident_start = i == 0 || !is_ident(bytes[i - 1]);
        let root = ["crate", "super", "self"]
            .into_iter()
            .find(|r| ident_start && code[i..].starts_with(&format!("{r}::")));
        match root {
            Some(r) => {
                let (tree, end) = read_tree(code, i + r.len());
                for mut p in tree {
                    p.insert(0, r.to_string());
                    out.push(p);
                }
                i = end;
            }
            None => i += 1,
        }
    }
    out
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Reads `::a::b`, `::a::{b, c}` from `at`; returns the expanded paths (after
/// the root) and where reading stopped.
fn read_tree(code: &str, mut at: usize) -> (Vec<Vec<String>>, usize) {
    let bytes = code.as_bytes();
    let mut prefix = Vec::new();
    while code[at..].starts_with("::") {
        at += 2;
        if bytes.get(at) == Some(&b'{') {
            let mut out = Vec::new();
            at += 1;
            loop {
                while bytes
                    .get(at)
                    .is_some_and(|b| b.is_ascii_whitespace() || *b == b',')
                {
                    at += 1;
                }
                if bytes.get(at).is_none_or(|b| *b == b'}') {
                    return (out, at + 1);
                }
                // One member: a path that may itself end in a group.
                let (member, end) = read_tree(&format!("::{}", &code[at..]), 0);
                let consumed = end.saturating_sub(2);
                for m in member {
                    let mut p = prefix.clone();
                    p.extend(m);
                    out.push(p);
                }
                at += consumed.max(1);
                // Skip `as name` and anything up to the next separator.
                while bytes.get(at).is_some_and(|b| *b != b',' && *b != b'}') {
                    at += 1;
                }
            }
        }
        let start = at;
        while bytes.get(at).is_some_and(|b| is_ident(*b)) {
            at += 1;
        }
        if start == at {
            break;
        }
        prefix.push(code[start..at].to_string());
    }
    (vec![prefix], at)
}

/// The module a path names: the longest prefix that is a module file.
fn resolve(
    from: &ModPath,
    path: &[String],
    modules: &BTreeMap<ModPath, PathBuf>,
) -> Option<ModPath> {
    let mut base: ModPath = Vec::new();
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate") => rest = &path[1..],
        Some("super" | "self") => {
            base = from.clone();
            while let Some(seg) = rest.first().map(String::as_str) {
                match seg {
                    "super" => {
                        base.pop();
                    }
                    "self" => {}
                    _ => break,
                }
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    let mut best = base.clone();
    for seg in rest {
        base.push(seg.clone());
        if modules.contains_key(&base) {
            best = base.clone();
        } else {
            break;
        }
    }
    (!best.is_empty()).then_some(best)
}

struct Graph {
    /// Module → the modules its code names.
    edges: BTreeMap<ModPath, BTreeSet<ModPath>>,
}

fn graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules = module_files(&src);
    let mut edges = BTreeMap::new();
    for (m, file) in &modules {
        if m.is_empty() {
            continue;
        }
        let code = code_outside_tests(&std::fs::read_to_string(file).unwrap());
        let targets: BTreeSet<ModPath> = paths(&code)
            .iter()
            .filter_map(|p| resolve(m, p, &modules))
            .filter(|t| t != m)
            .collect();
        edges.insert(m.clone(), targets);
    }
    Graph { edges }
}

/// Edges from a module to one of a higher layer, as "from -> to (layers)".
fn upward(g: &Graph) -> Vec<String> {
    let mut out = Vec::new();
    for (from, targets) in &g.edges {
        let Some(lf) = layer_of(&from[0]) else {
            continue;
        };
        for to in targets {
            let Some(lt) = layer_of(&to[0]) else { continue };
            if lt < lf {
                out.push(format!(
                    "{} -> {} ({} -> {})",
                    from.join("::"),
                    to.join("::"),
                    LAYERS[lf].0,
                    LAYERS[lt].0
                ));
            }
        }
    }
    out
}

/// Import cycles among siblings: an edge a::x -> a::y::z counts as x -> y
/// under `a`; edges between a module and its own ancestors or descendants do
/// not count (a parent declares its children; children use their parent's
/// items).
fn cycles(g: &Graph) -> Vec<String> {
    let mut sib: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
    for (a, targets) in &g.edges {
        for b in targets {
            let k = a.iter().zip(b).take_while(|(x, y)| x == y).count();
            if k == a.len() || k == b.len() {
                continue;
            }
            sib.entry(a[..=k].to_vec())
                .or_default()
                .insert(b[..=k].to_vec());
        }
    }
    // Tarjan's strongly connected components.
    struct State<'g> {
        sib: &'g BTreeMap<ModPath, BTreeSet<ModPath>>,
        index: BTreeMap<ModPath, usize>,
        low: BTreeMap<ModPath, usize>,
        stack: Vec<ModPath>,
        on: BTreeSet<ModPath>,
        found: Vec<String>,
    }
    fn visit(s: &mut State<'_>, v: &ModPath) {
        let i = s.index.len();
        s.index.insert(v.clone(), i);
        s.low.insert(v.clone(), i);
        s.stack.push(v.clone());
        s.on.insert(v.clone());
        for w in s.sib.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on.remove(&w);
                comp.push(w.join("::"));
                if &w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.found.push(format!("cycle: {}", comp.join(", ")));
            }
        }
    }
    let mut s = State {
        sib: &sib,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in sib.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.found.sort();
    s.found
}

#[test]
fn every_top_level_module_has_a_layer() {
    let g = graph();
    let tops: BTreeSet<&str> = g.edges.keys().map(|m| m[0].as_str()).collect();
    let missing: Vec<&str> = tops.into_iter().filter(|t| layer_of(t).is_none()).collect();
    assert!(
        missing.is_empty(),
        "modules with no layer in tests/layers.rs and ARCHITECTURE.md: {missing:?}"
    );
}

#[test]
fn no_module_uses_a_layer_above_its_own() {
    let found = upward(&graph());
    assert!(found.is_empty(), "upward imports:\n{}", found.join("\n"));
}

#[test]
fn sibling_modules_form_no_import_cycle() {
    let found = cycles(&graph());
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

#[test]
fn the_checker_sees_groups_renames_and_relative_paths() {
    let code = "use crate::{a::{b, c as d}, e};\nfn f() { super::g::h(); self::i::j; }";
    let got = paths(code);
    let want: Vec<Vec<&str>> = vec![
        vec!["crate", "a", "b"],
        vec!["crate", "a", "c"],
        vec!["crate", "e"],
        vec!["super", "g", "h"],
        vec!["self", "i", "j"],
    ];
    assert_eq!(got, want);
    let mut modules = BTreeMap::new();
    for m in [vec!["a"], vec!["a", "c"], vec!["x", "g"]] {
        let m: ModPath = m.into_iter().map(String::from).collect();
        modules.insert(m, PathBuf::new());
    }
    let from: ModPath = vec!["x".into(), "y".into()];
    let r = |p: &[&str]| {
        resolve(
            &from,
            &p.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            &modules,
        )
    };
    assert_eq!(
        r(&["crate", "a", "c", "f"]),
        Some(vec!["a".into(), "c".into()])
    );
    assert_eq!(r(&["super", "g", "h"]), Some(vec!["x".into(), "g".into()]));
    let cyclic = Graph {
        edges: BTreeMap::from([
            (
                vec!["p".into(), "a".into()],
                BTreeSet::from([vec!["p".into(), "b".into(), "c".into()]]),
            ),
            (
                vec!["p".into(), "b".into(), "c".into()],
                BTreeSet::from([vec!["p".into(), "a".into()]]),
            ),
            (
                vec!["p".into()],
                BTreeSet::from([vec!["p".into(), "a".into()]]),
            ),
        ]),
    };
    assert_eq!(cycles(&cyclic), vec!["cycle: p::a, p::b".to_string()]);
}
