//! No import circles between the files of a crate's `src/`: the file-level import graph has
//! no cycle, so every file can be read (and changed) knowing only the files below it.
//!
//! Every `.rs` file under `src/` is a node, named by its module path (`src/lib.rs` is the
//! crate root `crate`, `src/frame.rs` is `frame`, `src/crowd/mod.rs` is `crowd`,
//! `src/crowd/cull.rs` is `crowd::cull`). An edge runs from a file to the file of a module
//! that a path in its code names:
//! - `crate::a::b::C` (in a `use` declaration, `use crate::{a::X, b::Y}` included, or in an
//!   expression or type);
//! - `super::C` and `self::a::C`, relative to the module the path is written in (inline
//!   modules such as `mod tests { use super::*; }` count: that `super` is the file itself);
//! - a path starting at a child module the file declares (`pub use crowd::CrowdDraw` in
//!   `lib.rs` after `pub mod crowd;`).
//!
//! A path names the file of its longest prefix that is a file module: `crate::crowd::cull::
//! visible_in_slot` is `crowd/cull.rs`, `crate::crowd::CrowdDraw` is `crowd/mod.rs`, and
//! `crate::Renderer` (an item re-exported at the root) is `lib.rs`, which names every module
//! it re-exports: modules import each other by module path. Comments, doc comments (their
//! links included) and string literals are not code and add no edge; a `mod x;` declaration
//! is not an import either.
//!
//! [`check_crate`] is the entry point each library crate's `tests/no_import_cycles.rs` calls.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Checks the crate whose manifest directory is `manifest_dir` (`env!("CARGO_MANIFEST_DIR")`)
/// and panics with the report of its circles, if any. Also panics when the scan is vacuous
/// (no `lib.rs`, fewer than `min_files` files, or fewer edges than files but one), so the
/// check cannot pass by reading nothing.
///
/// # Panics
/// On a circle, an unreadable tree or a vacuous scan.
pub fn check_crate(manifest_dir: &str, min_files: usize) {
    let src = Path::new(manifest_dir).join("src");
    let graph = check_dir(&src).unwrap_or_else(|report| panic!("{report}"));
    assert!(graph.files.contains_key(&Vec::new()), "no lib.rs under {}", src.display());
    assert!(graph.files.len() >= min_files, "only {} files under {}", graph.files.len(), src.display());
    assert!(
        graph.edges.len() + 1 >= graph.files.len(),
        "only {} edges between {} files",
        graph.edges.len(),
        graph.files.len()
    );
}

/// A module path: `[]` is the crate root, `["crowd", "cull"]` is `crowd::cull`.
type ModPath = Vec<String>;

/// The file-level import graph of a crate.
#[derive(Debug, Default)]
pub struct Graph {
    /// Every file by its module path, with its path relative to `src/`.
    pub files: BTreeMap<ModPath, PathBuf>,
    /// `from → to` between distinct files, with the first place that names it
    /// (`line`, the path as written).
    pub edges: BTreeMap<(ModPath, ModPath), (usize, String)>,
}

/// Reads every `.rs` file under `src`, builds the import graph and returns it, or a report
/// of its circles: for each set of files that reach each other, the files and one cycle
/// through them, each edge with the line and path that makes it.
///
/// # Errors
/// The report of the circles, or an I/O error or unsupported `#[path]` as text.
pub fn check_dir(src: &Path) -> Result<Graph, String> {
    let mut files = Vec::new();
    collect_rs(src, src, &mut files).map_err(|e| format!("reading {}: {e}", src.display()))?;
    let graph = import_graph(&files)?;
    let cycles = cycles(&graph);
    if cycles.is_empty() { Ok(graph) } else { Err(report(&graph, &cycles)) }
}

fn collect_rs(root: &Path, dir: &Path, out: &mut Vec<(PathBuf, String)>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let path = e.path();
        if path.is_dir() {
            collect_rs(root, &path, out)?;
        } else if path.extension().is_some_and(|x| x == "rs") {
            let rel = path.strip_prefix(root).expect("under root").to_path_buf();
            out.push((rel, std::fs::read_to_string(&path)?));
        }
    }
    Ok(())
}

/// The module path of a file relative to `src/`: `lib.rs` → `[]`, `a.rs` → `[a]`,
/// `a/mod.rs` → `[a]`, `a/b.rs` → `[a, b]`.
fn module_of(rel: &Path) -> ModPath {
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().expect("a file name");
    let stem = last.strip_suffix(".rs").unwrap_or(&last);
    if !(parts.is_empty() && (stem == "lib" || stem == "main")) && stem != "mod" {
        parts.push(stem.to_owned());
    }
    parts
}

/// Builds the graph of `files` (paths relative to `src/`, and their text).
///
/// # Errors
/// A `#[path]` attribute (which would break the file ↔ module mapping).
pub fn import_graph(files: &[(PathBuf, String)]) -> Result<Graph, String> {
    let mut graph = Graph::default();
    for (rel, _) in files {
        graph.files.insert(module_of(rel), rel.clone());
    }
    for (rel, text) in files {
        let from = module_of(rel);
        let toks = tokens(text);
        if toks.windows(3).any(|w| w[0].is_punct('#') && w[1].is_punct('[') && w[2].is_ident("path")) {
            return Err(format!("{}: #[path] attributes are not supported", rel.display()));
        }
        for (path, line) in paths(&toks, &from) {
            let to = file_of(&graph.files, &path);
            if to != from {
                let written = format!("crate::{}", path.join("::"));
                graph.edges.entry((from.clone(), to)).or_insert((line, written));
            }
        }
    }
    Ok(graph)
}

/// The file module holding `path`: its longest prefix that is a file (the root at worst).
fn file_of(files: &BTreeMap<ModPath, PathBuf>, path: &[String]) -> ModPath {
    (0..=path.len()).rev().map(|n| path[..n].to_vec()).find(|p| files.contains_key(p)).unwrap_or_default()
}

/// A token of Rust code: comments, strings, characters, lifetimes and numbers are dropped.
#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String, usize),
    /// `::`
    Sep,
    Punct(char),
}

impl Tok {
    fn is_ident(&self, s: &str) -> bool {
        matches!(self, Tok::Ident(i, _) if i == s)
    }

    fn is_punct(&self, c: char) -> bool {
        *self == Tok::Punct(c)
    }
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Lexes `text` into identifiers (with their 1-based line), `::` and punctuation.
fn tokens(text: &str) -> Vec<Tok> {
    let c: Vec<char> = text.chars().collect();
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    // Skips a (raw) string starting at `i` (at `r`, `b`, `br` or the quote); returns the
    // index after it, or None when no string starts there.
    let string_end = |i: usize, line: &mut usize| -> Option<usize> {
        let mut j = i;
        if at(j) == 'b' {
            j += 1;
        }
        let raw = at(j) == 'r';
        if raw {
            j += 1;
        }
        let mut hashes = 0;
        while raw && at(j) == '#' {
            hashes += 1;
            j += 1;
        }
        if at(j) != '"' {
            return None;
        }
        j += 1;
        while j < c.len() {
            match c[j] {
                '\n' => *line += 1,
                '\\' if !raw => {
                    if at(j + 1) == '\n' {
                        *line += 1;
                    }
                    j += 1;
                }
                '"' if (1..=hashes).all(|h| at(j + h) == '#') => return Some(j + 1 + hashes),
                _ => {}
            }
            j += 1;
        }
        Some(j)
    };
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(c[i] == '\n');
                    i += 1;
                }
            }
        } else if let Some(end) = (ch == '"' || ch == 'r' || ch == 'b').then(|| string_end(i, &mut line)).flatten() {
            i = end;
        } else if ch == '\'' {
            if at(i + 1) == '\\' {
                // An escaped character literal: past the escaped character, up to the
                // closing quote (`'\''`, `'\u{1F600}'`).
                i += 3;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                // A lifetime or label.
                i += 1;
                while is_ident_char(at(i)) {
                    i += 1;
                }
            }
        } else if ch == 'r' && at(i + 1) == '#' && is_ident_start(at(i + 2)) {
            let start = i + 2;
            i = start;
            while is_ident_char(at(i)) {
                i += 1;
            }
            out.push(Tok::Ident(c[start..i].iter().collect(), line));
        } else if is_ident_start(ch) {
            let start = i;
            while is_ident_char(at(i)) {
                i += 1;
            }
            out.push(Tok::Ident(c[start..i].iter().collect(), line));
        } else if ch.is_ascii_digit() {
            while is_ident_char(at(i)) {
                i += 1;
            }
        } else if ch == ':' && at(i + 1) == ':' {
            out.push(Tok::Sep);
            i += 2;
        } else {
            out.push(Tok::Punct(ch));
            i += 1;
        }
    }
    out
}

/// Every crate-internal path named in the code of the file `file`, resolved to an absolute
/// module path (without the leading `crate`), with its line.
fn paths(toks: &[Tok], file: &ModPath) -> Vec<(ModPath, usize)> {
    let ident = |i: usize| match toks.get(i) {
        Some(Tok::Ident(s, line)) => Some((s.as_str(), *line)),
        _ => None,
    };
    let sep = |i: usize| toks.get(i) == Some(&Tok::Sep);
    // The child modules the file declares (`mod x;` outside any braces), wherever the
    // declaration stands relative to the paths that start at them.
    let mut children = BTreeSet::new();
    let mut depth = 0;
    for (i, t) in toks.iter().enumerate() {
        match t {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => depth -= 1,
            Tok::Ident(kw, _) if kw == "mod" && depth == 0 && toks.get(i + 2) == Some(&Tok::Punct(';')) => {
                if let Some((name, _)) = ident(i + 1) {
                    children.insert(name.to_owned());
                }
            }
            _ => {}
        }
    }
    // Inline modules open at this point: name and the brace depth inside them.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0;
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let here: ModPath = file.iter().cloned().chain(inline.iter().map(|(n, _)| n.clone())).collect();
        match &toks[i] {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth -= 1;
            }
            Tok::Ident(kw, _) if kw == "mod" && toks.get(i + 2) == Some(&Tok::Punct('{')) => {
                if let Some((name, _)) = ident(i + 1) {
                    inline.push((name.to_owned(), depth + 1));
                    depth += 1;
                    i += 3;
                    continue;
                }
            }
            // `pub(in path)` is a visibility, not an import.
            Tok::Ident(kw, _) if kw == "in" && i >= 2 && toks[i - 1].is_punct('(') && toks[i - 2].is_ident("pub") => {
                while i < toks.len() && !toks[i].is_punct(')') {
                    i += 1;
                }
            }
            Tok::Ident(kw, line) if kw == "use" => {
                let line = *line;
                i += 1;
                let mut trees = Vec::new();
                use_tree(toks, &mut i, Vec::new(), &mut trees);
                for t in trees {
                    let top = here.len() == file.len();
                    if let Some(p) = resolve(&t, &here, top.then_some(&children)) {
                        out.push((p, line));
                    }
                }
                continue;
            }
            Tok::Ident(first, line) if sep(i + 1) && (i == 0 || !sep(i - 1)) => {
                let anchored = matches!(first.as_str(), "crate" | "super" | "self");
                let top = here.len() == file.len();
                if anchored || (top && children.contains(first.as_str())) {
                    let line = *line;
                    let mut segs = vec![first.clone()];
                    let mut j = i + 1;
                    while sep(j) {
                        match ident(j + 1) {
                            Some((s, _)) => segs.push(s.to_owned()),
                            None => break,
                        }
                        j += 2;
                    }
                    if let Some(p) = resolve(&segs, &here, top.then_some(&children)) {
                        out.push((p, line));
                    }
                    i = j;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Parses a `use` tree from `toks[*i]` (after `use`, or inside braces) with the segments
/// `prefix` before it, appending every path it imports to `out`; stops after its last token.
fn use_tree(toks: &[Tok], i: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut path = prefix;
    if toks.get(*i) == Some(&Tok::Sep) {
        // `use ::name` names an external crate.
        path.push("::".into());
        *i += 1;
    }
    loop {
        match toks.get(*i) {
            Some(Tok::Ident(name, _)) => {
                path.push(name.clone());
                *i += 1;
                if toks.get(*i) == Some(&Tok::Sep) {
                    *i += 1;
                    continue;
                }
                if toks.get(*i).is_some_and(|t| t.is_ident("as")) {
                    *i += 2;
                }
                out.push(path);
                break;
            }
            Some(Tok::Punct('{')) => {
                *i += 1;
                while *i < toks.len() && !toks[*i].is_punct('}') {
                    use_tree(toks, i, path.clone(), out);
                    if toks.get(*i).is_some_and(|t| t.is_punct(',')) {
                        *i += 1;
                    }
                }
                *i += 1;
                break;
            }
            Some(Tok::Punct('*')) => {
                *i += 1;
                out.push(path);
                break;
            }
            _ => break,
        }
    }
}

/// The absolute module path (without `crate`) that `segs`, written in module `here`, names;
/// None for a path into another crate. `children` are the file's declared child modules
/// when `here` is the file's own module (relative paths may start at them).
fn resolve(segs: &[String], here: &ModPath, children: Option<&BTreeSet<String>>) -> Option<ModPath> {
    let first = segs.first()?;
    let (mut base, rest) = match first.as_str() {
        "crate" => (Vec::new(), &segs[1..]),
        "self" => (here.clone(), &segs[1..]),
        "super" => {
            let mut base = here.clone();
            let mut k = 0;
            while segs.get(k).is_some_and(|s| s == "super") {
                base.pop();
                k += 1;
            }
            (base, &segs[k..])
        }
        name if children.is_some_and(|c| c.contains(name)) => (here.clone(), segs),
        _ => return None,
    };
    // `a::{self, X}` imports `a` itself.
    base.extend(rest.iter().filter(|s| *s != "self").cloned());
    Some(base)
}

/// A set of files that all reach each other (a strongly connected component of more than
/// one file), and the shortest cycle through the first of them.
#[derive(Debug, PartialEq)]
pub struct Circle {
    /// The files, in module-path order.
    pub files: Vec<ModPath>,
    /// A cycle through `files[0]`: first and last entry are that file.
    pub cycle: Vec<ModPath>,
}

/// Every circle of the graph.
fn cycles(graph: &Graph) -> Vec<Circle> {
    let nodes: Vec<&ModPath> = graph.files.keys().collect();
    let index: BTreeMap<&ModPath, usize> = nodes.iter().enumerate().map(|(k, n)| (*n, k)).collect();
    let mut succ = vec![Vec::new(); nodes.len()];
    for (from, to) in graph.edges.keys() {
        succ[index[from]].push(index[to]);
    }
    // Tarjan's strongly connected components.
    struct State {
        next: usize,
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on_stack: Vec<bool>,
        sccs: Vec<Vec<usize>>,
    }
    fn visit(v: usize, succ: &[Vec<usize>], s: &mut State) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &succ[v] {
            match s.index[w] {
                None => {
                    visit(w, succ, s);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut scc = Vec::new();
            loop {
                let w = s.stack.pop().expect("on the stack");
                s.on_stack[w] = false;
                scc.push(w);
                if w == v {
                    break;
                }
            }
            s.sccs.push(scc);
        }
    }
    let n = nodes.len();
    let mut s = State {
        next: 0,
        index: vec![None; n],
        low: vec![0; n],
        stack: Vec::new(),
        on_stack: vec![false; n],
        sccs: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(v, &succ, &mut s);
        }
    }
    let mut out = Vec::new();
    for scc in s.sccs.into_iter().filter(|c| c.len() > 1) {
        // The shortest cycle through the component's smallest node (breadth first).
        let inside: BTreeSet<usize> = scc.iter().copied().collect();
        let start = *inside.iter().next().expect("non-empty");
        let mut prev: BTreeMap<usize, usize> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        'search: while let Some(v) = queue.pop_front() {
            for &w in &succ[v] {
                if !inside.contains(&w) {
                    continue;
                }
                if w == start {
                    let mut cycle = vec![v];
                    while let Some(&p) = prev.get(cycle.last().expect("non-empty")) {
                        cycle.push(p);
                    }
                    cycle.reverse();
                    cycle.push(start);
                    let files = inside.iter().map(|&k| nodes[k].clone()).collect();
                    out.push(Circle { files, cycle: cycle.into_iter().map(|k| nodes[k].clone()).collect() });
                    break 'search;
                }
                if w != start && !prev.contains_key(&w) {
                    prev.insert(w, v);
                    queue.push_back(w);
                }
            }
        }
    }
    out
}

fn report(graph: &Graph, circles: &[Circle]) -> String {
    let name = |m: &ModPath| graph.files[m].display().to_string();
    let mut s = format!("{} import circle(s) between files of src/:\n", circles.len());
    for c in circles {
        let files: Vec<String> = c.files.iter().map(name).collect();
        let _ = writeln!(s, "\n  {} files reach each other: {}", files.len(), files.join(", "));
        let cycle: Vec<String> = c.cycle.iter().map(name).collect();
        let _ = writeln!(s, "  for example {}", cycle.join(" -> "));
        for pair in c.cycle.windows(2) {
            let (line, path) = &graph.edges[&(pair[0].clone(), pair[1].clone())];
            let _ = writeln!(s, "    {}:{line} names {path}", graph.files[&pair[0]].display());
        }
    }
    s
}

// ----------------------------------------------------------------------------------------
// The checker's own tests: each kind of edge is found (a cycle through it is reported), and
// what is not code adds none.

#[cfg(test)]
mod tests {
    use super::*;

    /// The graph of in-memory files.
    fn graph_of(files: &[(&str, &str)]) -> Graph {
        let files: Vec<(PathBuf, String)> = files.iter().map(|(p, t)| (PathBuf::from(p), t.to_string())).collect();
        import_graph(&files).unwrap()
    }

    fn edge(g: &Graph, from: &str, to: &str) -> bool {
        g.edges.contains_key(&(m(from), m(to)))
    }

    #[test]
    fn files_map_to_their_modules() {
        assert_eq!(module_of(Path::new("lib.rs")), Vec::<String>::new());
        assert_eq!(module_of(Path::new("frame.rs")), ["frame"]);
        assert_eq!(module_of(Path::new("crowd/mod.rs")), ["crowd"]);
        assert_eq!(module_of(Path::new("crowd/cull.rs")), ["crowd", "cull"]);
    }

    #[test]
    fn every_kind_of_path_is_an_edge() {
        let g = graph_of(&[
            ("lib.rs", "pub mod a;\nmod b;\npub use a::{A, inner::I};\n"),
            ("a/mod.rs", "pub(crate) mod inner;\nuse crate::{b::B, c};\nfn f() { crate::d::g(); }\n"),
            ("a/inner.rs", "use super::super::e::E;\nfn f() -> super::A { self::h() }\n"),
            ("b.rs", "pub(crate) fn f() { let x: crate::f::F = todo!(); }\n"),
            ("c.rs", "use crate::b::*;\n"),
            ("d.rs", "pub fn g() {\n    crate::a::inner::f();\n}\n"),
            ("e.rs", "use ::std::fmt;\nuse std::fmt::Write;\n"),
            ("f.rs", ""),
        ]);
        for (from, to) in [
            ("", "a"),
            ("", "a::inner"),
            ("a", "b"),
            ("a", "c"),
            ("a", "d"),
            ("a::inner", "e"),
            ("a::inner", "a"),
            ("b", "f"),
            ("c", "b"),
            ("d", "a::inner"),
        ] {
            assert!(edge(&g, from, to), "{from} -> {to} missing from {:?}", g.edges.keys());
        }
        assert_eq!(g.edges.len(), 10, "{:?}", g.edges.keys());
        // a → d → a::inner → a is the one circle.
        let c = cycles(&g);
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].files, [m("a"), m("a::inner"), m("d")]);
        assert_eq!(c[0].cycle, [m("a"), m("d"), m("a::inner"), m("a")]);
        let report = report(&g, &c);
        assert!(report.contains("a/mod.rs -> d.rs -> a/inner.rs -> a/mod.rs"), "{report}");
        assert!(report.contains("d.rs:2 names crate::a::inner::f"), "{report}");
        assert!(report.contains("a/inner.rs:2 names crate::a::A"), "{report}");
    }

    /// An item named through the crate root is an edge to `lib.rs`, which names its modules.
    #[test]
    fn a_path_through_the_crate_root_is_an_edge_to_lib() {
        let g = graph_of(&[("lib.rs", "mod a;\nmod b;\npub use a::A;\n"), ("a.rs", "pub struct A;\n"), ("b.rs", "")]);
        assert!(cycles(&g).is_empty());
        let g = graph_of(&[("lib.rs", "mod a;\npub use a::A;\n"), ("a.rs", "pub struct A;\nfn f(_: crate::A) {}\n")]);
        let c = cycles(&g);
        assert_eq!(c.len(), 1);
        assert!(report(&g, &c).contains("a.rs:2 names crate::A"), "{}", report(&g, &c));
    }

    #[test]
    fn comments_strings_and_doc_links_are_not_edges() {
        let g = graph_of(&[
            ("lib.rs", "mod a;\nmod b;\n"),
            ("a.rs", "use crate::b::B;\n"),
            (
                "b.rs",
                concat!(
                    "//! See [`crate::a::A`].\n",
                    "/// [`crate::a::f`] and `crate::a::g`\n",
                    "// use crate::a::A;\n",
                    "/* crate::a::x /* nested */ crate::a::y */\n",
                    "const S: &str = \"crate::a::A \\\" crate::a::B\";\n",
                    "const R: &str = r#\"use crate::a::A; \"# ;\n",
                    "const C: [char; 2] = ['\\'', '\"'];\n",
                    "fn f<'a>(x: &'a str) -> &'a str { x }\n",
                    "pub(in crate::a) fn g() {}\n",
                ),
            ),
        ]);
        assert!(edge(&g, "a", "b"));
        assert_eq!(g.edges.len(), 1, "{:?}", g.edges.keys());
        assert!(cycles(&g).is_empty());
        // The same paths as code are edges (the positive control of the above).
        let g = graph_of(&[
            ("lib.rs", "mod a;\nmod b;\n"),
            ("a.rs", "use crate::b::B;\n"),
            ("b.rs", "const C: [char; 2] = ['\\'', '\"'];\nuse crate::a::A;\n"),
        ]);
        assert!(edge(&g, "b", "a"), "{:?}", g.edges.keys());
    }

    #[test]
    fn test_modules_inside_a_file_count_and_their_super_is_the_file() {
        let files = [
            ("lib.rs", "mod a;\nmod b;\n"),
            ("a.rs", "pub fn f() {}\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use crate::b::B;\n}\n"),
            ("b.rs", "use crate::a::f;\npub struct B;\n"),
        ];
        let g = graph_of(&files);
        assert!(edge(&g, "a", "b") && edge(&g, "b", "a"));
        assert_eq!(g.edges.len(), 2, "{:?}", g.edges.keys());
        let c = cycles(&g);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].cycle, [m("a"), m("b"), m("a")]);
        // The same test in a file of its own (`a/tests.rs`) is no cycle: nothing imports it.
        let g = graph_of(&[
            ("lib.rs", "mod a;\nmod b;\n"),
            ("a/mod.rs", "pub fn f() {}\n#[cfg(test)]\nmod tests;\n"),
            ("a/tests.rs", "use super::*;\nuse crate::b::B;\n"),
            ("b.rs", "use crate::a::f;\npub struct B;\n"),
        ]);
        assert!(edge(&g, "a::tests", "a") && edge(&g, "a::tests", "b") && edge(&g, "b", "a"));
        assert!(cycles(&g).is_empty());
    }

    #[test]
    fn a_parent_and_a_child_that_import_each_other_are_a_cycle() {
        let g = graph_of(&[
            ("lib.rs", "mod a;\n"),
            ("a/mod.rs", "pub use b::B;\npub struct A;\nmod b;\n"),
            ("a/b.rs", "pub struct B(super::A);\n"),
        ]);
        let c = cycles(&g);
        assert_eq!(c.len(), 1);
        let report = report(&g, &c);
        assert!(report.contains("a/mod.rs -> a/b.rs -> a/mod.rs"), "{report}");
        // A child that only names its siblings is no cycle.
        let g = graph_of(&[
            ("lib.rs", "mod a;\n"),
            ("a/mod.rs", "mod b;\nmod c;\npub use b::B;\n"),
            ("a/b.rs", "pub struct B(super::c::C);\n"),
            ("a/c.rs", "pub struct C;\n"),
        ]);
        assert!(edge(&g, "a::b", "a::c") && edge(&g, "a", "a::b"));
        assert!(cycles(&g).is_empty());
    }

    fn m(s: &str) -> ModPath {
        if s.is_empty() { Vec::new() } else { s.split("::").map(String::from).collect() }
    }
}
