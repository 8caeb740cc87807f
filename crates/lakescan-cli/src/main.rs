//! `lakescan`: a small SQL command line for Apache DataFusion with lakescan's
//! Hive table support registered, modelled on `datafusion-cli`.
//!
//! ```text
//! lakescan demo [DIR]                       # write and query a demo warehouse
//! lakescan -c "SELECT 1" -f script.sql      # run statements, print results
//! lakescan                                  # interactive prompt on stdin
//! lakescan --ballista df://127.0.0.1:50050  # the same, on a lakescan Ballista cluster
//! ```

mod demo;
mod demo_iceberg;
mod demo_query;
mod error;
mod exec;
mod print;
mod repl;
mod split;
mod summary;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};
use datafusion::common::plan_datafusion_err;
use tokio::runtime::Runtime;

use crate::demo::DemoOptions;
use crate::error::{CliError, CliResult};
use crate::exec::Runner;
use crate::print::OutputFormat;

/// Command line arguments.
#[derive(Debug, Parser)]
#[command(
    name = "lakescan",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    /// Sub command; without one, statements from -c/-f or stdin are run.
    #[command(subcommand)]
    command: Option<Command>,

    /// Execute the given SQL statement(s); may be repeated.
    #[arg(short = 'c', long = "command", value_name = "SQL")]
    commands: Vec<String>,

    /// Execute the statements in FILE; may be repeated.
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    files: Vec<PathBuf>,

    /// Output format of query results.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    format: OutputFormat,

    /// Print only query results (no timing lines).
    #[arg(short, long)]
    quiet: bool,

    /// Register an Iceberg catalog as NAME (tables are NAME.namespace.table); may be repeated.
    /// URI: sqlite:///abs/catalog.db[?warehouse=/abs/wh] (created if missing),
    /// memory://?warehouse=/abs/wh, or http(s)://host/… (a REST catalog; query parameters
    /// such as warehouse, token, credential are passed on). A SQL catalog file holds the
    /// tables of every catalog name: NAME selects its own (PyIceberg's `SqlCatalog("default")`
    /// wrote its tables as `default`).
    #[arg(long = "iceberg-catalog", value_name = "NAME=URI")]
    iceberg_catalogs: Vec<String>,

    /// Run queries on the Ballista cluster whose scheduler is at URL (df://HOST:PORT): a
    /// `lakescan-scheduler` with `lakescan-executor`s.
    #[arg(long, value_name = "URL")]
    ballista: Option<String>,
}

/// Sub commands.
#[derive(Debug, Subcommand)]
enum Command {
    /// Write a demo Hive-partitioned table and an Iceberg table with deletes (in a SQLite
    /// catalog), and show how lakescan prunes and deletes.
    Demo {
        /// Directory for the demo warehouse [default: <tmp>/lakescan-demo].
        dir: Option<PathBuf>,

        /// Number of rows to generate (for tests and experiments).
        #[arg(long, hide = true, default_value_t = demo::DEFAULT_ROWS)]
        rows: usize,

        /// Also read the Hive table from S3: a local S3 server (moto, in a Python
        /// environment made on first use when `python3` lacks it) on 127.0.0.1, started and
        /// stopped by the demo.
        #[arg(long)]
        s3: bool,
    },
}

/// One `-c` or `-f` argument, in command line order.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Input {
    Sql(String),
    File(PathBuf),
}

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    match run(cli, &matches) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("Error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli, matches: &ArgMatches) -> CliResult<ExitCode> {
    let runtime = Runtime::new().map_err(|e| CliError::io("cannot start tokio runtime", e))?;
    if let Some(Command::Demo { dir, rows, s3 }) = &cli.command {
        let dir = dir.clone().unwrap_or_else(DemoOptions::default_dir);
        let options = DemoOptions {
            dir,
            rows: *rows,
            s3: *s3,
        };
        runtime.block_on(demo::run(&options))?;
        return Ok(ExitCode::SUCCESS);
    }
    let runner = match &cli.ballista {
        None => Runner::new(cli.format, cli.quiet)?,
        Some(url) => {
            let ctx = runtime.block_on(exec::cluster_context(url))?;
            Runner::with_context(ctx, cli.format, cli.quiet)
        }
    };
    for spec in &cli.iceberg_catalogs {
        let Some((name, uri)) = spec.split_once('=') else {
            return Err(CliError::DataFusion(plan_datafusion_err!(
                "--iceberg-catalog takes NAME=URI, got '{spec}'"
            )));
        };
        runtime.block_on(lakescan::iceberg::catalog::register_catalog(
            runner.context(),
            name,
            uri,
        ))?;
    }
    let inputs = ordered_inputs(&cli, matches);
    if inputs.is_empty() {
        let failed = repl::run(&runtime, &runner)?;
        return Ok(if failed {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        });
    }
    runtime.block_on(run_inputs(&runner, &inputs))?;
    Ok(ExitCode::SUCCESS)
}

/// `-c` and `-f` arguments interleaved in the order they were given.
fn ordered_inputs(cli: &Cli, matches: &ArgMatches) -> Vec<Input> {
    let commands = cli.commands.iter().cloned().map(Input::Sql);
    let files = cli.files.iter().cloned().map(Input::File);
    let mut indexed: Vec<(usize, Input)> = arg_indices(matches, "commands")
        .zip(commands)
        .chain(arg_indices(matches, "files").zip(files))
        .collect();
    indexed.sort_by_key(|(index, _)| *index);
    indexed.into_iter().map(|(_, input)| input).collect()
}

/// Command line positions of the values of argument `id`.
fn arg_indices<'a>(matches: &'a ArgMatches, id: &str) -> impl Iterator<Item = usize> + use<'a> {
    matches.indices_of(id).into_iter().flatten()
}

async fn run_inputs(runner: &Runner, inputs: &[Input]) -> CliResult<()> {
    for input in inputs {
        match input {
            Input::Sql(sql) => runner.run_script(sql).await?,
            Input::File(path) => runner.run_file(path).await?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(args: &[&str]) -> Vec<Input> {
        let matches = Cli::command()
            .try_get_matches_from(args)
            .unwrap_or_else(|e| panic!("{e}"));
        let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| panic!("{e}"));
        ordered_inputs(&cli, &matches)
    }

    #[test]
    fn keeps_command_line_order_of_commands_and_files() {
        let got = inputs(&[
            "lakescan", "-f", "a.sql", "-c", "SELECT 1", "--file", "b.sql",
        ]);
        assert_eq!(
            got,
            vec![
                Input::File("a.sql".into()),
                Input::Sql("SELECT 1".into()),
                Input::File("b.sql".into())
            ]
        );
    }

    #[test]
    fn no_inputs_means_interactive() {
        assert!(inputs(&["lakescan", "--format", "csv", "-q"]).is_empty());
    }

    #[test]
    fn parses_demo_sub_command() {
        let cli = Cli::try_parse_from(["lakescan", "demo", "/tmp/x", "--rows", "10"])
            .unwrap_or_else(|e| panic!("{e}"));
        match cli.command {
            Some(Command::Demo { dir, rows, .. }) => {
                assert_eq!(dir, Some(PathBuf::from("/tmp/x")));
                assert_eq!(rows, 10);
            }
            None => panic!("demo not parsed"),
        }
    }

    #[test]
    fn cli_definition_is_valid() {
        Cli::command().debug_assert();
    }
}
