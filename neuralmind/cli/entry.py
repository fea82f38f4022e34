"""The `neuralmind` console script: `neuralmind hook` is served before anything else loads.

Agents run `neuralmind hook EVENT` on every prompt and tool call; the command parser and
its ~50 ms of command-module imports are for people, so the hook goes straight to its
client (`neuralmind/hooks/client.py`). `neuralmind hook --help` still gets the parser.
"""

from __future__ import annotations

import sys


def main() -> int:
    argv = sys.argv[1:]
    if argv[:1] == ["hook"] and not {"-h", "--help"} & set(argv):
        # the hook client alone: stdlib and the wire format, no command modules
        from neuralmind.hooks.client import main as hook_main

        return hook_main(argv[1:])
    # everything else: the full command parser (~50 ms of imports)
    from neuralmind.cli.main import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
