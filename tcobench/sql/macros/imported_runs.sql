-- imported_runs(sha): a table macro, not a view. The stored runs that `tcobench import` made from a file whose
-- bytes have this sha256 (runs.source_sha256): what a second import of the same file is refused with, and the run
-- ids `--replace` writes over (tasks/imports/importing.py).
--   run_id, batch_id, date, source, source_file    view runs'
--   committed_ns    when the run's rows were last committed (max commits.committed_ns)      ns since the epoch
-- reads: -; tables: runs, commits
CREATE OR REPLACE MACRO imported_runs(sha) AS TABLE
SELECT
    r.run_id, r.batch_id, r.date, r.source, r.source_file,
    (SELECT max(c.committed_ns) FROM commits AS c WHERE c.run_id = r.run_id) AS committed_ns
FROM runs AS r
WHERE r.source_sha256 = sha
ORDER BY r.started_ns, r.run_id;
