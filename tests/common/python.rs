//! The Python interpreter the tests run under the library.

use super::env::bare_cmd;
use super::process::run;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Real path of the Python interpreter (`python3` on PATH may be a pyenv
/// shell shim; the surface tests want the interpreter itself).
pub fn python() -> &'static Path {
    static PY: OnceLock<PathBuf> = OnceLock::new();
    PY.get_or_init(|| {
        let o = run(bare_cmd("python3").args(["-c", "import sys; print(sys.executable)"]));
        assert!(o.status.success(), "python3 not usable:\n{}", o.describe());
        let p = PathBuf::from(o.stdout.trim());
        assert!(p.is_absolute(), "odd sys.executable: {:?}", o.stdout);
        p
    })
}
