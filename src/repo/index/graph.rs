//! The code graph (CodeRAG's DS-code graph): modules, classes and functions as nodes; edges
//! `contains` (module -> definition, class -> method), `imports` (module -> what it imports from
//! the project), `calls` (a definition -> the project definitions its body names) and `inherits`
//! (class -> base class). Names are resolved the way Python binds them: the module's own
//! definitions, its imports (followed through re-exporting `__init__` modules and star imports),
//! `self.`/`cls.` to the class and its bases, `module.name` through an imported module.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::repo::index::chunks::{Chunk, ChunkKind, Module};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EdgeKind {
    Contains,
    Imports,
    Calls,
    Inherits,
}

impl EdgeKind {
    pub fn name(self) -> &'static str {
        match self {
            EdgeKind::Contains => "contains",
            EdgeKind::Imports => "imports",
            EdgeKind::Calls => "calls",
            EdgeKind::Inherits => "inherits",
        }
    }
}

/// The project's chunks and the edges between them (by chunk index).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Graph {
    pub chunks: Vec<Chunk>,
    /// (from, to, kind), each once.
    pub edges: Vec<(usize, usize, EdgeKind)>,
    #[serde(skip)]
    out: Vec<Vec<(usize, EdgeKind)>>,
    #[serde(skip)]
    inn: Vec<Vec<(usize, EdgeKind)>>,
    #[serde(skip)]
    by_id: HashMap<String, usize>,
}

/// What resolving names needs: each module's definitions and imports.
struct Scope<'a> {
    chunks: &'a [Chunk],
    modules: HashMap<&'a str, &'a Module>,
    /// (module, qualified name) -> chunk index.
    defs: HashMap<(&'a str, &'a str), usize>,
    /// module -> its `<module>` chunk index.
    module_chunk: HashMap<&'a str, usize>,
}

impl<'a> Scope<'a> {
    /// The chunk `name` (maybe `Class.method`) of `module`, following imports up to `depth` hops.
    fn lookup(&self, module: &str, name: &str, depth: usize) -> Option<usize> {
        if let Some(&i) = self.defs.get(&(module, name)) {
            return Some(i);
        }
        // `pkg.sub` named from `pkg`: a submodule.
        if let Some(&i) = self.module_chunk.get(format!("{module}.{name}").as_str()) {
            return Some(i);
        }
        if depth == 0 {
            return None;
        }
        let m = self.modules.get(module)?;
        let (head, rest) = match name.split_once('.') {
            Some((h, r)) => (h, Some(r)),
            None => (name, None),
        };
        for imp in m.imports.iter().filter(|i| i.alias == head) {
            let target = match &imp.name {
                Some(n) => self.lookup(&imp.module, n, depth - 1),
                None => self.module_chunk.get(imp.module.as_str()).copied(),
            };
            if let Some(t) = target {
                return match rest {
                    None => Some(t),
                    Some(r) => self.member(t, r, depth - 1),
                };
            }
        }
        if rest.is_none() {
            for imp in m.imports.iter().filter(|i| i.alias == "*") {
                if let Some(t) = self.lookup(&imp.module, name, depth - 1) {
                    return Some(t);
                }
            }
        }
        None
    }

    /// `member` of the chunk `of` (a module: one of its names; a class: a method).
    fn member(&self, of: usize, member: &str, depth: usize) -> Option<usize> {
        let c = &self.chunks[of];
        match c.kind {
            ChunkKind::Module => self.lookup(&c.module, member, depth),
            ChunkKind::Class => {
                let first = member.split('.').next().unwrap_or(member);
                self.defs.get(&(c.module.as_str(), format!("{}.{first}", c.name).as_str())).copied()
            }
            _ => None,
        }
    }
}

impl Graph {
    /// Builds the graph of a project's modules.
    pub fn build(modules: &[Module]) -> Graph {
        let chunks: Vec<Chunk> = modules.iter().flat_map(|m| m.chunks.iter().cloned()).collect();
        let mut defs = HashMap::new();
        let mut module_chunk = HashMap::new();
        for (i, c) in chunks.iter().enumerate() {
            match c.kind {
                ChunkKind::Module => {
                    module_chunk.insert(c.module.as_str(), i);
                }
                _ => {
                    defs.insert((c.module.as_str(), c.name.as_str()), i);
                }
            }
        }
        let scope = Scope {
            chunks: &chunks,
            modules: modules.iter().map(|m| (m.module.as_str(), m)).collect(),
            defs,
            module_chunk,
        };
        let mut edges: HashSet<(usize, usize, EdgeKind)> = HashSet::new();
        let index_of: HashMap<&str, usize> = chunks.iter().enumerate().map(|(i, c)| (c.id.as_str(), i)).collect();
        for (i, c) in chunks.iter().enumerate() {
            // contains
            match c.kind {
                ChunkKind::Module => {}
                ChunkKind::Method => {
                    if let Some((class, _)) = c.name.rsplit_once('.')
                        && let Some(&owner) = index_of.get(format!("{}::{class}", c.file).as_str())
                    {
                        edges.insert((owner, i, EdgeKind::Contains));
                    }
                }
                _ => {
                    let parent = match c.name.rsplit_once('.') {
                        Some((class, _)) => index_of.get(format!("{}::{class}", c.file).as_str()).copied(),
                        None => scope.module_chunk.get(c.module.as_str()).copied(),
                    };
                    if let Some(p) = parent {
                        edges.insert((p, i, EdgeKind::Contains));
                    }
                }
            }
            // calls (any name the body reads that is a project definition)
            for used in &c.uses {
                if let Some(t) = resolve(&scope, c, used)
                    && t != i
                {
                    edges.insert((i, t, EdgeKind::Calls));
                }
            }
            // inherits
            for base in &c.bases {
                if let Some(t) = scope.lookup(&c.module, base, 3)
                    && chunks[t].kind == ChunkKind::Class
                {
                    edges.insert((i, t, EdgeKind::Inherits));
                }
            }
        }
        // imports: module -> each project definition or module it imports
        for m in modules {
            let Some(&from) = scope.module_chunk.get(m.module.as_str()) else {
                continue;
            };
            for imp in &m.imports {
                let target = match imp.name.as_deref() {
                    Some("*") | None => scope.module_chunk.get(imp.module.as_str()).copied(),
                    Some(n) => scope.lookup(&imp.module, n, 3),
                };
                if let Some(t) = target
                    && t != from
                {
                    edges.insert((from, t, EdgeKind::Imports));
                }
            }
        }
        let mut edges: Vec<_> = edges.into_iter().collect();
        edges.sort_unstable_by_key(|&(a, b, k)| (a, b, k as u8));
        let mut g = Graph {
            chunks,
            edges,
            ..Graph::default()
        };
        g.reindex();
        g
    }

    /// Rebuilds the adjacency lists and the id map (after deserialising).
    pub fn reindex(&mut self) {
        self.out = vec![Vec::new(); self.chunks.len()];
        self.inn = vec![Vec::new(); self.chunks.len()];
        for &(a, b, k) in &self.edges {
            self.out[a].push((b, k));
            self.inn[b].push((a, k));
        }
        self.by_id = self.chunks.iter().enumerate().map(|(i, c)| (c.id.clone(), i)).collect();
    }

    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
    }

    pub fn outgoing(&self, i: usize) -> &[(usize, EdgeKind)] {
        &self.out[i]
    }

    pub fn incoming(&self, i: usize) -> &[(usize, EdgeKind)] {
        &self.inn[i]
    }

    /// The definitions (functions, methods, classes) a chunk's body names.
    pub fn callees(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        self.out[i]
            .iter()
            .filter(|(t, k)| *k == EdgeKind::Calls && self.chunks[*t].kind != ChunkKind::Module)
            .map(|(t, _)| *t)
    }
}

/// The chunk a name used in `c` refers to.
fn resolve(scope: &Scope<'_>, c: &Chunk, used: &str) -> Option<usize> {
    let (head, rest) = match used.split_once('.') {
        Some((h, r)) => (h, Some(r)),
        None => (used, None),
    };
    if matches!(head, "self" | "cls") {
        let class = c.name.rsplit_once('.').map(|(class, _)| class)?;
        let member = rest?.split('.').next()?;
        let own = scope.defs.get(&(c.module.as_str(), format!("{class}.{member}").as_str())).copied();
        if own.is_some() {
            return own;
        }
        // Inherited: a base class of the project that defines it.
        let class_chunk = scope.defs.get(&(c.module.as_str(), class))?;
        for base in &scope.chunks[*class_chunk].bases {
            if let Some(b) = scope.lookup(&c.module, base, 3)
                && let Some(m) = scope.member(b, member, 3)
            {
                return Some(m);
            }
        }
        return None;
    }
    // Dotted names are tried whole first (`Class.method` defined here), then through the head.
    if let Some(&i) = scope.defs.get(&(c.module.as_str(), used)) {
        return Some(i);
    }
    let found = scope.lookup(&c.module, used, 3);
    if found.is_some() || rest.is_none() {
        return found;
    }
    // `a.b.c` when only `a.b` resolves: the longest prefix that does.
    let parts: Vec<&str> = used.split('.').collect();
    (1..parts.len())
        .rev()
        .find_map(|n| scope.lookup(&c.module, &parts[..n].join("."), 3))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo::index::chunks::cut;

    fn project() -> Graph {
        let files = [
            (
                "pkg/__init__.py",
                "from .core import *\nfrom .util import helper as public_helper\n",
            ),
            (
                "pkg/util.py",
                "def helper(x):\n    return x + 1\n\ndef other():\n    return 0\n\nclass Base:\n    def run(self):\n        return 1\n",
            ),
            (
                "pkg/core.py",
                "from . import util\nfrom .util import Base\n\ndef main(x):\n    return util.helper(x) + util.other()\n\nclass Job(Base):\n    def go(self):\n        return self.run() + self.step()\n    def step(self):\n        return main(2)\n",
            ),
            (
                "tests/test_core.py",
                "from pkg import main, public_helper\n\ndef test_main():\n    assert main(1) == public_helper(1)\n",
            ),
        ];
        let modules: Vec<Module> = files.iter().map(|(f, s)| cut(f, s).unwrap()).collect();
        Graph::build(&modules)
    }

    fn edges_from(g: &Graph, id: &str, kind: EdgeKind) -> Vec<String> {
        let i = g.index_of(id).unwrap();
        let mut v: Vec<String> = g
            .outgoing(i)
            .iter()
            .filter(|(_, k)| *k == kind)
            .map(|(t, _)| g.chunks[*t].id.clone())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn names_resolve_through_imports_modules_classes_and_re_exports() {
        let g = project();
        assert_eq!(
            edges_from(&g, "pkg/core.py::main", EdgeKind::Calls),
            ["pkg/util.py::helper", "pkg/util.py::other"]
        );
        // self.run is inherited from Base (imported from util); self.step is the class's own.
        assert_eq!(
            edges_from(&g, "pkg/core.py::Job.go", EdgeKind::Calls),
            ["pkg/core.py::Job.step", "pkg/util.py::Base.run"]
        );
        assert_eq!(edges_from(&g, "pkg/core.py::Job", EdgeKind::Inherits), ["pkg/util.py::Base"]);
        // The test reaches main through `from .core import *` and helper through an alias.
        assert_eq!(
            edges_from(&g, "tests/test_core.py::test_main", EdgeKind::Calls),
            ["pkg/core.py::main", "pkg/util.py::helper"]
        );
        assert_eq!(
            edges_from(&g, "pkg/core.py::Job", EdgeKind::Contains),
            ["pkg/core.py::Job.go", "pkg/core.py::Job.step"]
        );
        assert!(edges_from(&g, "pkg/core.py::<module>", EdgeKind::Imports).contains(&"pkg/util.py::Base".to_string()));
        let callers: Vec<&str> = g
            .incoming(g.index_of("pkg/core.py::main").unwrap())
            .iter()
            .filter(|(_, k)| *k == EdgeKind::Calls)
            .map(|(f, _)| g.chunks[*f].id.as_str())
            .collect();
        assert_eq!(callers.len(), 2, "{callers:?}");
    }
}
