"""The DuckDB alternative: the same failure filter and signature as triage,
as one group-by over the NDJSON (counts only, no recovery or scoring)."""
import sys

import duckdb

CLASS = "coalesce(nullif(nullif(failure_classification, ''), 'null'), 'unclassified')"
rows = duckdb.sql(f"""
SELECT agent_id, action_taken.tool_name AS tool, {CLASS} AS cls,
       list_sort(list_distinct(divergence_fields)) AS divs, count(*) AS n
FROM read_json('{sys.argv[1]}', format='newline_delimited')
WHERE NOT action_succeeded OR {CLASS} <> 'unclassified'
GROUP BY ALL ORDER BY n DESC
""").fetchall()
for r in rows[:3]:
    print(r)
