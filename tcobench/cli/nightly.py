"""`tcobench nightly` (run the inventory x matrix now) and `tcobench serve` (a served, cron-scheduled deployment)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tcobench.cli._common import (
    PartialThresholdOpt,
    PricesOpt,
    StoreOpt,
    err,
    guard,
    out,
    prefect_defaults,
    settings_for,
    store_parameter,
)
from tcobench.cli._progress import night_display
from tcobench.cli._signals import exit_interrupted, measuring
from tcobench.errors import Interrupted, NightlyError

if TYPE_CHECKING:
    from tcobench.tasks.inventory import NightlyPlan

__all__ = ["register"]

InventoryOpt = Annotated[Path, typer.Option("--inventory", "-i", help="Hosts (TOML).")]
MatrixOpt = Annotated[
    list[Path], typer.Option("--matrix", "-m", help="Matrix file (TOML); repeat for per-vendor files.")
]


def _print_plan(plan: NightlyPlan, store: str | None, prices: Path | None) -> None:
    """The plan before it starts, on stderr: cells per host, the engines' serving configurations, and an estimate of
    the night's length from the cells' last nights in the store (tasks/estimate.py)."""
    from tcobench.errors import TcobenchError
    from tcobench.settings import Settings
    from tcobench.tasks.estimate import night_estimate
    from tcobench.tasks.prices import load_prices
    from tcobench.tasks.store.query import connect

    hosts = sorted({c.host.name for c in plan.cells})
    per_host = ", ".join(f"{h} {sum(c.host.name == h for c in plan.cells)}" for h in hosts)
    err.print(f"plan: {len(plan.cells)} cell(s) on {len(hosts)} host(s) ({per_host})", highlight=False, markup=False)
    engines = sorted({c.engine for c in plan.cells})
    if any("[" in e for e in engines):
        err.print(f"  serving configurations: {', '.join(engines)}", highlight=False, markup=False)
    try:
        con = connect(store or Settings().store, load_prices(prices), needs=("last_cell_durations",))
    except TcobenchError:
        con = None  # a new store, or none readable: no history to estimate from
    try:
        estimate = night_estimate(con, [(c.host.name, c.label) for c in plan.cells])
    finally:
        if con is not None:
            con.close()
    err.print(f"  estimated time: {estimate.text()}", highlight=False, markup=False)


def register(app: typer.Typer) -> None:
    @app.command("nightly")
    @guard
    def nightly_cmd(
        inventory: InventoryOpt,
        matrix: MatrixOpt,
        store: StoreOpt = None,
        prices: PricesOpt = None,
        no_prefect: Annotated[bool, typer.Option("--no-prefect", help="Run without Prefect.")] = False,
        profile: Annotated[
            str | None,
            typer.Option(help="Run profile for every workload without its own: claim (docs/claim-grade.md)."),
        ] = None,
        partial_threshold: PartialThresholdOpt = 0.05,
        progress_every: Annotated[
            float, typer.Option(help="Without a terminal: seconds between a host's progress lines.", min=0.1)
        ] = 10.0,
        dry_run: Annotated[
            bool, typer.Option("--dry-run", help="Print the plan (cells, configurations, ETA) and stop.")
        ] = False,
        max_cells: Annotated[
            int, typer.Option("--max-cells", help="Refuse a plan of more cells than this without --yes.", min=1)
        ] = 64,
        yes: Annotated[bool, typer.Option("--yes", "-y", help="Run a plan of more than --max-cells cells.")] = False,
    ) -> None:
        """Measure every host of the inventory on the matrix now (hosts in parallel).

        Progress goes to stderr: per host the cell in progress, its requests done / total, errors and an ETA (bars
        on a terminal, time-stamped lines otherwise), and a result line as each concurrency level is stored.

        Exit status as `tcobench run`: 3 naming failed cells, 4 naming cells with a run that lost more than
        --partial-threshold of its requests, 130/143/129 when a signal stopped the night. When the inventory turns
        fleet mode on (its fleet table), each host's cells run on that host's `tcobench worker` (Prefect server from
        PREFECT_API_URL / PREFECT_API_AUTH_STRING).
        """
        from tcobench.cli._claim import warn_claim_shortfalls
        from tcobench.errors import ConfigError
        from tcobench.settings import apply_prefect_defaults, prefect_api_url
        from tcobench.tasks.inventory import load_plan
        from tcobench.tasks.prices import load_prices

        settings = settings_for(store, no_prefect)
        if profile:
            settings = settings.model_copy(update={"profile": profile})
        # validate everything before Prefect starts
        plan = load_plan(inventory, list(matrix), load_prices(prices), settings.profile)
        _print_plan(plan, store, prices)
        if dry_run:
            return
        if len(plan.cells) > max_cells and not yes:
            raise ConfigError(
                f"the plan has {len(plan.cells)} cells, more than --max-cells {max_cells}: pass --yes to run them all, "
                "raise --max-cells, or shrink the matrix's sweeps (--dry-run lists them)"
            )
        warn_claim_shortfalls(c.config.workload for c in plan.cells)
        if plan.inventory.fleet is not None:
            if no_prefect:
                raise ConfigError(f"{inventory} has a [fleet] table: fleet mode runs on Prefect; drop --no-prefect")
            if not prefect_api_url():
                raise ConfigError(
                    f"{inventory} has a [fleet] table: set PREFECT_API_URL (and "
                    "PREFECT_API_AUTH_STRING) to the fleet's Prefect server"
                )
            if store is None and "store" not in settings.model_fields_set:
                raise ConfigError(
                    f"{inventory} has a [fleet] table: give the store every host writes to (--store or TCOBENCH_STORE)"
                )
            apply_prefect_defaults(
                {
                    "PREFECT_LOGGING_LEVEL": "INFO",  # a fleet night is long: show its progress
                    "PREFECT_CLIENT_MAX_RETRIES": "8",  # about 4 min: outlives a server restart
                    "PREFECT_CLIENT_RETRY_EXTRA_CODES": "500",  # its database's outage: as the workers
                }
            )
        prefect_defaults()
        from tcobench.flows import use_settings

        use_settings(settings)  # before importing a flow: Prefect on or off for this process
        from tcobench.flows import in_process_settings, nightly, start_api_server
        from tcobench.tasks.store.store import check_store

        check_store(settings.store)  # before any engine starts
        server: int | None = None
        try:
            with measuring(settings) as children:
                server = start_api_server()
                if server is not None:
                    children.add("prefect-server", server, borrowed=True)
                # in fleet mode each worker logs its own progress
                with night_display(err, progress_every) as sink, in_process_settings(server):
                    # a local store as an absolute path: in fleet mode it is a parameter for every host's run
                    result = nightly(
                        str(inventory),
                        [str(m) for m in matrix],
                        store_parameter(store),
                        str(prices) if prices else None,
                        partial_threshold=partial_threshold,
                        progress=sink if plan.inventory.fleet is None else None,
                        profile=settings.profile,
                    )
        except Interrupted as exc:  # every host's run in progress is stored (flows.nightly), its engine stopped
            if server is not None or not settings.prefect:
                exit_interrupted(exc, server)
            raise  # Prefect's exit work sends the fleet's (or the user's own) Prefect server its last logs
        out.print(result.markdown, highlight=False, markup=False, soft_wrap=True)
        if result.not_ok:
            code = result.not_ok[0].exit_code
            bad = [c for c in result.not_ok if c.exit_code == code]
            what = "failed" if code == 3 else f"lost more than {partial_threshold:.0%} of a run's requests"
            reasons = {c.cell: c.error for c in result.failed}
            names = ", ".join(f"{c.cell} ({reasons[c.cell]})" if reasons.get(c.cell) else c.cell for c in bad)
            raise NightlyError(f"{len(bad)} cell(s) {what}: {names}", code)

    @app.command("serve")
    @guard
    def serve_cmd(
        inventory: InventoryOpt,
        matrix: MatrixOpt,
        cron: Annotated[str, typer.Option(help="Cron schedule, host time zone [02:00 every night].")] = "0 2 * * *",
        name: Annotated[str, typer.Option(help="Deployment name.")] = "tcobench-nightly",
        store: StoreOpt = None,
        prices: PricesOpt = None,
    ) -> None:
        """Serve the nightly flow as a deployment with a cron schedule (needs a Prefect server: PREFECT_API_URL)."""
        from tcobench.errors import ConfigError
        from tcobench.settings import apply_prefect_defaults, prefect_api_url
        from tcobench.tasks.inventory import load_plan
        from tcobench.tasks.prices import load_prices
        from tcobench.tasks.store.lake import parse_store

        load_plan(inventory, list(matrix), load_prices(prices))
        if store:
            parse_store(store)  # a password in the URI is refused here, before it could reach Prefect's database
        if not prefect_api_url():
            raise ConfigError(
                "tcobench serve needs a Prefect server for its schedule: start one (`prefect server start`) "
                "and set PREFECT_API_URL, e.g. http://127.0.0.1:4200/api"
            )
        settings = settings_for(store)
        if not settings.prefect:
            raise ConfigError(
                "tcobench serve needs Prefect, and TCOBENCH_PREFECT turns it off: unset it for this command"
            )
        apply_prefect_defaults({"PREFECT_LOGGING_LEVEL": "INFO"})
        prefect_defaults()
        from tcobench.flows import use_settings

        use_settings(settings)
        from tcobench.flows import nightly

        params = {
            "inventory": str(inventory.resolve()),
            "matrices": [str(m.resolve()) for m in matrix],
            "store": store_parameter(store),  # as given (user, options kept); a local path made absolute
            "prices": str(prices.resolve()) if prices else None,
        }
        err.print(f"serving deployment {name!r} of flow 'nightly' on schedule {cron!r}; Ctrl-C stops", highlight=False)
        from prefect.types.entrypoint import EntrypointType

        # module path (tcobench.flows.nightly:nightly): the flow uses package-relative imports
        nightly.serve(name=name, cron=cron, parameters=params, entrypoint_type=EntrypointType.MODULE_PATH)  # type: ignore[attr-defined]
