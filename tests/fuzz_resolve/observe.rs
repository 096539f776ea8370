//! Observing a run: the tree walk, effects, probes, and staging a case.

use super::*;

// ---------------------------------------------------------------------------
// Observing a run
// ---------------------------------------------------------------------------

pub(crate) type Id = (u64, u64);

pub(crate) struct Walk {
    /// relative path (to S) → (identity, observable state)
    pub(crate) entries: BTreeMap<String, (Id, String)>,
    pub(crate) by_id: HashMap<Id, String>,
}

/// The tree `S/1` (the calls reach nothing else), paths relative to S.
pub(crate) fn walk(s: &Path) -> Walk {
    let mut w = Walk {
        entries: BTreeMap::new(),
        by_id: HashMap::new(),
    };
    walk_into(s, &s.join(TOP), &mut w);
    w
}

pub(crate) fn walk_into(s: &Path, p: &Path, w: &mut Walk) {
    let rel = p.strip_prefix(s).unwrap().to_string_lossy().into_owned();
    let Ok(md) = std::fs::symlink_metadata(p) else {
        return;
    };
    let ft = md.file_type();
    let mut st = if ft.is_dir() {
        format!("dir mode={:o}", md.mode() & 0o7777)
    } else if ft.is_symlink() {
        format!(
            "link -> {}",
            std::fs::read_link(p)
                .map(|t| t.display().to_string())
                .unwrap_or_default()
        )
    } else if ft.is_file() {
        format!(
            "file mode={:o} content={:?}",
            md.mode() & 0o7777,
            String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default())
        )
    } else {
        format!("other mode={:o}", md.mode())
    };
    if md.mtime() == MAGIC_TIME {
        st.push_str(" mtime=MAGIC");
    }
    let id = (md.dev(), md.ino());
    w.by_id.entry(id).or_insert_with(|| rel.clone());
    w.entries.insert(rel, (id, st));
    if ft.is_dir() {
        if let Ok(rd) = std::fs::read_dir(p) {
            let mut v: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
            v.sort();
            for e in v {
                walk_into(s, &e, w);
            }
        }
    }
}

/// What changed: relative path → "removed" or its new state (with where
/// its inode was before, when elsewhere or new).
pub(crate) fn effects(pre: &Walk, post: &Walk) -> BTreeMap<String, String> {
    let mut e = BTreeMap::new();
    for (rel, (id, st)) in &post.entries {
        let origin = match pre.by_id.get(id) {
            Some(r) if r == rel => String::new(),
            Some(r) => format!(" from={r}"),
            None => " new".to_string(),
        };
        let now = format!("{st}{origin}");
        match pre.entries.get(rel) {
            Some((_, before)) if *before == now => {}
            _ => {
                e.insert(rel.clone(), now);
            }
        }
    }
    for rel in pre.entries.keys() {
        if !post.entries.contains_key(rel) {
            e.insert(rel.clone(), "removed".to_string());
        }
    }
    e
}

pub(crate) fn inside(rel: &str) -> bool {
    rel == ROOT || rel.strip_prefix(ROOT).is_some_and(|r| r.starts_with('/'))
}

/// A dev:ino from the runner, as a path relative to S ("?dev:ino" when it
/// is not in S at all).
pub(crate) fn name_of(id: &str, walks: &[&Walk]) -> Option<String> {
    let (d, i) = id.split_once(':')?;
    let id = (d.parse().ok()?, i.parse().ok()?);
    for w in walks {
        if let Some(r) = w.by_id.get(&id) {
            return Some(r.clone());
        }
    }
    Some(format!("?{}:{}", id.0, id.1))
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Probe {
    /// The object, by path.
    Obj(String),
    /// An entry: its path (directory holding it + name).
    Entry(String),
    /// Not resolvable (errno).
    Unresolved(i32),
}

impl Probe {
    pub(crate) fn outside(&self) -> bool {
        match self {
            Probe::Obj(p) | Probe::Entry(p) => !inside(p),
            Probe::Unresolved(_) => false,
        }
    }
}

pub(crate) fn parse_probe(s: &str, pre: &Walk) -> Probe {
    let f: Vec<&str> = s.splitn(4, ':').collect();
    match f.as_slice() {
        ["O", d, i] => Probe::Obj(name_of(&format!("{d}:{i}"), &[pre]).unwrap()),
        ["E", d, i, name] => {
            let dir = name_of(&format!("{d}:{i}"), &[pre]).unwrap();
            Probe::Entry(if dir.is_empty() {
                name.to_string()
            } else {
                format!("{dir}/{name}")
            })
        }
        ["X", e] => Probe::Unresolved(e.parse().unwrap_or(-1)),
        _ => Probe::Unresolved(-1),
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DirOut {
    pub(crate) ok: bool,
    pub(crate) errno: i32,
    pub(crate) obj: Option<String>,
    pub(crate) probe: Option<Probe>,
}

#[derive(Clone, Debug)]
pub(crate) struct Outcome {
    pub(crate) d1: Option<DirOut>,
    pub(crate) d2: Option<DirOut>,
    pub(crate) ok: bool,
    pub(crate) errno: i32,
    pub(crate) obj: Option<String>,
    /// The returned descriptor only names its object (`O_PATH`).
    pub(crate) path_only: bool,
    pub(crate) probes: Vec<Probe>,
    pub(crate) effects: BTreeMap<String, String>,
    pub(crate) blocked: Vec<String>,
    pub(crate) raw: String,
}

impl Outcome {
    pub(crate) fn show(&self) -> String {
        let mut s = format!(
            "ret={} errno={} obj={:?}",
            if self.ok { "ok" } else { "-1" },
            self.errno,
            self.obj
        );
        for (n, d) in [("dirfd1", &self.d1), ("dirfd2", &self.d2)] {
            if let Some(d) = d {
                let _ = write!(s, " {n}={d:?}");
            }
        }
        if !self.probes.is_empty() {
            let _ = write!(s, " probes={:?}", self.probes);
        }
        let _ = write!(s, " effects={:?}\n      runner: {}", self.effects, self.raw);
        for b in &self.blocked {
            let _ = write!(s, "\n      {b}");
        }
        s
    }
}

/// Builds trees and deletes used ones on a thread of its own: on a disk
/// filesystem that is most of a case's cost. A tree is built at
/// `S/stage/N/1/2/3/t` and renamed into place at `S/1` (its absolute
/// links already name `S/1/...`); a used one is renamed to `S/trash/N`
/// and deleted there.
pub(crate) struct Stager {
    pub(crate) s: PathBuf,
    pub(crate) jobs: Sender<(Option<Tree>, PathBuf)>,
    pub(crate) built: Receiver<PathBuf>,
    pub(crate) next: u64,
}

impl Stager {
    pub(crate) fn new(s: &Path) -> Stager {
        let (jobs, rx) = channel::<(Option<Tree>, PathBuf)>();
        let (tx, built) = channel();
        let top = s.to_path_buf();
        std::thread::spawn(move || {
            for (tree, dir) in rx {
                match tree {
                    Some(t) => {
                        let tdir = dir.join(TREE);
                        let built = std::fs::create_dir_all(&tdir)
                            .and_then(|_| build(&t, &tdir, &top.join(TREE)));
                        if built.is_err() || tx.send(dir).is_err() {
                            break;
                        }
                    }
                    None => {
                        let _ = std::fs::remove_dir_all(&dir);
                    }
                }
            }
        });
        for d in ["stage", "trash"] {
            std::fs::create_dir_all(s.join(d)).unwrap();
        }
        Stager {
            s: s.to_path_buf(),
            jobs,
            built,
            next: 0,
        }
    }

    /// Asks for a tree; trees come back in the order asked.
    pub(crate) fn order(&mut self, t: &Tree) {
        let dir = self.s.join("stage").join(self.next.to_string());
        self.next += 1;
        self.jobs.send((Some(t.clone()), dir)).unwrap();
    }

    /// Puts the next ordered tree in place; returns the path of `t`.
    pub(crate) fn install(&mut self) -> PathBuf {
        let dir = self.built.recv().expect("tree builder died");
        std::fs::rename(dir.join(TOP), self.s.join(TOP)).unwrap();
        self.jobs.send((None, dir)).unwrap();
        self.s.join(TREE)
    }

    /// Moves the used tree away.
    pub(crate) fn discard(&mut self) {
        let dir = self.s.join("trash").join(self.next.to_string());
        self.next += 1;
        std::fs::rename(self.s.join(TOP), &dir).unwrap();
        self.jobs.send((None, dir)).unwrap();
    }
}

/// Runs `case` in `r` on the next tree the stager has ready.
pub(crate) fn execute(r: &mut Runner, st: &mut Stager, case: &Case, id: u64) -> Outcome {
    let s = st.s.clone();
    let tdir = st.install();
    let pre = walk(&s);
    let (reply, err) = r.run(id, &case.line(id, &tdir));
    let post = walk(&s);
    st.discard();
    let fields: HashMap<&str, &str> = reply
        .split(' ')
        .skip(1)
        .filter_map(|kv| kv.split_once('='))
        .collect();
    let get = |k: &str| {
        *fields
            .get(k)
            .unwrap_or_else(|| panic!("runner answer without {k}: {reply}"))
    };
    let dir = |k: &str| -> Option<DirOut> {
        let v = get(k);
        if v == "-" {
            return None;
        }
        let (main, probe) = match v.split_once('|') {
            Some((m, p)) => (m, Some(parse_probe(p, &pre))),
            None => (v, None),
        };
        let f: Vec<&str> = main.split(':').collect();
        Some(DirOut {
            ok: f[0] == "0",
            errno: f[1].parse().unwrap(),
            obj: if f[2] == "-" {
                None
            } else {
                name_of(&format!("{}:{}", f[2], f[3]), &[&pre])
            },
            probe,
        })
    };
    let probes = match get("probes") {
        "-" => vec![],
        p => p.split(';').map(|x| parse_probe(x, &pre)).collect(),
    };
    Outcome {
        d1: dir("d1"),
        d2: dir("d2"),
        ok: get("ret") != "-1",
        errno: get("errno").parse().unwrap(),
        obj: match get("obj") {
            "-" => None,
            o => name_of(o, &[&post, &pre]),
        },
        path_only: get("path_only") == "1",
        probes,
        effects: effects(&pre, &post),
        blocked: err
            .into_iter()
            .filter(|l| l.contains("[fsguard] blocked"))
            .collect(),
        raw: reply,
    }
}
