-- The fleet's PostgreSQL holds two databases: `prefect` (created by the image from POSTGRES_DB) for the Prefect
-- server, and `lake` for the results store's catalog (the table-format store; see `tcobench docs fleet`).
CREATE DATABASE lake OWNER tcobench;
