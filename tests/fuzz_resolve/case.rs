//! Random cases: a call and the paths it is given, walked from the tree.

use super::*;

// ---------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------

#[derive(Clone, Debug)]
pub(crate) struct Case {
    pub(crate) tree: Tree,
    pub(crate) cwd: String,
    pub(crate) d1: Option<(char, String)>,
    pub(crate) d2: Option<(char, String)>,
    pub(crate) call: &'static str,
    pub(crate) args: Vec<String>,
}

impl Case {
    pub(crate) fn line(&self, id: u64, tdir: &Path) -> String {
        let t = tdir.to_str().unwrap();
        let d = |d: &Option<(char, String)>| match d {
            None => "-".to_string(),
            Some((k, p)) => format!("{k}:{}", if p.is_empty() { "@" } else { p }),
        };
        let mut s = format!(
            "{id} {} {} {} {}",
            tdir.join(&self.cwd).display(),
            d(&self.d1),
            d(&self.d2),
            self.call
        );
        for a in &self.args {
            s.push(' ');
            s.push_str(if a.is_empty() { "@" } else { a });
        }
        s.replace(TOK, t)
    }

    pub(crate) fn show(&self) -> String {
        let d = |d: &Option<(char, String)>| match d {
            None => "AT_FDCWD".to_string(),
            Some(('R', p)) => format!("open({p:?}, O_RDONLY|O_DIRECTORY)"),
            Some((_, p)) => format!("open({p:?}, O_PATH|O_DIRECTORY)"),
        };
        format!(
            "  tree (t = {TOK}; root = t/root):\n{}  cwd: t/{}\n  dirfd1: {}\n  dirfd2: {}\n  call: {} {:?}\n",
            show_tree(&self.tree),
            self.cwd,
            d(&self.d1),
            d(&self.d2),
            self.call,
            self.args
        )
    }
}

/// A path from directory `start` (relative to t), by a random walk.
/// `fresh`: often end on a missing name (for creating calls).
pub(crate) fn gen_path(rng: &mut Rng, t: &Tree, start: &str, fresh: bool) -> String {
    if rng.pct(1) {
        return String::new();
    }
    let absolute = rng.pct(25);
    let mut out = if absolute {
        TOK.to_string()
    } else {
        String::new()
    };
    let mut cur: Option<String> = Some(if absolute {
        String::new()
    } else {
        start.to_string()
    });
    let steps = 1 + rng.below(4);
    let mut comps: Vec<String> = Vec::new();
    for step in 0..steps {
        let last = step + 1 == steps;
        let Some(c) = cur.clone() else { break };
        let kids = t.children(&c);
        let r = rng.below(100);
        let comp = if fresh && last && rng.pct(60) {
            rng.pick(NEW_NAMES).to_string()
        } else if r < 8 {
            ".".to_string()
        } else if r < 20 && !c.is_empty() {
            "..".to_string()
        } else if r < 28 || kids.is_empty() {
            rng.pick(NEW_NAMES).to_string()
        } else {
            let k = rng.pick(&kids);
            k.rel.rsplit('/').next().unwrap().to_string()
        };
        cur = match comp.as_str() {
            "." => Some(c),
            ".." => Some(parent_of(&c).to_string()),
            name => {
                let next = join(&c, name);
                match t.get(&next).map(|n| &n.kind) {
                    Some(Kind::Dir) => Some(next),
                    Some(Kind::Link(_)) => {
                        let mut budget = 40;
                        t.resolve(&c, name, true, &mut budget)
                            .filter(|r| t.is_dir(r))
                    }
                    _ => None,
                }
            }
        };
        comps.push(comp);
    }
    for (i, c) in comps.iter().enumerate() {
        if i > 0 || absolute {
            out.push_str(if rng.pct(8) { "//" } else { "/" });
        }
        out.push_str(c);
    }
    match rng.below(100) {
        0..=11 => out.push('/'),
        12..=15 => out.push_str("/."),
        _ => {}
    }
    out
}

/// A directory to start from: a real directory, sometimes named through a
/// link (the walk tells where it lands).
pub(crate) fn gen_dir(rng: &mut Rng, t: &Tree) -> (String, String) {
    let dirs = t.dirs();
    let d = rng.pick(&dirs).clone();
    if rng.pct(20) {
        let links: Vec<&Node> = t
            .nodes
            .iter()
            .filter(|n| matches!(n.kind, Kind::Link(_)))
            .collect();
        if !links.is_empty() {
            let l = rng.pick(&links);
            let mut budget = 40;
            if let Some(r) = t
                .resolve("", &l.rel, true, &mut budget)
                .filter(|r| t.is_dir(r))
            {
                return (format!("{TOK}/{}", l.rel), r);
            }
        }
    }
    let name = if d.is_empty() {
        TOK.to_string()
    } else {
        format!("{TOK}/{d}")
    };
    (name, d)
}

pub(crate) const OPEN_FLAGS: &[&str] = &[
    "r", "r", "w", "b", "wc", "wct", "bc", "rc", "rt", "wcx", "bcx", "rn", "wn", "wcn", "wcxn",
    "rd", "rnd", "wd", "wa", "wca", "wt", "rdc",
];

pub(crate) fn gen_case(seed: u64) -> Case {
    let rng = &mut Rng::new(seed);
    let tree = gen_tree(rng);
    let real_dirs = tree.dirs();
    let cwd = rng.pick(&real_dirs).clone();
    const CALLS: &[&str] = &[
        "open",
        "open",
        "openat",
        "openat",
        "creat",
        "fopen",
        "opendir",
        "unlink",
        "unlinkat",
        "rmdir",
        "mkdir",
        "mkdirat",
        "rename",
        "renameat",
        "symlink",
        "symlinkat",
        "link",
        "linkat",
        "chmod",
        "fchmodat",
        "truncate",
        "utimensat",
        "utimensat",
    ];
    let call = *rng.pick(CALLS);
    let at = call.ends_with("at");
    let two = matches!(call, "renameat" | "linkat");
    let mut d1 = None;
    let mut d2 = None;
    let mut start1 = cwd.clone();
    let mut start2 = cwd.clone();
    let dirfd = |rng: &mut Rng, start: &mut String| {
        if rng.pct(15) {
            return None; // AT_FDCWD
        }
        let (name, lands) = gen_dir(rng, &tree);
        *start = lands;
        Some((if rng.pct(50) { 'R' } else { 'P' }, name))
    };
    if at {
        d1 = dirfd(rng, &mut start1);
        if two {
            d2 = dirfd(rng, &mut start2);
        }
    }
    let p = |rng: &mut Rng, start: &str, fresh: bool| gen_path(rng, &tree, start, fresh);
    let args: Vec<String> = match call {
        "open" => vec![p(rng, &cwd, false), rng.pick(OPEN_FLAGS).to_string()],
        "openat" => vec![p(rng, &start1, false), rng.pick(OPEN_FLAGS).to_string()],
        "creat" => {
            let fresh = rng.pct(40);
            vec![p(rng, &cwd, fresh)]
        }
        "fopen" => vec![
            p(rng, &cwd, false),
            rng.pick(&["r", "w", "a", "r+", "wx", "a+", "re"])
                .to_string(),
        ],
        "opendir" | "unlink" | "rmdir" | "chmod" | "truncate" => vec![p(rng, &cwd, false)],
        "mkdir" => vec![p(rng, &cwd, true)],
        "unlinkat" => vec![
            p(rng, &start1, false),
            rng.pick(&["-", "-", "R"]).to_string(),
        ],
        "mkdirat" => vec![p(rng, &start1, true)],
        "rename" | "link" => vec![p(rng, &cwd, false), p(rng, &cwd, true)],
        "renameat" => vec![p(rng, &start1, false), p(rng, &start2, true)],
        "linkat" => vec![
            p(rng, &start1, false),
            p(rng, &start2, true),
            rng.pick(&["-", "f"]).to_string(),
        ],
        "symlink" | "symlinkat" => {
            let target = rng
                .pick(&["x", "../x", "{T}/outside/f", "{T}/root/f", "."])
                .to_string();
            let start = if call == "symlink" { &cwd } else { &start1 };
            vec![target, p(rng, start, true)]
        }
        "fchmodat" => vec![p(rng, &start1, false), rng.pick(&["-", "n"]).to_string()],
        "utimensat" => {
            let fl = rng.pick(&["-", "n", "e"]).to_string();
            let path = if fl == "e" && rng.pct(60) {
                String::new()
            } else {
                p(rng, &start1, false)
            };
            vec![path, fl]
        }
        _ => unreachable!(),
    };
    Case {
        tree,
        cwd,
        d1,
        d2,
        call,
        args,
    }
}
