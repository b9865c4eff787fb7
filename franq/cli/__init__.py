"""The ``franq`` command: the door to the three rooms. Thin: each command parses its options
and calls a library, workbench or application function.

    score       franq.cli.score     the scoring library on one example or a JSONL batch
    answer      franq.cli.answer    generate and score (and, with --verify, the answering app)
    fit ...     franq.cli.fit       the workbench: fit calibrators and probes
    config show franq.cli.config    every effective config value and where it came from
    bench ...   franq.cli.bench     the workbench: the benchmark harness (franq.evaluation);
                franq.cli.bench_quality  its quality evaluations (faithfulness, calibration, ...)
    report, serve, sufficiency, selective, trust
                franq.apps.*        applications, each registered under "apps"
                                    (franq.registry; plugins through entry points)

Shared option groups live in :mod:`franq.cli.options`.
"""
from __future__ import annotations

import logging

import click

from franq.cli.answer import answer
from franq.cli.bench_quality import bench  # the bench group, its quality commands registered
from franq.cli.config import config
from franq.cli.fit import fit
from franq.cli.options import RedactingFilter, _verbose_callback, fail
from franq.cli.score import score
from franq.errors import InputError

VERBOSE_OPTION = click.Option(["-v", "--verbose"], is_flag=True, expose_value=False, callback=_verbose_callback,
                              help="Log progress and model loading.")
"""``-v`` after any subcommand too (``franq score --example -v``); added to each by :func:`_add_verbose`."""


class OneLineErrors(click.Group):
    """The command group whose every command ends a franq error or a failed read or write
    (a full disk, a folder it may not write in) in one line, never a traceback."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except InputError as exc:
            raise fail(exc) from None
        except BrokenPipeError:
            raise
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            raise fail(OSError(f"{where}{exc.strerror or exc}")) from None


@click.group(cls=OneLineErrors)
@click.option("-v", "--verbose", is_flag=True, help="Log progress and model loading.")
@click.version_option(package_name="franq")
def main(verbose: bool) -> None:
    """franq: is each claim of a RAG answer true? (FRANQ)"""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())


main.add_command(score)
main.add_command(answer)
main.add_command(fit)
main.add_command(bench)
main.add_command(config)


def _add_apps(group: click.Group) -> None:
    """Each registered application (franq/apps/, or a ``franq.apps`` entry point) is a subcommand."""
    import importlib

    from franq import registry

    importlib.import_module("franq.apps")  # declares the "apps" kind (the library names no application)
    for name in registry.names("apps"):
        try:
            command = registry.lookup("apps", name)
        except InputError as exc:
            logging.getLogger(__name__).warning("%s", exc)
            continue
        group.add_command(command, name)


def _add_verbose(command: click.Command) -> None:
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _add_verbose(sub)
    elif not any(p.name == "verbose" for p in command.params):
        command.params.append(VERBOSE_OPTION)


_add_apps(main)
for _command in main.commands.values():
    _add_verbose(_command)
