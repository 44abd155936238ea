//! `S`'s command line: `kubectl [--kubeconfig F] [--context C] -n NS exec -it POD -c C -- sh`,
//! with the connection the console uses (its kubeconfig file, the context it is on now), and
//! where kubectl is (`PATH`). The runtime suspends the terminal and runs it.

use std::{
    ffi::OsString,
    path::{Path, PathBuf},
};

use crate::{app::shell::ShellRequest, cli::KubeArgs};

/// The shell run in the container (every image has `sh`; the simulated kubelet's too).
pub const SHELL: &str = "sh";

/// kubectl's arguments for the request: the console's kubeconfig flags, then `exec -it`.
pub fn kubectl_args(kube: &KubeArgs, req: &ShellRequest) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    if let Some(path) = &kube.kubeconfig {
        args.push("--kubeconfig".into());
        args.push(path.clone().into_os_string());
    }
    // The context the console is on now (`:ctx` may have moved it), else the flag's.
    if let Some(context) = req.context.as_ref().or(kube.context.as_ref()) {
        args.push("--context".into());
        args.push(context.into());
    }
    for arg in [
        "-n",
        req.namespace.as_str(),
        "exec",
        "-it",
        req.pod.as_str(),
        "-c",
        req.container.as_str(),
        "--",
        SHELL,
    ] {
        args.push(arg.into());
    }
    args
}

/// The command as a user would type it (for the status line and the log).
pub fn command_line(args: &[OsString]) -> String {
    let mut out = String::from("kubectl");
    for arg in args {
        let text = arg.to_string_lossy();
        out.push(' ');
        if text.is_empty() || text.contains([' ', '"', '\'', '$', '\\']) {
            out.push('\'');
            out.push_str(&text.replace('\'', r"'\''"));
            out.push('\'');
        } else {
            out.push_str(&text);
        }
    }
    out
}

/// `kubectl` on `path` (a `PATH`-style list), as the shell would find it.
pub fn find_kubectl(path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    let path = path?;
    std::env::split_paths(path)
        .map(|dir| dir.join("kubectl"))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// What the user reads when kubectl is missing.
pub fn kubectl_missing() -> String {
    "cannot open a shell: kubectl is not on PATH (the console runs `kubectl exec -it` for it; \
     install kubectl or add it to PATH)"
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(context: Option<&str>) -> ShellRequest {
        ShellRequest {
            namespace: "demo".into(),
            pod: "checkout-x7k2p".into(),
            container: "checkout".into(),
            context: context.map(str::to_owned),
            note: None,
        }
    }

    #[test]
    fn the_command_line_carries_the_consoles_connection() {
        let kube = KubeArgs {
            kubeconfig: Some("/tmp/demo kc".into()),
            context: Some("flag-ctx".into()),
            ..KubeArgs::default()
        };
        let args = kubectl_args(&kube, &req(Some("now-ctx")));
        assert_eq!(
            command_line(&args),
            "kubectl --kubeconfig '/tmp/demo kc' --context now-ctx -n demo exec -it \
             checkout-x7k2p -c checkout -- sh"
        );
        // No kubeconfig flag: kubectl reads $KUBECONFIG / ~/.kube/config as the console did.
        let args = kubectl_args(&KubeArgs::default(), &req(None));
        assert_eq!(
            command_line(&args),
            "kubectl -n demo exec -it checkout-x7k2p -c checkout -- sh"
        );
    }

    #[test]
    fn kubectl_is_looked_up_on_path() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(find_kubectl(Some(dir.path().as_os_str())), None);
        assert_eq!(find_kubectl(None), None);
        let bin = dir.path().join("kubectl");
        std::fs::write(&bin, "#!/bin/sh\n").unwrap_or_else(|e| panic!("{e}"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // Not executable: not a command.
            assert_eq!(find_kubectl(Some(dir.path().as_os_str())), None);
            std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755))
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let path = std::env::join_paths([Path::new("/nonexistent"), dir.path()])
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(find_kubectl(Some(&path)), Some(bin));
    }
}
