"""`neuralmind lsp --stdio`: the language server under the main command."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    from neuralmind.lsp.entry import add_arguments

    p = sub.add_parser("lsp", help="run the language server (LSP over stdio) for editors")
    add_arguments(p)
    p.set_defaults(handler=cmd_lsp)


def cmd_lsp(args: argparse.Namespace) -> int:
    from neuralmind.lsp.entry import claim_stdio, serve

    in_fd, out_fd = claim_stdio()
    return serve(args.log_file, args.verbose, in_fd, out_fd)
