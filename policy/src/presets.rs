//! Built-in path lists: devices, credential files, installed software.

/// Devices every process may read and write (step 4 of the rule order).
/// `/dev/pts` covers the pseudo-terminals beneath it.
pub const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// Credential files and directories under `$HOME`, denied always when
/// `secrets = true`.
pub const SECRETS: &[&str] = &[
    "~/.ssh",
    "~/.aws",
    "~/.gnupg",
    "~/.netrc",
    "~/.git-credentials",
    "~/.docker/config.json",
    "~/.kube/config",
    "~/.cargo/credentials*",
    "~/.pypirc",
    "~/.npmrc",
    "~/.config/gh",
    "~/.local/share/keyrings",
    // Package managers' files that hold nothing but credentials: Maven's
    // master password, RubyGems' API keys, Poetry's stored passwords.
    "~/.m2/settings-security.xml",
    "~/.gem/credentials",
    "~/.local/share/gem/credentials",
    "~/.config/pypoetry/auth.toml",
];

/// The system's credential files: password hashes, host and service
/// private keys, stored network passwords. `fsguard run`'s Landlock ruleset
/// grants `/etc` for reading (glibc reads its NSS files unseen), and leaves
/// these out of it whenever the policy refuses to read them (with a root,
/// it does: they are no `system` location). Only root can read most of
/// them anyway.
pub const SYSTEM_CREDENTIALS: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/security/opasswd",
    "/etc/ssh/ssh_host_rsa_key",
    "/etc/ssh/ssh_host_ecdsa_key",
    "/etc/ssh/ssh_host_ed25519_key",
    "/etc/ssh/ssh_host_dsa_key",
    "/etc/ssl/private",
    "/etc/krb5.keytab",
    "/etc/NetworkManager/system-connections",
    "/etc/wireguard",
];

/// Locations of installed software readable under a root when
/// `system = true`. Install prefixes of the main executable and of each
/// `PATH` directory are added at load.
pub const SYSTEM: &[&str] = &[
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/bin",
    "/sbin",
    // The /etc files a C, Python or shell runtime reads to start; not passwd.
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/nsswitch.conf",
    "/etc/host.conf",
    "/etc/hosts",
    "/etc/resolv.conf",
    "/etc/gai.conf",
    "/etc/locale.alias",
    "/etc/locale.conf",
    "/etc/default/locale",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/mime.types",
    "/etc/os-release",
    "/etc/debian_version",
    "/etc/terminfo",
    "/etc/inputrc",
    "/etc/magic",
    "/etc/gitconfig",
    "/etc/gitattributes",
    "/etc/alternatives",
    // Configuration files everyday tools treat as fatal when unreadable
    // (but fine when absent): pip, libcurl's LDAP, wget, OpenSSL, GnuTLS.
    "/etc/pip.conf",
    "/etc/xdg/pip",
    "/etc/ldap",
    "/etc/wgetrc",
    "/etc/gnutls",
    "/etc/pki",
    "/etc/crypto-policies",
    // Read-only kernel facts runtimes ask for (CPU count, memory, entropy).
    "/dev/urandom",
    "/dev/random",
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/stat",
    "/proc/filesystems",
    "/proc/cgroups",
    "/proc/sys/kernel/random",
    "/sys/devices/system/cpu",
    // Limits runtimes size themselves by (Rust's available_parallelism, Go,
    // Node and the JVM read the cgroup's cpu.max and memory.max; allocators
    // the overcommit and transparent hugepage settings); without them a
    // program in a container silently assumes the whole machine.
    "/sys/fs/cgroup",
    "/proc/sys/vm/overcommit_memory",
    "/sys/kernel/mm/transparent_hugepage",
    "/sys/kernel/mm/hugepages",
    // The JVM's and Maven's configuration: Debian keeps it in /etc and
    // links it from the install (`/usr/share/maven/bin/m2.conf`,
    // `/usr/lib/jvm/*/lib/jvm.cfg`); each `/etc/java-<version>-<vendor>` is
    // added at load.
    "/etc/maven",
    "/etc/java",
    // A stable host id, read by D-Bus, systemd tools and telemetry opt-outs.
    "/etc/machine-id",
];

/// The user's own tool configuration under `$HOME`, readable (never
/// writable) with the `system` locations: git and pip treat an unreadable
/// config as fatal. None of these holds credentials by design, and the
/// `secrets` preset beats them all (`~/.git-credentials`, `~/.netrc`,
/// `~/.pypirc`, `~/.config/gh` stay denied). Files that may carry passwords
/// (`~/.curlrc`, `~/.wgetrc`) are not listed: an unreadable one is skipped
/// by their tools.
pub const TOOL_CONFIGS: &[&str] = &[
    "~/.gitconfig",
    "~/.config/git",
    "~/.gitignore_global",
    "~/.config/pip",
    "~/.pip/pip.conf",
    "~/.inputrc",
    "~/.terminfo",
    "~/.config/matplotlib",
    // rustup's toolchains and settings: `~/.cargo/bin/cargo` is rustup's
    // proxy, which reads them to pick the toolchain it runs.
    "~/.rustup",
];

/// Entries of `/proc/<pid>` (and `/proc/<pid>/task/<tid>`) any user may
/// read about any process (what `ps` and `top` show), readable under a root
/// with the `proc` preset. Entries the kernel guards by ptrace rules
/// (`environ`, `mem`, `maps`, `auxv`, `fd`, `cwd`, `exe`, `io`, `stack`, …)
/// are not here: of other processes they stay refused.
pub const PROC_PUBLIC: &[&str] = &[
    "stat",
    "status",
    "statm",
    "cmdline",
    "comm",
    "cgroup",
    "loginuid",
    "sessionid",
    "oom_score",
    "oom_score_adj",
    "schedstat",
    "wchan",
];

/// Cache locations `fsguard run` points into its private `TMPDIR` with the
/// `cache` preset: `(variable, directory below TMPDIR)`. pip, virtualenv,
/// pytest plugins and most tools following the XDG rules cache under
/// `XDG_CACHE_HOME`; pip and virtualenv also have their own variables,
/// which win over it when set in the caller's environment, so they are set
/// too. The package managers' own: npm's cache (its `_cacache`, `_logs` and
/// update-notifier state live there), yarn's cache (v1 and berry) and
/// berry's global folder, pnpm's home (its store is `$PNPM_HOME/store`) and
/// state (`XDG_STATE_HOME`),
/// Go's build and module caches, Gradle's user home, RubyGems' and
/// Bundler's homes, uv's and Poetry's caches. Maven's local repository is
/// set through `MAVEN_OPTS` (`-Dmaven.repo.local`), by the CLI.
pub const CACHE_ENV: &[(&str, &str)] = &[
    ("XDG_CACHE_HOME", ".cache"),
    ("PIP_CACHE_DIR", ".cache/pip"),
    ("VIRTUALENV_OVERRIDE_APP_DATA", ".cache/virtualenv"),
    ("npm_config_cache", ".npm"),
    ("YARN_CACHE_FOLDER", ".cache/yarn"),
    ("YARN_GLOBAL_FOLDER", ".yarn/berry"),
    ("PNPM_HOME", ".local/share/pnpm"),
    // pnpm's update-check state; under a root the real one is refused anyway.
    ("XDG_STATE_HOME", ".local/state"),
    ("GOCACHE", ".cache/go-build"),
    ("GOMODCACHE", "go/pkg/mod"),
    ("GRADLE_USER_HOME", ".gradle"),
    ("GEM_HOME", ".gem"),
    ("BUNDLE_USER_HOME", ".bundle"),
    ("UV_CACHE_DIR", ".cache/uv"),
    ("POETRY_CACHE_DIR", ".cache/pypoetry"),
];
