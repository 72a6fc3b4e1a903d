//! The layering of src/ (see ARCHITECTURE.md): a module may use modules of
//! its own layer or of layers below it, never of a layer above; inside
//! adapters/ and plumbing/ the same holds for their sub-layers; sibling modules
//! never form an import cycle; and no module glob-imports its parent or a
//! sibling. Read, with syn, from every path that the code outside
//! `#[cfg(test)]` items names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use syn::punctuated::Punctuated;
use syn::visit::{self, Visit};
use syn::{Attribute, Item, Meta, Token, UseTree, Visibility};

/// Named layers, top to bottom, each with its modules.
type Layers = &'static [(&'static str, &'static [&'static str])];

/// Top to bottom; each top-level module of src/ belongs to exactly one.
const LAYERS: Layers = &[
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
    ("plumbing", &["plumbing"]),
];

/// Sub-layers of adapters/, top to bottom. `self` is the module's own file
/// (mod.rs); any other name is a child with everything below it. The root
/// re-exports for callers outside, so a child naming `crate::adapters::X`
/// uses the top layer and must import the real module instead.
const ADAPTERS_LAYERS: Layers = &[
    ("entry", &["self", "detect", "containers"]),
    ("formats", &["formats"]),
    ("read", &["read"]),
    ("base", &["sink", "settings", "unreadable"]),
];

/// Sub-layers of plumbing/, top to bottom, as for adapters/: what a tool reads
/// through (input selection, the decode driver), where the driver's chunks
/// come from, NDJSON framing, the pieces framing is built from, and the
/// warning printer everything reports through.
const PLUMBING_LAYERS: Layers = &[
    ("entry", &["self"]),
    ("drivers", &["input", "decode_ahead"]),
    ("chunks", &["read_ahead"]),
    ("framing", &["framing"]),
    (
        "parts",
        &[
            "decompress",
            "json_scan",
            "json_text",
            "surrogates",
            "outfile",
            "intern",
            "task_share",
            "waiting",
        ],
    ),
    ("base", &["diag"]),
];

/// The top-level modules whose children are layered too.
const INNER_LAYERS: &[(&str, Layers)] =
    &[("adapters", ADAPTERS_LAYERS), ("plumbing", PLUMBING_LAYERS)];

/// A module path under src/: `["adapters", "sink"]` for adapters/sink.rs.
type ModPath = Vec<String>;

fn layer_of(top: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, mods)| mods.contains(&top))
}

/// The sub-layer of `m` inside `parent`'s table, if `m` is `parent` or
/// below it and has one.
fn sub_layer_of(table: Layers, parent: &str, m: &ModPath) -> Option<usize> {
    if m.first().is_none_or(|t| t != parent) {
        return None;
    }
    let name = m.get(1).map_or("self", String::as_str);
    table.iter().position(|(_, mods)| mods.contains(&name))
}

/// One file of src/.
struct Source {
    module: ModPath,
    /// How messages name it: src/... for files on disk.
    file: String,
    text: String,
}

/// Every .rs file under src/ except the binaries', with its module path
/// (foo/mod.rs and foo.rs are `foo`, lib.rs the root).
fn sources() -> Vec<Source> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let mut out = Vec::new();
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path != src.join("bin") {
                    dirs.push(path);
                }
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(&src).unwrap().with_extension("");
            let mut module: ModPath = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if module == ["lib"] || module.last().is_some_and(|p| p == "mod") {
                module.pop();
            }
            out.push(Source {
                module,
                file: path.strip_prefix(root).unwrap().display().to_string(),
                text: std::fs::read_to_string(&path).unwrap(),
            });
        }
    }
    out
}

/// Whether a `cfg` predicate holds only in test builds: `test`, or `any` /
/// `all` with `test` among its terms (`not(test)` does not count).
fn cfg_needs_test(meta: &Meta) -> bool {
    match meta {
        Meta::Path(p) => p.is_ident("test"),
        Meta::List(l) if l.path.is_ident("any") || l.path.is_ident("all") => l
            .parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)
            .is_ok_and(|terms| terms.iter().any(cfg_needs_test)),
        _ => false,
    }
}

fn is_test(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && a.parse_args::<Meta>().is_ok_and(|m| cfg_needs_test(&m))
    })
}

fn item_attrs(item: &Item) -> &[Attribute] {
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::ExternCrate(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::ForeignMod(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::TraitAlias(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// How a path is written: outside a `use`, as a `use` that binds a name,
/// or as a glob `use`.
#[derive(Clone, Debug, PartialEq)]
enum Kind {
    /// Any path outside a `use`.
    Named,
    /// `use path` (or `use path as binding`).
    Use {
        binding: String,
    },
    Glob {
        public: bool,
    },
}

/// A path as the code writes it, `use` groups expanded.
struct Written {
    /// The module it is written in: the file's, then any inline `mod`s.
    scope: ModPath,
    segs: Vec<String>,
    line: usize,
    kind: Kind,
}

/// Collects every path of a file outside test items. Visibilities
/// (`pub(super)`, `pub(in crate::a)`) are skipped: they name a module but
/// use nothing of it.
struct Collector {
    scope: ModPath,
    written: Vec<Written>,
    /// Modules declared by test items (`#[cfg(test)] mod tests;`).
    test_mods: Vec<ModPath>,
}

impl Collector {
    fn push(&mut self, segs: Vec<String>, line: usize, kind: Kind) {
        if !segs.is_empty() {
            self.written.push(Written {
                scope: self.scope.clone(),
                segs,
                line,
                kind,
            });
        }
    }

    fn use_tree(&mut self, tree: &UseTree, prefix: &mut Vec<String>, public: bool) {
        let leaf = |prefix: &[String], ident: &syn::Ident| {
            let mut segs = prefix.to_vec();
            if ident != "self" {
                segs.push(ident.to_string());
            }
            segs
        };
        match tree {
            UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(&p.tree, prefix, public);
                prefix.pop();
            }
            UseTree::Name(n) => {
                let segs = leaf(prefix, &n.ident);
                let binding = segs.last().cloned().unwrap_or_default();
                self.push(segs, line(&n.ident), Kind::Use { binding });
            }
            UseTree::Rename(r) => {
                let binding = r.rename.to_string();
                self.push(
                    leaf(prefix, &r.ident),
                    line(&r.ident),
                    Kind::Use { binding },
                );
            }
            UseTree::Glob(g) => {
                let l = g.star_token.spans[0].start().line;
                self.push(prefix.clone(), l, Kind::Glob { public });
            }
            UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(t, prefix, public);
                }
            }
        }
    }

    /// Paths in tokens syn leaves unparsed (macro bodies, attribute
    /// arguments): every `a::b::c` and `a::{b, c::d}`. String literals are
    /// read as paths only where asked (`#[serde(with = "crate::x")]`).
    fn scan(&mut self, tokens: TokenStream, strings: bool) {
        let tts: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < tts.len() {
            match &tts[i] {
                TokenTree::Group(g) => self.scan(g.stream(), strings),
                TokenTree::Literal(l) if strings => {
                    let lit = TokenStream::from(TokenTree::Literal(l.clone()));
                    if let Ok(s) = syn::parse2::<syn::LitStr>(lit) {
                        self.path_in_string(&s);
                    }
                }
                TokenTree::Ident(id) => {
                    let l = line(id);
                    let (paths, end) = token_path(&tts, i);
                    for (segs, glob) in paths {
                        let kind = if glob {
                            Kind::Glob { public: false }
                        } else {
                            Kind::Named
                        };
                        self.push(segs, l, kind);
                    }
                    i = end;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
}

impl Collector {
    fn path_in_string(&mut self, s: &syn::LitStr) {
        if let Ok(p) = s.parse::<syn::Path>() {
            self.visit_path(&p);
        }
    }
}

fn line(id: &syn::Ident) -> usize {
    id.span().start().line
}

/// Reads `a::b::c` or `a::{b, c::*}` starting at the ident at `i`; returns
/// the expanded paths (with whether each is a glob) and where it stopped.
fn token_path(tts: &[TokenTree], i: usize) -> (Vec<(Vec<String>, bool)>, usize) {
    let is_colon =
        |t: Option<&TokenTree>| matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == ':');
    let mut segs = Vec::new();
    let mut at = i;
    if let Some(TokenTree::Ident(id)) = tts.get(at) {
        segs.push(id.to_string());
        at += 1;
    }
    while is_colon(tts.get(at)) && is_colon(tts.get(at + 1)) {
        match tts.get(at + 2) {
            Some(TokenTree::Ident(id)) => {
                segs.push(id.to_string());
                at += 3;
            }
            Some(TokenTree::Punct(p)) if p.as_char() == '*' => {
                return (vec![(segs, true)], at + 3);
            }
            Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
                let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                let mut out = Vec::new();
                for part in inner.split(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ','))
                {
                    if part.is_empty() {
                        continue;
                    }
                    let (members, _) = token_path(part, 0);
                    for (m, glob) in members {
                        let mut p = segs.clone();
                        p.extend(m.into_iter().filter(|s| s != "self"));
                        out.push((p, glob));
                    }
                    if matches!(part.first(), Some(TokenTree::Punct(p)) if p.as_char() == '*') {
                        out.push((segs.clone(), true));
                    }
                }
                return (out, at + 3);
            }
            _ => break,
        }
    }
    (vec![(segs, false)], at.max(i + 1))
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_item(&mut self, i: &'ast Item) {
        if is_test(item_attrs(i)) {
            if let Item::Mod(m) = i {
                let mut declared = self.scope.clone();
                declared.push(m.ident.to_string());
                self.test_mods.push(declared);
            }
            return;
        }
        if let Item::Verbatim(tokens) = i {
            self.scan(tokens.clone(), false);
        }
        visit::visit_item(self, i);
    }

    fn visit_item_mod(&mut self, i: &'ast syn::ItemMod) {
        self.scope.push(i.ident.to_string());
        visit::visit_item_mod(self, i);
        self.scope.pop();
    }

    fn visit_impl_item(&mut self, i: &'ast syn::ImplItem) {
        let attrs: &[Attribute] = match i {
            syn::ImplItem::Const(x) => &x.attrs,
            syn::ImplItem::Fn(x) => &x.attrs,
            syn::ImplItem::Type(x) => &x.attrs,
            syn::ImplItem::Macro(x) => &x.attrs,
            _ => &[],
        };
        if !is_test(attrs) {
            visit::visit_impl_item(self, i);
        }
    }

    fn visit_trait_item(&mut self, i: &'ast syn::TraitItem) {
        let attrs: &[Attribute] = match i {
            syn::TraitItem::Const(x) => &x.attrs,
            syn::TraitItem::Fn(x) => &x.attrs,
            syn::TraitItem::Type(x) => &x.attrs,
            syn::TraitItem::Macro(x) => &x.attrs,
            _ => &[],
        };
        if !is_test(attrs) {
            visit::visit_trait_item(self, i);
        }
    }

    fn visit_local(&mut self, i: &'ast syn::Local) {
        if !is_test(&i.attrs) {
            visit::visit_local(self, i);
        }
    }

    fn visit_stmt_macro(&mut self, i: &'ast syn::StmtMacro) {
        if !is_test(&i.attrs) {
            visit::visit_stmt_macro(self, i);
        }
    }

    fn visit_field(&mut self, i: &'ast syn::Field) {
        if !is_test(&i.attrs) {
            visit::visit_field(self, i);
        }
    }

    fn visit_variant(&mut self, i: &'ast syn::Variant) {
        if !is_test(&i.attrs) {
            visit::visit_variant(self, i);
        }
    }

    fn visit_arm(&mut self, i: &'ast syn::Arm) {
        if !is_test(&i.attrs) {
            visit::visit_arm(self, i);
        }
    }

    fn visit_item_use(&mut self, i: &'ast syn::ItemUse) {
        // `use ::name` is another crate.
        if i.leading_colon.is_none() {
            let public = !matches!(i.vis, Visibility::Inherited);
            self.use_tree(&i.tree, &mut Vec::new(), public);
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.leading_colon.is_none() {
            let segs = p.segments.iter().map(|s| s.ident.to_string()).collect();
            let l = p.segments.first().map_or(0, |s| line(&s.ident));
            self.push(segs, l, Kind::Named);
        }
        visit::visit_path(self, p);
    }

    fn visit_visibility(&mut self, _: &'ast Visibility) {}

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.visit_path(&m.path);
        self.scan(m.tokens.clone(), false);
    }

    fn visit_attribute(&mut self, a: &'ast Attribute) {
        // Docs are prose, even where they spell a path.
        if a.path().is_ident("doc") {
            return;
        }
        self.visit_path(a.path());
        match &a.meta {
            Meta::Path(_) => {}
            Meta::List(l) => self.scan(l.tokens.clone(), true),
            Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => self.path_in_string(s),
                value => self.visit_expr(value),
            },
        }
    }
}

/// Where a path is written, to name it in messages.
#[derive(Clone, Debug, PartialEq)]
struct Site {
    file: String,
    line: usize,
    path: String,
}

impl std::fmt::Display for Site {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{} `{}`", self.file, self.line, self.path)
    }
}

struct Graph {
    /// Every module outside tests.
    modules: BTreeSet<ModPath>,
    /// Module → the modules its code names, with where.
    edges: BTreeMap<ModPath, BTreeMap<ModPath, Vec<Site>>>,
    /// Glob `use`s of a module of the crate, with whether each is `pub`.
    globs: Vec<(ModPath, ModPath, Site, bool)>,
}

/// The path `segs`, written in `scope`, from the crate root; None for paths
/// that start outside the crate (`std::`, locals, ...). `crate`, `super`
/// and `self` lead the way, and so do names of child modules and names a
/// `use` bound to a module.
fn absolute(
    scope: &ModPath,
    segs: &[String],
    in_use: bool,
    aliases: &BTreeMap<(ModPath, String), ModPath>,
    modules: &BTreeSet<ModPath>,
) -> Option<ModPath> {
    let first = segs.first()?.as_str();
    match first {
        "crate" => Some(segs[1..].to_vec()),
        "super" | "self" => {
            let mut base = scope.clone();
            let mut rest = segs;
            while let Some(s) = rest.first().map(String::as_str) {
                match s {
                    "super" => {
                        base.pop()?;
                    }
                    "self" => {}
                    _ => break,
                }
                rest = &rest[1..];
            }
            base.extend(rest.iter().cloned());
            Some(base)
        }
        // A lone name outside `use` is a local, a type or a function.
        _ if segs.len() > 1 || in_use => {
            let mut base = if let Some(m) = aliases.get(&(scope.clone(), first.to_string())) {
                m.clone()
            } else {
                let mut child = scope.clone();
                child.push(first.to_string());
                if !modules.contains(&child) {
                    return None;
                }
                child
            };
            base.extend(segs[1..].iter().cloned());
            Some(base)
        }
        _ => None,
    }
}

/// The module a path from the root names: its longest prefix that is a
/// module, never the root.
fn module_of(path: &[String], modules: &BTreeSet<ModPath>) -> Option<ModPath> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| modules.contains(p))
}

fn graph_of(sources: &[Source]) -> Graph {
    let mut sorted: Vec<&Source> = sources.iter().collect();
    // Parents first, so a test module's declaration is seen before its files.
    sorted.sort_by(|a, b| a.module.cmp(&b.module));
    let mut test_mods: Vec<ModPath> = Vec::new();
    let mut kept: Vec<(&Source, Vec<Written>)> = Vec::new();
    for s in sorted {
        if test_mods.iter().any(|t| s.module.starts_with(t)) {
            continue;
        }
        let file =
            syn::parse_file(&s.text).unwrap_or_else(|e| panic!("{}: cannot parse: {e}", s.file));
        if is_test(&file.attrs) {
            test_mods.push(s.module.clone());
            continue;
        }
        let mut c = Collector {
            scope: s.module.clone(),
            written: Vec::new(),
            test_mods: Vec::new(),
        };
        c.visit_file(&file);
        test_mods.extend(c.test_mods);
        kept.push((s, c.written));
    }
    let modules: BTreeSet<ModPath> = kept.iter().map(|(s, _)| s.module.clone()).collect();

    // Names a `use` binds to a module, followed until nothing changes
    // (`use crate::a; use a::b;`).
    let mut aliases: BTreeMap<(ModPath, String), ModPath> = BTreeMap::new();
    loop {
        let before = aliases.len();
        for (_, written) in &kept {
            for w in written {
                if let Kind::Use { binding } = &w.kind
                    && let Some(abs) = absolute(&w.scope, &w.segs, true, &aliases, &modules)
                    && modules.contains(&abs)
                {
                    aliases.insert((w.scope.clone(), binding.clone()), abs);
                }
            }
        }
        if aliases.len() == before {
            break;
        }
    }

    let mut edges: BTreeMap<ModPath, BTreeMap<ModPath, Vec<Site>>> = BTreeMap::new();
    let mut globs = Vec::new();
    for (s, written) in &kept {
        let from = &s.module;
        let targets = edges.entry(from.clone()).or_default();
        for w in written {
            let in_use = w.kind != Kind::Named;
            let Some(abs) = absolute(&w.scope, &w.segs, in_use, &aliases, &modules) else {
                continue;
            };
            let glob = matches!(w.kind, Kind::Glob { .. });
            let site = Site {
                file: s.file.clone(),
                line: w.line,
                path: w.segs.join("::") + if glob { "::*" } else { "" },
            };
            // A glob of the module's own descendants hides nothing of the
            // layers; one of a parent or sibling pulls in all it imports.
            if let Kind::Glob { public } = w.kind
                && modules.contains(&abs)
                && !(abs.len() > w.scope.len() && abs.starts_with(&w.scope))
            {
                globs.push((from.clone(), abs.clone(), site.clone(), public));
            }
            if let Some(to) = module_of(&abs, &modules)
                && &to != from
            {
                targets.entry(to).or_default().push(site);
            }
        }
    }
    Graph {
        modules,
        edges,
        globs,
    }
}

fn graph() -> Graph {
    graph_of(&sources())
}

fn sites(s: &[Site]) -> String {
    s.iter()
        .map(|s| format!("\n    {s}"))
        .collect::<Vec<_>>()
        .concat()
}

/// Edges from a module to one of a higher layer.
fn upward(g: &Graph) -> Vec<String> {
    let mut out = Vec::new();
    for (from, targets) in &g.edges {
        let Some(lf) = from.first().and_then(|t| layer_of(t)) else {
            continue;
        };
        for (to, at) in targets {
            let Some(lt) = layer_of(&to[0]) else { continue };
            if lt < lf {
                out.push(format!(
                    "{} -> {} ({} -> {}):{}",
                    from.join("::"),
                    to.join("::"),
                    LAYERS[lf].0,
                    LAYERS[lt].0,
                    sites(at)
                ));
            }
        }
    }
    out
}

/// Edges inside adapters/ or plumbing/ to a higher sub-layer; a child naming its
/// parent counts (the parent is the top sub-layer).
fn upward_inside(g: &Graph) -> Vec<String> {
    let mut out = Vec::new();
    for (parent, table) in INNER_LAYERS {
        for (from, targets) in &g.edges {
            let Some(lf) = sub_layer_of(table, parent, from) else {
                continue;
            };
            for (to, at) in targets {
                let Some(lt) = sub_layer_of(table, parent, to) else {
                    continue;
                };
                if lt < lf {
                    out.push(format!(
                        "{} -> {} ({parent}: {} -> {}):{}",
                        from.join("::"),
                        to.join("::"),
                        table[lf].0,
                        table[lt].0,
                        sites(at)
                    ));
                }
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
    // The first place each sibling edge is written, to show a cycle's links.
    let mut via: BTreeMap<(ModPath, ModPath), &Site> = BTreeMap::new();
    for (a, targets) in &g.edges {
        for (b, at) in targets {
            let k = a.iter().zip(b).take_while(|(x, y)| x == y).count();
            if k == a.len() || k == b.len() {
                continue;
            }
            let (x, y) = (a[..=k].to_vec(), b[..=k].to_vec());
            sib.entry(x.clone()).or_default().insert(y.clone());
            if let Some(site) = at.first() {
                via.entry((x, y)).or_insert(site);
            }
        }
    }
    // Tarjan's strongly connected components.
    struct State<'g> {
        sib: &'g BTreeMap<ModPath, BTreeSet<ModPath>>,
        index: BTreeMap<ModPath, usize>,
        low: BTreeMap<ModPath, usize>,
        stack: Vec<ModPath>,
        on: BTreeSet<ModPath>,
        found: Vec<BTreeSet<ModPath>>,
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
            let mut comp = BTreeSet::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on.remove(&w);
                comp.insert(w.clone());
                if &w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                s.found.push(comp);
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
    let mut out: Vec<String> = s
        .found
        .iter()
        .map(|comp| {
            let names: Vec<String> = comp.iter().map(|m| m.join("::")).collect();
            let links: String = via
                .iter()
                .filter(|((x, y), _)| comp.contains(x) && comp.contains(y))
                .map(|((x, y), site)| format!("\n    {} -> {}: {site}", x.join("::"), y.join("::")))
                .collect();
            format!("cycle: {}{links}", names.join(", "))
        })
        .collect();
    out.sort();
    out
}

/// Glob imports of a parent or sibling outside tests; `pub use` re-exports
/// are allowed.
fn hidden_globs(g: &Graph) -> Vec<String> {
    g.globs
        .iter()
        .filter(|(_, _, _, public)| !public)
        .map(|(from, to, site, _)| format!("{} -> {}: {site}", from.join("::"), to.join("::")))
        .collect()
}

#[test]
fn every_module_has_a_layer() {
    let g = graph();
    let mut missing: BTreeSet<String> = BTreeSet::new();
    for m in g.modules.iter().filter(|m| !m.is_empty()) {
        if layer_of(&m[0]).is_none() {
            missing.insert(m[0].clone());
        }
        for (parent, table) in INNER_LAYERS {
            if m[0] == *parent && sub_layer_of(table, parent, m).is_none() {
                missing.insert(format!("{parent}::{}", m[1]));
            }
        }
    }
    // A name left in a table after its module moved would hide nothing yet
    // mislead the next reader.
    let tables = LAYERS
        .iter()
        .flat_map(|(_, mods)| mods.iter().map(|m| vec![*m]));
    let inner = INNER_LAYERS.iter().flat_map(|(parent, table)| {
        table.iter().flat_map(move |(_, mods)| {
            mods.iter().map(move |m| {
                if *m == "self" {
                    vec![*parent]
                } else {
                    vec![*parent, *m]
                }
            })
        })
    });
    let stale: Vec<String> = tables
        .chain(inner)
        .filter(|m| !g.modules.iter().any(|x| x.iter().eq(m.iter())))
        .map(|m| m.join("::"))
        .collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "modules with no layer in tests/cli/layers.rs and ARCHITECTURE.md: {missing:?}\n\
         layer table names with no module: {stale:?}"
    );
}

#[test]
fn no_module_uses_a_layer_above_its_own() {
    let found = upward(&graph());
    assert!(found.is_empty(), "upward imports:\n{}", found.join("\n"));
}

#[test]
fn no_module_of_adapters_or_io_uses_a_sub_layer_above_its_own() {
    let found = upward_inside(&graph());
    assert!(found.is_empty(), "upward imports:\n{}", found.join("\n"));
}

#[test]
fn sibling_modules_form_no_import_cycle() {
    let found = cycles(&graph());
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

#[test]
fn no_module_glob_imports_its_parent_or_a_sibling() {
    let found = hidden_globs(&graph());
    assert!(
        found.is_empty(),
        "glob imports (name what is used):\n{}",
        found.join("\n")
    );
}

/// A graph of source strings, named by module path (`"a::b"`, `""` for the
/// root).
fn graph_of_texts(files: &[(&str, &str)]) -> Graph {
    let sources: Vec<Source> = files
        .iter()
        .map(|(m, text)| Source {
            module: m
                .split("::")
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect(),
            file: m.to_string(),
            text: text.to_string(),
        })
        .collect();
    graph_of(&sources)
}

fn m(path: &str) -> ModPath {
    path.split("::").map(String::from).collect()
}

/// The modules `from` names, as `a::b` strings.
fn targets(g: &Graph, from: &str) -> Vec<String> {
    g.edges[&m(from)].keys().map(|t| t.join("::")).collect()
}

#[test]
fn a_breach_after_the_test_module_is_caught() {
    let classify = "use crate::record::Run;\n\
                    #[cfg(test)]\n\
                    mod tests {\n    \
                        use super::*;\n    \
                        use crate::cmd::run;\n\
                    }\n\
                    fn later() { crate::cmd::run(); }\n";
    let g = graph_of_texts(&[("classify", classify), ("cmd", ""), ("record", "")]);
    let found = upward(&g);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("classify -> cmd (analysis -> face):"),
        "{found:?}"
    );
    // Only the line after the test module, not the test's own import.
    assert_eq!(g.edges[&m("classify")][&m("cmd")].len(), 1);
    assert!(
        found[0].contains("classify:7 `crate::cmd::run`"),
        "{found:?}"
    );
    assert!(hidden_globs(&g).is_empty());
}

#[test]
fn a_breach_after_a_comment_marker_in_a_string_is_caught() {
    let classify = "fn f() {\n    let u = \"http://x\"; crate::cmd::run();\n}\n";
    let found = upward(&graph_of_texts(&[("classify", classify), ("cmd", "")]));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("classify:2 `crate::cmd::run`"),
        "{found:?}"
    );
}

#[test]
fn test_items_and_the_files_of_test_modules_are_ignored() {
    let classify = "#[cfg(test)]\nmod tests;\n\
                    #[cfg(any(test, feature = \"x\"))]\nuse crate::cmd::a;\n\
                    #[cfg(all(unix, test))]\nfn t() { crate::cmd::b(); }\n\
                    struct S;\nimpl S {\n    #[cfg(test)]\n    fn t() { crate::cmd::c(); }\n}\n\
                    #[cfg(not(test))]\nuse crate::cli::d;\n";
    let g = graph_of_texts(&[
        ("classify", classify),
        ("classify::tests", "use crate::cmd::e;"),
        ("classify::tests::deep", "use crate::cmd::f;"),
        ("cli", ""),
        ("cmd", ""),
    ]);
    assert_eq!(targets(&g, "classify"), ["cli"]);
    assert!(!g.modules.contains(&m("classify::tests")));
    assert!(!g.modules.contains(&m("classify::tests::deep")));
}

#[test]
fn groups_renames_and_relative_paths_resolve() {
    let y = "use crate::{a::{b, c as d}, e};\n\
             use super::g::{self as gg};\n\
             use crate::h;\n\
             fn f() { super::i::j(); self::z::k(); z::l(); gg::m(); d::n(); h::p::q(); }\n\
             mod inner { fn f() { super::super::r::s(); } }\n";
    let files = [
        ("x::y", y),
        ("x::y::z", ""),
        ("x::g", ""),
        ("x::i", ""),
        ("x::r", ""),
        ("a", ""),
        ("a::c", ""),
        ("e", ""),
        ("h", ""),
        ("h::p", ""),
    ];
    let g = graph_of_texts(&files);
    assert_eq!(
        targets(&g, "x::y"),
        [
            "a", "a::c", "e", "h", "h::p", "x::g", "x::i", "x::r", "x::y::z"
        ]
    );
}

#[test]
fn every_kind_of_path_is_seen() {
    let code = "#[derive(crate::a::Derive)]\n\
                #[serde(with = \"crate::b::serde\")]\n\
                struct S<T: crate::c::Bound> { f: crate::d::Field, t: T }\n\
                fn f(x: impl crate::e::Tr) -> <S<u8> as crate::f::As>::Out where u8: crate::g::W {\n    \
                    let _ = format!(\"{}\", crate::h::v());\n    \
                    crate::i::mac!();\n    \
                    let crate::j::P(_) = x;\n\
                }\n\
                macro_rules! n { () => { use $crate::k::{self as kk, l::*}; $crate::n::go() }; }\n\
                type A = [crate::o::T; 1];\n\
                const C: fn() = crate::p::go;\n\
                /// crate::q::Documented is prose\n\
                pub(in crate::r) fn vis() {}\n";
    let mut files = vec![("z", code)];
    let names = "a b c d e f g h i j k k::l n o p q r";
    files.extend(names.split(' ').map(|n| (n, "")));
    let g = graph_of_texts(&files);
    assert_eq!(
        targets(&g, "z"),
        [
            "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "k::l", "n", "o", "p"
        ]
    );
}

#[test]
fn a_glob_of_a_parent_or_sibling_outside_tests_is_reported() {
    let y = "use super::*;\n\
             use super::z::*;\n\
             use self::c::*;\n\
             use super::Kind::*;\n\
             pub use super::w::*;\n\
             #[cfg(test)]\nmod tests { use super::*; }\n";
    let g = graph_of_texts(&[
        ("x", "pub enum Kind { A }"),
        ("x::y", y),
        ("x::y::c", ""),
        ("x::z", ""),
        ("x::w", ""),
    ]);
    assert_eq!(
        hidden_globs(&g),
        [
            "x::y -> x: x::y:1 `super::*`",
            "x::y -> x::z: x::y:2 `super::z::*`",
        ]
    );
    let public: Vec<&Site> = g.globs.iter().filter(|x| x.3).map(|x| &x.2).collect();
    assert_eq!(public.len(), 1);
    assert_eq!(public[0].path, "super::w::*");
}

#[test]
fn a_child_of_adapters_naming_the_root_uses_the_top_sub_layer() {
    let g = graph_of_texts(&[
        ("adapters", "pub use sink::Sink;\nuse read::lines;"),
        ("adapters::sink", ""),
        ("adapters::formats", "use super::read::lines;"),
        ("adapters::formats::a", "use super::b::X;"),
        ("adapters::formats::b", ""),
        ("adapters::read", "use crate::adapters::sink::Sink;"),
        ("adapters::read::lines", "use crate::adapters::Sink;"),
        ("adapters::read::value", "use super::super::formats::b;"),
    ]);
    let found = upward_inside(&g);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].starts_with("adapters::read::lines -> adapters (adapters: read -> entry)"));
    assert!(found[1].starts_with("adapters::read::value -> adapters::formats::b"));
}

#[test]
fn a_cycle_through_a_nested_module_is_found() {
    let cyclic = Graph {
        modules: BTreeSet::new(),
        edges: BTreeMap::from([
            (m("p::a"), BTreeMap::from([(m("p::b::c"), vec![])])),
            (m("p::b::c"), BTreeMap::from([(m("p::a"), vec![])])),
            (m("p"), BTreeMap::from([(m("p::a"), vec![])])),
            (m("p::b"), BTreeMap::from([(m("p::b::c"), vec![])])),
        ]),
        globs: Vec::new(),
    };
    assert_eq!(cycles(&cyclic), vec!["cycle: p::a, p::b".to_string()]);
    let g = graph_of_texts(&[
        ("p::a", "use super::b::c::f;"),
        ("p::b", ""),
        ("p::b::c", "fn g() { crate::p::a::h(); }"),
    ]);
    assert_eq!(
        cycles(&g),
        ["cycle: p::a, p::b\n    \
          p::a -> p::b: p::a:1 `super::b::c::f`\n    \
          p::b -> p::a: p::b::c:1 `crate::p::a::h`"]
    );
}
