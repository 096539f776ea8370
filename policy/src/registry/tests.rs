use super::*;

fn clean(kind: ConfigKind, text: &str) -> String {
    String::from_utf8(sanitize(kind, text.as_bytes()).unwrap()).unwrap()
}

/// No secret value of `secrets` is anywhere in `out`.
fn assert_none(out: &str, secrets: &[&str]) {
    for s in secrets {
        assert!(!out.contains(s), "{s:?} left in:\n{out}");
    }
}

#[test]
fn npmrc_keeps_registries_and_drops_every_credential() {
    let text = "\
; a comment
registry=https://npm.example.com/
@corp:registry=https://ci-user:S3CRET1@npm.corp.example/api/
//npm.corp.example/api/:_authToken=S3CRET2
//npm.example.com/:_auth=S3CRET3
//npm.example.com/:username=S3CRET4
//npm.example.com/:_password=S3CRET5
_authToken=S3CRET6
_auth = S3CRET7
email=S3CRET8@example.com
always-auth=true
key=-----S3CRET9-----
  //indented.example/:_authToken=S3CRET10
save-exact=true
proxy=http://proxyuser:S3CRET11@proxy.example:3128
init-author-email=S3CRET12
";
    let out = clean(ConfigKind::Npmrc, text);
    assert_none(
        &out,
        &[
            "S3CRET1",
            "S3CRET2",
            "S3CRET3",
            "S3CRET4",
            "S3CRET5",
            "S3CRET6",
            "S3CRET7",
            "S3CRET8",
            "S3CRET9",
            "S3CRET10",
            "S3CRET11",
            "S3CRET12",
            "ci-user",
            "proxyuser",
            "always-auth",
        ],
    );
    assert_eq!(
        out,
        "; a comment\nregistry=https://npm.example.com/\n\
         @corp:registry=https://npm.corp.example/api/\nsave-exact=true\n\
         proxy=http://proxy.example:3128\n"
    );
}

#[test]
fn npmrc_an_unknown_credential_form_is_not_copied() {
    // A key the sanitiser keeps but whose line still names a password.
    let e = sanitize(ConfigKind::Npmrc, b"registry=x # password=hunter2\n").unwrap_err();
    assert!(e.contains("line 1"), "{e}");
    assert!(sanitize(ConfigKind::Npmrc, b"[broken\n").is_err());
    assert!(sanitize(ConfigKind::Npmrc, b"registry=\xff\n").is_err());
    assert!(sanitize(ConfigKind::Npmrc, b"a=b\0\n").is_err());
}

#[test]
fn yarnrc_drops_auth_keys_with_their_values() {
    let text = "\
npmRegistryServer: \"https://npm.example.com\"
npmAuthToken: S3CRET1
npmAlwaysAuth: true
npmScopes:
  corp:
    npmRegistryServer: \"https://bot:S3CRET2@npm.corp.example\"
    npmAuthToken: \"S3CRET3\"
    npmAuthIdent: \"user:S3CRET4\"
npmRegistries:
  \"//npm.corp.example\":
    npmAuthToken: >-
      S3CRET5
    npmPublishRegistry: https://npm.corp.example
cacheFolder: \"${HOME}/.yarn/cache\"
enableTelemetry: false
";
    let out = clean(ConfigKind::YarnrcYml, text);
    assert_none(
        &out,
        &[
            "S3CRET1",
            "S3CRET2",
            "S3CRET3",
            "S3CRET4",
            "S3CRET5",
            "AlwaysAuth",
            "bot",
        ],
    );
    assert_eq!(
        out,
        "npmRegistryServer: \"https://npm.example.com\"\nnpmScopes:\n  corp:\n    \
         npmRegistryServer: \"https://npm.corp.example\"\nnpmRegistries:\n  \
         \"//npm.corp.example\":\n    npmPublishRegistry: https://npm.corp.example\n\
         cacheFolder: \"${HOME}/.yarn/cache\"\nenableTelemetry: false\n"
    );
}

#[test]
fn yarnrc_flow_mappings_and_tabs_are_not_copied() {
    for bad in [
        "npmScopes: {corp: {npmAuthToken: S3CRET}}\n",
        "npmScopes:\n\tcorp: x\n",
        "x: a # npmAuthToken S3CRET\n",
    ] {
        assert!(
            sanitize(ConfigKind::YarnrcYml, bad.as_bytes()).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn pip_conf_removes_credentials_from_index_urls() {
    let text = "\
[global]
index-url = https://user:S3CRET1@pypi.corp.example/simple
extra-index-url =
    https://__token__:S3CRET2@extra.example/simple
    https://plain.example/simple
timeout = 30
client-cert = /home/u/S3CRET3.pem
[install]
trusted-host = pypi.corp.example
password =
    S3CRET4
";
    let out = clean(ConfigKind::PipConf, text);
    assert_none(
        &out,
        &["S3CRET1", "S3CRET2", "S3CRET4", "user", "__token__"],
    );
    assert!(
        out.contains("index-url = https://pypi.corp.example/simple\n"),
        "{out}"
    );
    assert!(out.contains("    https://extra.example/simple\n"), "{out}");
    assert!(out.contains("    https://plain.example/simple\n"), "{out}");
    assert!(out.contains("timeout = 30\n"), "{out}");
    assert!(out.contains("trusted-host = pypi.corp.example\n"), "{out}");
    // A path to a key is not the key: kept (the file itself is guarded by
    // the policy).
    assert!(out.contains("client-cert"), "{out}");
    assert!(sanitize(ConfigKind::PipConf, b"index-url = x\n").is_err());
}

#[test]
fn cargo_config_keeps_settings_and_drops_tokens() {
    let text = r#"
[registry]
default = "corp"
token = "S3CRET1"
global-credential-providers = ["cargo:token"]

[registries.corp]
index = "sparse+https://bot:S3CRET2@cargo.corp.example/index/"
token = "S3CRET3"
credential-provider = "cargo:S3CRET4"

[http]
proxy = "proxyuser:S3CRET5@proxy.example:3128"

[env]
API_KEY = "S3CRET6"
RUST_LOG = "info"

[build]
jobs = 2
"#;
    let out = clean(ConfigKind::CargoToml, text);
    assert_none(
        &out,
        &[
            "S3CRET1",
            "S3CRET2",
            "S3CRET3",
            "S3CRET4",
            "S3CRET5",
            "S3CRET6",
            "bot",
            "proxyuser",
        ],
    );
    let v: toml::Table = out.parse().unwrap();
    assert_eq!(v["registry"]["default"].as_str(), Some("corp"));
    assert_eq!(
        v["registries"]["corp"]["index"].as_str(),
        Some("sparse+https://cargo.corp.example/index/")
    );
    assert_eq!(v["http"]["proxy"].as_str(), Some("proxy.example:3128"));
    assert_eq!(v["env"]["RUST_LOG"].as_str(), Some("info"));
    assert_eq!(v["build"]["jobs"].as_integer(), Some(2));
    assert!(sanitize(ConfigKind::CargoToml, b"[registry\ntoken = 'x'\n").is_err());
}

#[test]
fn maven_settings_lose_servers_and_secret_properties() {
    let text = r#"<?xml version="1.0" encoding="UTF-8"?>
<settings>
  <!-- <server><password>S3CRET0</password></server> -->
  <localRepository>/data/m2</localRepository>
  <servers>
    <server>
      <id>corp</id>
      <username>S3CRET1</username>
      <password>S3CRET2</password>
    </server>
  </servers>
  <mirrors>
    <mirror>
      <id>corp</id>
      <url>https://bot:S3CRET3@maven.corp.example/repo</url>
      <mirrorOf>*</mirrorOf>
    </mirror>
  </mirrors>
  <proxies>
    <proxy><host>proxy.example</host><username>S3CRET4</username><password>S3CRET5</password></proxy>
  </proxies>
  <profiles>
    <profile>
      <id>release</id>
      <properties>
        <gpg.passphrase>S3CRET6</gpg.passphrase>
        <sonar.token>S3CRET7</sonar.token>
        <sonar.login>S3CRET8</sonar.login>
        <java.version>17</java.version>
      </properties>
    </profile>
  </profiles>
</settings>
"#;
    let out = clean(ConfigKind::MavenSettings, text);
    assert_none(
        &out,
        &[
            "S3CRET0", "S3CRET1", "S3CRET2", "S3CRET3", "S3CRET4", "S3CRET5", "S3CRET6", "S3CRET7",
            "S3CRET8", "<servers", "bot",
        ],
    );
    for kept in [
        "<localRepository>/data/m2</localRepository>",
        "<url>https://maven.corp.example/repo</url>",
        "<mirrorOf>*</mirrorOf>",
        "<host>proxy.example</host>",
        "<java.version>17</java.version>",
        "<id>release</id>",
    ] {
        assert!(out.contains(kept), "{kept}:\n{out}");
    }
    for bad in [
        "<settings><servers><server>",
        "<settings><!-- open",
        "<settings><password><![CDATA[S3CRET]]></password></settings>",
        "<!DOCTYPE x [<!ENTITY s SYSTEM \"file:///home/u/.npmrc\">]><settings/>",
    ] {
        assert!(
            sanitize(ConfigKind::MavenSettings, bad.as_bytes()).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn gradle_properties_drop_secret_keys_and_their_continuations() {
    let text = "\
# build settings
org.gradle.jvmargs=-Xmx2g \\
  -Dfile.encoding=UTF-8
org.gradle.parallel=true
mavenUser=S3CRET1
mavenPassword=S3CRET2
signing.keyId=S3CRET3
signing.secretKeyRingFile=/home/u/S3CRET4.gpg
nexusToken : S3CRET5
systemProp.http.proxyPassword S3CRET6
githubApiKey=S3CRET7 \\
  S3CRET8
repoUrl=https://u:S3CRET9@repo.example/m2
";
    let out = clean(ConfigKind::GradleProperties, text);
    assert_none(
        &out,
        &[
            "S3CRET1", "S3CRET2", "S3CRET3", "S3CRET4", "S3CRET5", "S3CRET6", "S3CRET7", "S3CRET8",
            "S3CRET9",
        ],
    );
    assert_eq!(
        out,
        "# build settings\norg.gradle.jvmargs=-Xmx2g \\\n  -Dfile.encoding=UTF-8\n\
         org.gradle.parallel=true\nrepoUrl=https://repo.example/m2\n"
    );
}

#[test]
fn secret_keys_when_unsure_are_secret() {
    for k in [
        "_authToken",
        "//host/:_auth",
        "password",
        "mavenUser",
        "nexusUsername",
        "API_KEY",
        "signing.keyId",
        "npmAuthIdent",
        "email",
        "credential-provider",
        "secretKey",
    ] {
        assert!(is_secret_key(k), "{k}");
    }
    for k in [
        "registry",
        "@corp:registry",
        "index-url",
        "extra-index-url",
        "npmRegistryServer",
        "org.gradle.jvmargs",
        "cafile",
        "strict-ssl",
        "keyring-provider",
        "cacheFolder",
        "mirrorOf",
        "url",
        "id",
    ] {
        assert!(!is_secret_key(k), "{k}");
    }
}

#[test]
fn url_credentials_are_removed_and_the_rest_kept() {
    assert_eq!(
        strip_url_credentials("a https://u:p@h.example:8/x?y=1 b http://h2/ c"),
        "a https://h.example:8/x?y=1 b http://h2/ c"
    );
    assert_eq!(strip_url_credentials("git+ssh://git@h/x"), "git+ssh://h/x");
    assert_eq!(strip_url_credentials("no url here"), "no url here");
}
