-- run_commits(ids): a table macro, not a view. When each run of the LIST ids was last committed (table commits):
-- the basis of `tcobench history`'s stored tests (tasks/analysis/history.py). A run without a commits row has no row.
--   run_id
--   committed_ns    max(commits.committed_ns) of the run                                       ns since the epoch
-- reads: -; tables: commits
CREATE OR REPLACE MACRO run_commits(ids) AS TABLE
SELECT run_id, max(committed_ns) AS committed_ns
FROM commits
WHERE run_id IN (SELECT unnest(ids))
GROUP BY run_id;
