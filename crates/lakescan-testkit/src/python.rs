//! [`interpreter`]: the Python that runs the tests' servers (moto's S3), set up by the tests
//! themselves.
//!
//! | tried in order | used when |
//! |---|---|
//! | `LAKESCAN_PYTHON` | set: the interpreter it names, as it is |
//! | `python3` on `PATH` | it imports what the servers import |
//! | a virtual environment of the tests' own | otherwise: made once with `python3 -m venv` under the target directory (`<target>/<profile>/lakescan-test-venv`, or `LAKESCAN_TEST_VENV`), with the pinned packages of `requirements-moto.txt` installed from PyPI |
//!
//! Test binaries run side by side (and tests inside one binary on several threads): the
//! environment is made under an exclusive lock on a file beside it, and a marker holding the
//! requirements it was made from says it is complete; a run that finds the marker uses it,
//! one that finds a half-made or outdated environment makes it again. A `python3` without
//! `venv` (Debian's `python3` without `python3-venv`) falls back to `pip install --target`
//! into the same folder. Every step is bounded (pip's own network timeout and retries).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// What the S3 server imports (`moto.py`).
const SERVER_IMPORTS: &str = "import moto.moto_server.werkzeug_app, werkzeug.serving, flask_cors";

/// The packages the S3 server needs, pinned.
const REQUIREMENTS: &str = include_str!("requirements-moto.txt");

/// Marker of a complete environment: holds the requirements it was made from.
const MARKER: &str = "lakescan-requirements.txt";

/// A Python to run the servers with.
#[derive(Debug, Clone)]
pub struct Interpreter {
    /// The executable.
    pub program: PathBuf,
    /// A `PYTHONPATH` to run it with (packages installed with `--target`).
    pub python_path: Option<PathBuf>,
}

impl Interpreter {
    /// A command that runs this interpreter.
    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        if let Some(path) = &self.python_path {
            command.env("PYTHONPATH", path);
        }
        command
    }
}

/// The interpreter for the test servers (see the module docs), set up on first use; the
/// error says what is missing and how to provide it.
pub fn interpreter() -> Result<Interpreter, String> {
    static CHOSEN: OnceLock<Result<Interpreter, String>> = OnceLock::new();
    CHOSEN.get_or_init(choose).clone()
}

fn choose() -> Result<Interpreter, String> {
    if let Some(program) = std::env::var_os("LAKESCAN_PYTHON") {
        return Ok(plain(PathBuf::from(program)));
    }
    let system = plain(PathBuf::from("python3"));
    if imports_servers(&system) {
        return Ok(system);
    }
    let dir = venv_dir()?;
    own_environment(&dir)
}

fn plain(program: PathBuf) -> Interpreter {
    Interpreter {
        program,
        python_path: None,
    }
}

/// Whether `python` imports what the servers import.
fn imports_servers(python: &Interpreter) -> bool {
    python
        .command()
        .args(["-c", SERVER_IMPORTS])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Where the tests' own environment lives: `LAKESCAN_TEST_VENV`, else beside the running
/// binary's profile directory (`target/debug/deps/x` → `target/debug/lakescan-test-venv`).
fn venv_dir() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("LAKESCAN_TEST_VENV") {
        return Ok(PathBuf::from(dir));
    }
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find the running binary for the test venv: {e}"))?;
    let mut dir = exe
        .parent()
        .ok_or("the running binary has no directory")?
        .to_path_buf();
    if dir.file_name().is_some_and(|n| n == "deps") {
        dir.pop();
    }
    Ok(dir.join("lakescan-test-venv"))
}

/// The environment at `dir`, made (once, under its lock) when missing or outdated.
fn own_environment(dir: &Path) -> Result<Interpreter, String> {
    let lock_path = dir.with_extension("lock");
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    let lock = std::fs::File::create(&lock_path)
        .map_err(|e| format!("cannot create {}: {e}", lock_path.display()))?;
    lock.lock()
        .map_err(|e| format!("cannot lock {}: {e}", lock_path.display()))?;
    let made = match std::fs::read_to_string(dir.join(MARKER)) {
        Ok(marker) if marker == REQUIREMENTS => Ok(installed(dir)),
        _ => make(dir),
    };
    // Dropping the file releases the lock.
    drop(lock);
    let python = made?;
    match imports_servers(&python) {
        true => Ok(python),
        false => Err(format!(
            "the test environment at {} does not import moto; remove it and run again",
            dir.display()
        )),
    }
}

/// The interpreter of a complete environment at `dir`.
fn installed(dir: &Path) -> Interpreter {
    let venv_python = dir.join("bin").join("python");
    match venv_python.exists() {
        true => plain(venv_python),
        false => Interpreter {
            program: PathBuf::from("python3"),
            python_path: Some(dir.join("site")),
        },
    }
}

/// Makes the environment at `dir` from scratch: a venv with the requirements, or, without
/// `venv`, the requirements installed with `--target` for the system `python3`.
fn make(dir: &Path) -> Result<Interpreter, String> {
    let fresh = |dir: &Path| -> Result<(), String> {
        if dir.exists() {
            std::fs::remove_dir_all(dir)
                .map_err(|e| format!("cannot remove the outdated {}: {e}", dir.display()))?;
        }
        Ok(())
    };
    fresh(dir)?;
    let python = match run(Command::new("python3").args(["-m", "venv"]).arg(dir)) {
        Ok(()) => {
            let python = plain(dir.join("bin").join("python"));
            pip_install(&python, dir, None)?;
            python
        }
        Err(venv_error) => {
            fresh(dir)?;
            let site = dir.join("site");
            let python = Interpreter {
                program: PathBuf::from("python3"),
                python_path: Some(site.clone()),
            };
            pip_install(&python, dir, Some(&site)).map_err(|pip_error| {
                format!(
                    "python3 lacks moto, and the tests cannot make an environment for it: \
                     `python3 -m venv` failed ({venv_error}) and `python3 -m pip install \
                     --target` failed ({pip_error}); install python3's venv or pip module, \
                     or moto: pip install 'moto[server]'"
                )
            })?;
            python
        }
    };
    std::fs::write(dir.join(MARKER), REQUIREMENTS)
        .map_err(|e| format!("cannot write {}: {e}", dir.join(MARKER).display()))?;
    Ok(python)
}

/// `pip install` of the requirements with `python` (into `target` when given); the
/// requirements file is written into `dir`.
fn pip_install(python: &Interpreter, dir: &Path, target: Option<&Path>) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let requirements = dir.join("requirements.txt");
    std::fs::write(&requirements, REQUIREMENTS)
        .map_err(|e| format!("cannot write {}: {e}", requirements.display()))?;
    let mut command = Command::new(&python.program);
    command.args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-input",
        "--timeout",
        "60",
        "--retries",
        "3",
        "-r",
    ]);
    command.arg(&requirements);
    if let Some(target) = target {
        command.arg("--target").arg(target);
    }
    run(&mut command)
}

/// Runs `command`; the error holds the end of what it printed.
fn run(command: &mut Command) -> Result<(), String> {
    let output = command
        .output()
        .map_err(|e| format!("cannot run {:?}: {e}", command.get_program()))?;
    match output.status.success() {
        true => Ok(()),
        false => Err(tail(&output)),
    }
}

/// The last lines of a failed command's output.
fn tail(output: &Output) -> String {
    let text = String::from_utf8_lossy(&output.stderr);
    let text = match text.trim().is_empty() {
        true => String::from_utf8_lossy(&output.stdout),
        false => text,
    };
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(5)..].join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_requirements_pin_every_package() {
        let pins: Vec<&str> = REQUIREMENTS
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .collect();
        assert!(pins.iter().any(|p| p.starts_with("moto==")));
        for pin in pins {
            assert!(pin.contains("=="), "{pin} is not pinned");
        }
    }
}
