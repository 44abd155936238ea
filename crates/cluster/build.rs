//! Compiles Kubernetes' own protobuf message definitions (the `generated.proto` files of k8s.io/api,
//! apimachinery, apiextensions-apiserver and kube-aggregator at v1.33, as the k8s-rs-pb package
//! ships them) into a FileDescriptorSet in OUT_DIR. The embedded API server decodes protobuf
//! request bodies against it (src/server/protobuf.rs). Nothing upstream is kept in the
//! repository: the files come from the build-dependency's package, the descriptor set from protox.

use std::{
    env,
    path::{Path, PathBuf},
    process::Command,
};

const PACKAGE: &str = "k8s-rs-pb";
const VERSION: &str = "0.5.0";
/// The directory inside the package that the `.proto` files' imports are relative to.
const TREE: &str = "src/v1_33";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=../../Cargo.lock");
    let root = match package_dir().or_else(|e| registry_dir().ok_or(e)) {
        Ok(dir) => dir.join(TREE),
        Err(e) => fail(&format!(
            "cannot find the {PACKAGE} {VERSION} package (the Kubernetes .proto files; it is a \
             build-dependency, so cargo has downloaded it): {e}"
        )),
    };
    let mut files = Vec::new();
    if let Err(e) = collect(&root, &root, &mut files) {
        fail(&format!("cannot list {}: {e}", root.display()));
    }
    // Served API groups plus what they import; not the metrics APIs nor apimachinery's test API.
    files.retain(|f| !f.starts_with("metrics/") && !f.contains("testapigroup"));
    files.sort();
    if files.is_empty() {
        fail(&format!("no .proto files under {}", root.display()));
    }
    let fds = protox::Compiler::new([&root])
        .map(|mut c| {
            c.include_imports(true).include_source_info(false);
            c
        })
        .and_then(|mut c| {
            c.open_files(&files)?;
            Ok(c.encode_file_descriptor_set())
        });
    let bytes = match fds {
        Ok(b) => b,
        Err(e) => fail(&format!("compiling the Kubernetes .proto files: {e}")),
    };
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap_or_default()).join("k8s.fds");
    if let Err(e) = std::fs::write(&out, bytes) {
        fail(&format!("writing {}: {e}", out.display()));
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(1)
}

/// The package's directory, as cargo resolved it (registry, vendor directory or patch).
fn package_dir() -> Result<PathBuf, String> {
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default();
    let out = Command::new(cargo)
        .current_dir(&manifest)
        .args(["metadata", "--format-version", "1", "--offline"])
        // Only this platform's packages: the others may not be downloaded.
        .args(
            env::var("TARGET")
                .map(|t| vec!["--filter-platform".to_string(), t])
                .unwrap_or_default(),
        )
        .output()
        .map_err(|e| format!("running cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let meta: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata output: {e}"))?;
    meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == PACKAGE && p["version"] == VERSION)
        .and_then(|p| p["manifest_path"].as_str())
        .and_then(|m| Path::new(m).parent())
        .map(Path::to_path_buf)
        .ok_or_else(|| format!("cargo metadata lists no {PACKAGE} {VERSION}"))
}

/// The package in cargo's registry sources, where cargo unpacks what it downloads (for when
/// `cargo metadata` cannot run offline).
fn registry_dir() -> Option<PathBuf> {
    let home = env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    std::fs::read_dir(home.join("registry").join("src"))
        .ok()?
        .filter_map(Result::ok)
        .map(|index| index.path().join(format!("{PACKAGE}-{VERSION}")))
        .find(|dir| dir.join(TREE).is_dir())
}

/// Every `.proto` file under `dir`, relative to `root` with `/` separators.
fn collect(root: &Path, dir: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect(root, &path, out)?;
        } else if path.extension().is_some_and(|e| e == "proto")
            && let Ok(rel) = path.strip_prefix(root)
        {
            let parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.push(parts.join("/"));
        }
    }
    Ok(())
}
