"""The `mptcplab` command's typer app and its `kernel` group; the command modules add their
commands to them (`mptcplab.cli` imports every one)."""
from __future__ import annotations

from enum import Enum
from typing import Annotated, Optional

import typer

from .. import _core

class Backend(str, Enum):
    sim = "sim"
    kernel = "kernel"


class Profile(str, Enum):
    upstream = "upstream"
    out_of_tree = "out_of_tree"


app = typer.Typer(
    name="mptcplab",
    help="Multipath TCP lab: run MPTCP scenarios on a deterministic simulator.",
    add_completion=False,
    no_args_is_help=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
kernel_app = typer.Typer(help="the kernel backend's tools (docs/kernel.md)", add_completion=False,
                         invoke_without_command=True)
app.add_typer(kernel_app, name="kernel")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mptcplab {_core.version()}")
        raise typer.Exit(0)


@app.callback()
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="show tracebacks on errors (anywhere on the line)")] = False,
    version: Annotated[Optional[bool], typer.Option("--version", callback=_version, is_eager=True,
                                                    help="print the version and exit")] = None,
) -> None:
    """Multipath TCP lab: run MPTCP scenarios on a deterministic simulator."""


@kernel_app.callback()
def _kernel(ctx: typer.Context) -> None:
    """the kernel backend's tools (docs/kernel.md)"""
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help(), err=True)
        raise typer.Exit(2)
