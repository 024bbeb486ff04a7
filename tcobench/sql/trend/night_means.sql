-- night_means(pairs): a macro, not a view. The one definition of "a night's mean" that every night-weighted
-- figure of tcobench uses (SQL views, compare, the report), through night_weighted_mean or directly.
--
-- pairs     LIST of (value, night) rows, e.g. list((output_tok_s, batch_id)) over the runs of a group. A night
--           is a nightly batch (runs.batch_id: one `tcobench nightly` or `tcobench run` invocation), not a
--           calendar date: three nightlies on one UTC date are three nights. Every caller passes batch_id and
--           reports runs.date (UTC) beside it as "dates".
-- result    LIST of the mean value of each night (nights in ascending order); NULL values are left out of a
--           night's mean, and a night with no value has a NULL mean
-- order     a night's mean adds its values in ascending order, so its bits do not depend on the order of pairs
--           (list() in a parallel GROUP BY gathers in no fixed order, and float sums depend on the order);
--           table macros night_weighted and night_weighted_lists add in the same order
--           (docs/store.md#duckdb-threads)
-- reads: -
CREATE OR REPLACE MACRO night_means(pairs) AS
    [
        list_avg(list_sort([p[1] FOR p IN pairs IF p[2] = night]))
        FOR night IN list_sort(list_distinct([p[2] FOR p IN pairs]))
    ];
