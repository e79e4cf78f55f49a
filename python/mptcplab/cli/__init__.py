"""The `mptcplab` command: a typer app, one module per command group.

| module | commands |
|---|---|
| `run.py` | `run`, `pcap-summary` |
| `info.py` | `list`, `schema`, `validate` |
| `experiments.py` | `sweep`, `compare`, `optimize`, `reproduce`, `bench` |
| `results.py` | `plot`, `report` |
| `kernel.py` | `kernel selftest`, `kernel cleanup` |
| `present.py` | tables, progress bars, the run summary (nothing below the CLI imports it) |

Exit codes: 0 ok, 1 unexpected error, 2 bad input (`ScenarioError`, or bad arguments),
3 a Python plug-in failed (`PluginError`), 130 interrupted. Errors are one line on stderr
(`error: <field>: <message>`); a traceback only with --debug, which may stand anywhere on
the line (for a plug-in: its own traceback, chained).
"""
from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Sequence

import typer

from typer import Abort, BadParameter, Exit

# typer 0.29 carries its own click (typer._click); a usage error is BadParameter's base.
UsageError = BadParameter.__mro__[1]

from .. import _core
from ..errors import PluginError, ScenarioError, SimulationInterrupted, from_core
from . import experiments, info, kernel, results, run  # noqa: F401 - they add their commands
from .app import app

EXIT_OK, EXIT_ERROR, EXIT_BAD_INPUT, EXIT_PLUGIN, EXIT_INTERRUPTED = 0, 1, 2, 3, 130

__all__ = ["app", "main"]


def _one_line(text: str) -> str:
    return " ".join(str(text).split("\n")).strip()


def _report(message: str, debug: bool) -> None:
    if debug:
        traceback.print_exc()
    print(f"error: {_one_line(message)}", file=sys.stderr)


def _usage_field(err: UsageError) -> str:
    """The option or argument a usage error is about, as the user wrote it."""
    param = getattr(err, "param", None)
    if param is not None:
        opts = getattr(param, "opts", None) or []
        if opts and getattr(param, "param_type_name", "") == "option":
            return max(opts, key=len)
        return str(getattr(param, "metavar", None) or (param.name or "").upper())
    name = getattr(err, "option_name", None)
    if name:
        return name
    cmd = err.ctx.command_path if err.ctx is not None else "mptcplab"
    return cmd


def _usage_message(err: UsageError) -> str:
    if isinstance(err, BadParameter) and err.message:
        return err.message  # without click's "Invalid value for ..." prefix: the field says it
    return err.format_message()


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    # `--debug` is accepted anywhere before `--`: hand it to the root command.
    cut = args.index("--") if "--" in args else len(args)
    debug = "--debug" in args[:cut]
    if debug:
        args = ["--debug"] + [a for a in args[:cut] if a != "--debug"] + args[cut:]
    command = typer.main.get_command(app)
    if not [a for a in args if a != "--debug"]:
        typer.echo(command.get_help(typer.Context(command, info_name="mptcplab")), err=True)
        return EXIT_BAD_INPUT
    try:
        with command.make_context("mptcplab", args) as ctx:
            command.invoke(ctx)
        return EXIT_OK
    except Exit as done:  # --help, --version, typer.Exit(code)
        return int(done.exit_code or 0)
    except UsageError as err:
        _report(f"{_usage_field(err)}: {_usage_message(err)}", debug)
        return EXIT_BAD_INPUT
    except (KeyboardInterrupt, SimulationInterrupted, Abort):
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except ScenarioError as err:
        _report(f"{err.field}: {err.message}" if err.field else err.message, debug)
        return EXIT_BAD_INPUT
    except PluginError as err:
        _report(str(err), debug)
        return EXIT_PLUGIN
    except _core.ScenarioError as err:  # a core call outside core_errors(): same handling
        mapped = from_core(err)
        _report(f"{mapped.field}: {mapped.message}", debug)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # `mptcplab list | head`
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except Exception as err:  # noqa: BLE001 - the CLI's last line of defence
        _report(f"{type(err).__name__}: {err}", debug)
        return EXIT_ERROR
    except BaseException as err:  # a Rust panic surfaces as pyo3's PanicException
        if isinstance(err, (SystemExit, GeneratorExit)):
            raise
        _report(f"internal error in the simulator core ({type(err).__name__}: {err}); "
                "please report it with the scenario (rerun with --debug for details)", debug)
        return EXIT_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
