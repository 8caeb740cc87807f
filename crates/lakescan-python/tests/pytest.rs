//! The Python package's tests, run by `cargo test`: builds the extension (debug profile,
//! into the same target directory) as a wheel, installs it into a virtual environment of
//! the tests' own with datafusion-python 54.1.0, pyarrow, polars, DuckDB, pyiceberg,
//! fastavro and pytest from PyPI (and datafusion-python 55 on a path of its own, which the
//! package must refuse), and runs `python/tests` with pytest, with an S3 server on loopback
//! (moto, started and stopped here) for the object-store tests and Iceberg tables with
//! position deletes and deletion vectors written here (`tables`) for the delete tests.
//!
//! The environment is made once under the target directory
//! (`<target>/<profile>/lakescan-python-venv`, or `LAKESCAN_PYTHON_VENV`); a marker holding
//! the requirements says it is complete. Every step is bounded: pip's own network timeout
//! and retries, and a deadline on each command.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod tables;

/// What the tests install, pinned.
const REQUIREMENTS: &str = "\
maturin==1.16.0
datafusion==54.1.0
pyarrow==26.0.1
polars==2.1.0
duckdb==1.5.5
pyiceberg[sql-sqlite,pyiceberg-core]==0.12.0
pyiceberg-core==0.10.1
fastavro==1.13.1
cramjam==2.14.0
sqlalchemy==2.1.9
pytest==9.2.0
";

/// A datafusion-python the package must refuse (another DataFusion major), installed on
/// its own path beside the environment: the suite imports it in a subprocess.
const OTHER_DATAFUSION: &str = "datafusion==55.0.0";

/// The directory of [`OTHER_DATAFUSION`] in the environment.
const OTHER_DATAFUSION_DIR: &str = "datafusion-55";

/// Marker of a complete environment: holds the requirements it was made from.
const MARKER: &str = "lakescan-requirements.txt";

/// The longest any one command may take (a cold wheel build links the whole stack).
const DEADLINE: Duration = Duration::from_secs(30 * 60);

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `target/<profile>` of this test binary (`target/debug/deps/pytest-…` → `target/debug`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("no test binary path: {e}"));
    let deps = exe
        .parent()
        .unwrap_or_else(|| panic!("{} has no parent", exe.display()));
    deps.parent()
        .unwrap_or_else(|| panic!("{} has no parent", deps.display()))
        .to_path_buf()
}

/// Runs `command` to its end within [`DEADLINE`]; panics with its output otherwise.
fn run(mut command: Command, what: &str) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start {command:?}: {e}"));
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() > DEADLINE => {
                let _ = child.kill();
                panic!("{what}: still running after {DEADLINE:?}: {command:?}");
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(200)),
            Err(e) => panic!("{what}: {e}"),
        }
    }
    let output = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    if !output.status.success() {
        panic!(
            "{what} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// The tests' virtual environment, made on first use.
fn environment() -> PathBuf {
    let dir = std::env::var_os("LAKESCAN_PYTHON_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| profile_dir().join("lakescan-python-venv"));
    let marker = dir.join(MARKER);
    let made_from = format!("{REQUIREMENTS}{OTHER_DATAFUSION} (beside)\n");
    if std::fs::read_to_string(&marker).is_ok_and(|made| made == made_from) {
        return dir;
    }
    let _ = std::fs::remove_dir_all(&dir);
    let mut venv = Command::new("python3");
    venv.args(["-m", "venv"]).arg(&dir);
    run(venv, "python3 -m venv (install python3's venv module)");
    let requirements = dir.join("requirements.txt");
    std::fs::write(&requirements, REQUIREMENTS)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", requirements.display()));
    let mut pip = Command::new(dir.join("bin").join("python"));
    pip.args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
    ])
    .args(["--timeout", "60", "--retries", "3", "-r"])
    .arg(&requirements);
    run(pip, "pip install of the Python tests' requirements");
    let mut other = Command::new(dir.join("bin").join("python"));
    other
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(["--timeout", "60", "--retries", "3", "--no-deps", "--target"])
        .arg(dir.join(OTHER_DATAFUSION_DIR))
        .arg(OTHER_DATAFUSION);
    run(
        other,
        "pip install of another datafusion-python beside the environment",
    );
    std::fs::write(&marker, made_from)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", marker.display()));
    dir
}

/// The extension built as a wheel into `out` and installed into `venv`.
fn install_extension(venv: &Path, out: &Path) {
    let python = venv.join("bin").join("python");
    let target = profile_dir()
        .parent()
        .unwrap_or_else(|| panic!("no target directory"))
        .to_path_buf();
    let mut build = Command::new(venv.join("bin").join("maturin"));
    build
        .args(["build", "--profile", "dev", "--quiet", "-m"])
        .arg(crate_dir().join("Cargo.toml"))
        .arg("-i")
        .arg(&python)
        .arg("-o")
        .arg(out)
        .env("CARGO_TARGET_DIR", &target);
    run(build, "maturin build of the extension");
    let wheel = std::fs::read_dir(out)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", out.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .find(|path| path.extension().is_some_and(|ext| ext == "whl"))
        .unwrap_or_else(|| panic!("maturin left no wheel in {}", out.display()));
    let mut install = Command::new(&python);
    install
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--force-reinstall",
        ])
        .arg(&wheel);
    run(install, "pip install of the wheel");
}

/// `options` as a JSON object of strings.
fn json_object(options: &[(&str, String)]) -> String {
    let quote = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
    let pairs: Vec<String> = options
        .iter()
        .map(|(k, v)| format!("{}: {}", quote(k), quote(v)))
        .collect();
    format!("{{{}}}", pairs.join(", "))
}

#[test]
fn the_python_package_passes_its_pytest_suite() {
    // S3 for the suite's object-store tests: moto on loopback, stopped when the test ends.
    let s3 = lakescan_testkit::S3Server::start()
        .unwrap_or_else(|e| panic!("cannot start the S3 test server: {e}"));
    s3.create_bucket("lakescan-py")
        .unwrap_or_else(|e| panic!("cannot create the test bucket: {e}"));
    let venv = environment();
    let out = tempfile::tempdir().unwrap_or_else(|e| panic!("no temporary directory: {e}"));
    install_extension(&venv, out.path());
    let iceberg = out.path().join("iceberg");
    let described = tables::write(&iceberg)
        .unwrap_or_else(|e| panic!("cannot write the Iceberg test tables: {e}"));
    let repo = crate_dir().join("../..");
    let mut pytest = Command::new(venv.join("bin").join("python"));
    pytest
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(crate_dir().join("python").join("tests"))
        .env("LAKESCAN_REPO", &repo)
        .env("LAKESCAN_TEST_S3", json_object(&s3.options()))
        .env("LAKESCAN_TEST_BUCKET", "lakescan-py")
        .env("LAKESCAN_TEST_ICEBERG", described)
        .env("LAKESCAN_OTHER_DATAFUSION", venv.join(OTHER_DATAFUSION_DIR))
        .current_dir(out.path());
    run(pytest, "pytest of the Python package");
}
