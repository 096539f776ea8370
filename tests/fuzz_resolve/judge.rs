//! The oracle: judging the guarded run against the bare one.

use super::*;

// ---------------------------------------------------------------------------
// Judging
// ---------------------------------------------------------------------------

pub(crate) fn touched_outside(b: &Outcome) -> bool {
    b.effects.iter().any(|(rel, st)| {
        !inside(rel)
            || st
                .split(" from=")
                .nth(1)
                .is_some_and(|from| !inside(from.split(' ').next().unwrap_or("")))
    }) || b.obj.as_deref().is_some_and(|o| !inside(o))
        || b.probes.iter().any(Probe::outside)
}

/// Checks a dirfd open; Err(verdict) when it went wrong.
pub(crate) fn judge_dirfd(
    kind: Option<char>,
    b: &Option<DirOut>,
    g: &Option<DirOut>,
) -> Result<(), String> {
    let (Some(k), Some(b), Some(g)) = (kind, b, g) else {
        return Ok(());
    };
    let outside = b.obj.as_deref().is_some_and(|o| !inside(o))
        || b.probe.as_ref().is_some_and(Probe::outside);
    if k == 'P' || !outside {
        if b.ok == g.ok && b.errno == g.errno && b.obj == g.obj {
            return Ok(());
        }
        if k == 'R' && !g.ok && g.errno == EACCES {
            return Err("FALSE REFUSAL (dirfd open)".into());
        }
        return Err("MISMATCH (dirfd open)".into());
    }
    // An O_RDONLY open of a directory outside: refused; the fallback O_PATH
    // open names the same directory as bare.
    if g.ok {
        return Err("FALSE ALLOW (dirfd open, a read outside)".into());
    }
    if g.errno == EACCES || (!b.ok && g.errno == b.errno) {
        if b.ok && g.obj != b.obj {
            return Err(
                "MISMATCH (dirfd open: the O_PATH fallback names another directory)".into(),
            );
        }
        return Ok(());
    }
    Err("MISMATCH (dirfd open errno)".into())
}

pub(crate) fn judge(case: &Case, b: &Outcome, g: &Outcome) -> Result<(), String> {
    judge_dirfd(case.d1.as_ref().map(|d| d.0), &b.d1, &g.d1)?;
    judge_dirfd(case.d2.as_ref().map(|d| d.0), &b.d2, &g.d2)?;
    // The call itself runs with equivalent dirfds only if both name the same.
    for (x, y) in [(&b.d1, &g.d1), (&b.d2, &g.d2)] {
        if let (Some(x), Some(y)) = (x, y) {
            if x.obj != y.obj {
                return Ok(());
            }
        }
    }
    let outside = touched_outside(b);
    let g_refused = !g.ok && g.errno == EACCES;
    // Trace lines must match the refusals the library made.
    if g_refused && (b.ok || b.errno != EACCES) && g.blocked.is_empty() {
        return Err("MISMATCH (EACCES without a blocked trace line)".into());
    }
    if g.ok && !g.blocked.is_empty() {
        return Err("MISMATCH (a blocked trace line on a call that succeeded)".into());
    }
    let g_out_effects = g.effects.keys().any(|r| !inside(r));
    if b.ok {
        if outside {
            if names_above_root(case, b, g) {
                return Ok(());
            }
            if g.ok || g_out_effects {
                return Err("FALSE ALLOW".into());
            }
            if !g_refused || !g.effects.is_empty() {
                return Err("MISMATCH (bare touched outside; guarded failed otherwise)".into());
            }
            return Ok(());
        }
        if g_refused {
            return Err("FALSE REFUSAL".into());
        }
        if g.ok != b.ok || g.errno != b.errno || g.obj != b.obj || g.effects != b.effects {
            return Err("MISMATCH (inside: guarded did not do what bare did)".into());
        }
        return Ok(());
    }
    // Bare failed.
    if g.ok || !g.effects.is_empty() {
        return Err(if g_out_effects || (g.ok && outside) {
            "FALSE ALLOW (the kernel refused; guarded acted)".into()
        } else {
            "MISMATCH (the kernel refused; guarded acted)".into()
        });
    }
    if g.errno == b.errno {
        return Ok(());
    }
    if g_refused {
        if outside {
            return Ok(());
        }
        // "The call would have failed anyway": not a refusal that costs
        // anything, but not the kernel's answer either.
        return Err(
            "ERRNO (EACCES for a call the kernel fails anyway, with no probe outside)".into(),
        );
    }
    Err("ERRNO (both failed, nothing changed, another errno than the kernel's)".into())
}

/// A plain read-only open of a directory above the root gets a descriptor
/// that only names it (docs/policy.md, "Directories above the root"): the
/// same object as bare, an `O_PATH` descriptor, nothing changed, no trace
/// line. Anything else on an object outside stays a false allow.
fn names_above_root(case: &Case, b: &Outcome, g: &Outcome) -> bool {
    let plain = match case.call {
        "open" => case.args.get(1).is_some_and(|m| m == "r"),
        "openat" => case.args.get(1).is_some_and(|m| m == "r"),
        _ => false,
    };
    let above = b
        .obj
        .as_deref()
        .is_some_and(|o| o.is_empty() || ROOT.strip_prefix(o).is_some_and(|r| r.starts_with('/')));
    plain
        && above
        && g.ok
        && g.path_only
        && !b.path_only
        && g.obj == b.obj
        && g.effects.is_empty()
        && b.effects.is_empty()
}
