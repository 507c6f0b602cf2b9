"""A throwaway PostgreSQL cluster for tests and benches: initdb and pg_ctl in a temp folder.

Debian's server binaries (``/usr/lib/postgresql/<version>/bin``, or whatever ``initdb`` is
on PATH) start a cluster listening on 127.0.0.1 at a free port and on a Unix socket in its
own folder, with password authentication for one superuser. As root (CI, these machines)
the server runs as the ``postgres`` user, since PostgreSQL refuses to run as root.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

USER, PASSWORD = "paravt", "s3cret-pw"


def server_bin() -> Path | None:
    """The folder of initdb, pg_ctl and postgres, or None where PostgreSQL is not installed."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent  # Debian links a few of them into /usr/local/bin
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_version)
    return Path(versions[-1]).parent if versions else None


def _version(path: str) -> int:
    part = Path(path).parts[-3]
    return int(part) if part.isdigit() else 0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Cluster:
    """One running cluster; `url(db)` names a database on it with the password."""

    bin: Path
    folder: Path
    port: int
    run_as: str | None
    log: Path = field(init=False)

    def __post_init__(self) -> None:
        self.log = self.folder / "server.log"

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def url(self, database: str = "postgres", *, password: str = PASSWORD) -> str:
        return f"postgresql://{USER}:{password}@127.0.0.1:{self.port}/{database}"

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(self.bin / args[0]), *args[1:]],
            user=self.run_as,
            check=check,
            capture_output=True,
            text=True,
            cwd=self.folder,
            timeout=120,
        )

    def init(self) -> None:
        pwfile = self.folder / "pw"
        pwfile.write_text(PASSWORD + "\n")
        self._chown(pwfile)
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            USER,
            "--pwfile",
            str(pwfile),
            "--auth",
            "scram-sha-256",
            "-E",
            "UTF8",
            "--locale",
            "C",
        )
        pwfile.unlink()
        conf = self.data / "postgresql.conf"
        with conf.open("a") as out:
            out.write(
                f"listen_addresses = '127.0.0.1'\nport = {self.port}\n"
                f"unix_socket_directories = '{self.folder}'\nmax_connections = 300\n"
                "shared_buffers = 64MB\n"
            )

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop", check=False)

    def create_database(self, name: str | None = None) -> str:
        """A new empty database; returns its URL."""
        import psycopg

        name = name or f"t_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def _chown(self, path: Path) -> None:
        if self.run_as:
            user = pwd.getpwnam(self.run_as)
            os.chown(path, user.pw_uid, user.pw_gid)


def start_cluster() -> Cluster:
    """Initialise and start a cluster in a new temp folder (stop it with `stop_cluster`)."""
    binaries = server_bin()
    if binaries is None:
        raise FileNotFoundError("PostgreSQL's server (initdb, pg_ctl) is not installed")
    run_as = "postgres" if os.geteuid() == 0 else None
    folder = Path(tempfile.mkdtemp(prefix="paravt-pg-"))
    cluster = Cluster(binaries, folder, free_port(), run_as)
    try:
        cluster._chown(folder)
        cluster.init()
        cluster.start()
        deadline = time.monotonic() + 30
        while not _accepts(cluster):
            if time.monotonic() > deadline:
                log = cluster.log.read_text()[-2000:] if cluster.log.exists() else ""
                raise RuntimeError("PostgreSQL did not start:\n" + log)
            time.sleep(0.1)
    except BaseException:
        stop_cluster(cluster)  # a cluster that did start is not left running
        raise
    return cluster


def _accepts(cluster: Cluster) -> bool:
    import psycopg

    try:
        psycopg.connect(cluster.url(), connect_timeout=2).close()
    except psycopg.OperationalError:
        return False
    return True


def stop_cluster(cluster: Cluster) -> None:
    cluster.stop("immediate")
    shutil.rmtree(cluster.folder, ignore_errors=True)
