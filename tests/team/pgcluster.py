"""A private, throwaway PostgreSQL cluster for the team tests and benchmarks.

Debian's `postgresql` package installs the server binaries under
/usr/lib/postgresql/<major>/bin; we run `initdb` and `pg_ctl` from there in a temporary
folder, as the `postgres` user when we are root (the server refuses to run as root),
listening on a free loopback port and on a unix socket in that folder. Nothing listens
beyond 127.0.0.1. The cluster has TLS on (a self-signed certificate made with openssl),
so `sslmode=require` is tested against a real TLS handshake.

`$NEURALMIND_TEST_PG_DSN`, when set, names an existing server to use instead (its user
must be allowed to create databases and roles). Without either, `find_binaries` raises
`ClusterUnavailable` with the apt command to run: the tests fail, they do not skip.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DSN_ENV = "NEURALMIND_TEST_PG_DSN"
INSTALL_HINT = ("PostgreSQL is needed by the team tests: install it with "
                "`apt-get install postgresql` (Debian), or point $NEURALMIND_TEST_PG_DSN at a "
                "server whose user may create databases and roles")
SUPERUSER = "postgres"


class ClusterUnavailable(RuntimeError):
    """No PostgreSQL server binaries and no $NEURALMIND_TEST_PG_DSN."""


def find_binaries() -> Path:
    """The folder holding initdb, pg_ctl and postgres (newest major version first)."""
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                        key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0,
                        reverse=True)
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(str(Path(on_path).parent))
    for c in candidates:
        if all((Path(c) / b).exists() for b in ("initdb", "pg_ctl", "postgres")):
            return Path(c)
    raise ClusterUnavailable(INSTALL_HINT)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """One initdb'ed data folder and its server; `start`, `stop`, `restart`, `destroy`."""

    def __init__(self, fsync: bool = False, port: int | None = None,
                 parent: str | None = None, existing: Path | None = None) -> None:
        self.bin = find_binaries()
        self.dir = existing or Path(tempfile.mkdtemp(prefix="nm-pg-", dir=parent))
        self.data = self.dir / "data"
        self.socket_dir = self.dir
        self.log = self.dir / "server.log"
        self._as_postgres = os.geteuid() == 0
        if existing is not None:   # a cluster `main start` left running
            self.port = int((self.dir / "port").read_text())
            self.fsync = fsync
            return
        self.port = port or free_port()
        self.fsync = fsync
        (self.dir / "port").write_text(str(self.port))
        if self._as_postgres:
            pw = pwd.getpwnam(SUPERUSER)
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        self._run(["initdb", "-D", str(self.data), "-U", SUPERUSER, "-A", "trust", "-E", "UTF8",
                   "--locale=C", "--no-sync"])
        self._configure()

    # --- running the binaries ------------------------------------------------------------
    def _cmd(self, argv: list[str]) -> list[str]:
        full = [str(self.bin / argv[0]), *argv[1:]]
        return ["runuser", "-u", SUPERUSER, "--", *full] if self._as_postgres else full

    def _run(self, argv: list[str], timeout: float = 120) -> str:
        out = subprocess.run(self._cmd(argv), capture_output=True, text=True, timeout=timeout,
                             cwd=self.dir)
        if out.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed ({out.returncode}): {out.stderr.strip()}"
                               f"\n{self.server_log()[-2000:]}")
        return out.stdout

    def _configure(self) -> None:
        conf = self.data / "postgresql.conf"
        lines = [
            "listen_addresses = '127.0.0.1'",
            f"port = {self.port}",
            f"unix_socket_directories = '{self.socket_dir}'",
            f"fsync = {'on' if self.fsync else 'off'}",
            "synchronous_commit = on",
            "full_page_writes = off" if not self.fsync else "full_page_writes = on",
            "max_connections = 300",
            "shared_buffers = 64MB",
        ]
        if shutil.which("openssl"):
            self._make_certificate()
            lines += ["ssl = on", "ssl_cert_file = 'server.crt'", "ssl_key_file = 'server.key'"]
        with conf.open("a", encoding="utf-8") as f:
            f.write("\n# neuralmind test cluster\n" + "\n".join(lines) + "\n")
        # the superuser by socket or loopback without a password; other roles need theirs
        (self.data / "pg_hba.conf").write_text(
            "local all all trust\n"
            f"host all {SUPERUSER} 127.0.0.1/32 trust\n"
            "host all all 127.0.0.1/32 scram-sha-256\n", encoding="utf-8")

    def _make_certificate(self) -> None:
        crt, key = self.data / "server.crt", self.data / "server.key"
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                        "-subj", "/CN=localhost", "-keyout", str(key), "-out", str(crt)],
                       check=True, capture_output=True, timeout=60)
        key.chmod(0o600)
        if self._as_postgres:
            pw = pwd.getpwnam(SUPERUSER)
            for p in (crt, key):
                os.chown(p, pw.pw_uid, pw.pw_gid)

    @property
    def has_tls(self) -> bool:
        return (self.data / "server.crt").exists()

    # --- lifecycle -----------------------------------------------------------------------
    def start(self) -> None:
        self._run(["pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60",
                   "start"])

    def stop(self, mode: str = "fast") -> None:
        self._run(["pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop"])

    def restart(self) -> None:
        self.stop()
        self.start()

    def running(self) -> bool:
        out = subprocess.run(self._cmd(["pg_ctl", "-D", str(self.data), "status"]),
                             capture_output=True, text=True)
        return out.returncode == 0

    def destroy(self) -> None:
        with contextlib.suppress(Exception):
            if self.running():
                self.stop("immediate")
        shutil.rmtree(self.dir, ignore_errors=True)

    def server_log(self) -> str:
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    # --- addresses -----------------------------------------------------------------------
    def dsn(self, dbname: str = "postgres", user: str = SUPERUSER, tcp: bool = True,
            **options: str) -> str:
        host = "127.0.0.1" if tcp else str(self.socket_dir)
        extra = "".join(f" {k}={v}" for k, v in options.items())
        return f"host={host} port={self.port} dbname={dbname} user={user}{extra}"


def wait_until(predicate, timeout: float, interval: float = 0.02) -> bool:  # noqa: ANN001
    """Poll `predicate` until it is true or `timeout` seconds pass; its last value."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() > deadline:
            return bool(predicate())
        time.sleep(interval)


def main(argv: list[str]) -> int:
    """`start`: a cluster left running, printed as `DIR DSN`; `destroy DIR`: stop, remove.
    .ci/run uses these to run the team tests against a server it started."""
    if argv[:1] == ["start"]:
        c = Cluster()
        c.start()
        print(c.dir, c.dsn())
        return 0
    if len(argv) == 2 and argv[0] == "destroy":
        Cluster(existing=Path(argv[1])).destroy()
        return 0
    print("usage: pgcluster.py start | destroy DIR", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
