-- night_means(pairs): a macro, not a view. The one definition of "a night's mean" that every night-weighted
-- figure of tcobench uses (SQL views, compare, the report), through night_weighted_mean or directly.
--
-- pairs     LIST of (value, night) rows, e.g. list((output_tok_s, date)) over the runs of a group; a night
--           is a run's date (runs.date, UTC)
-- result    LIST of the mean value of each night (nights in ascending order); NULL values are left out of a
--           night's mean, and a night with no value has a NULL mean
CREATE OR REPLACE MACRO night_means(pairs) AS
    [list_avg([p[1] FOR p IN pairs IF p[2] = night]) FOR night IN list_sort(list_distinct([p[2] FOR p IN pairs]))];
