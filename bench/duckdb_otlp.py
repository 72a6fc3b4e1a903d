"""The DuckDB alternative on OTLP/JSON request lines: unnests
resourceSpans/scopeSpans/spans (camelCase and snake_case lines alike) and
counts spans by agent, tool and status (counts only, no trees, recovery or
scoring)."""
import sys

import duckdb

PATH = sys.argv[1]


def attr(spans, keys, field):
    """The first attribute of `keys` of a span, as text."""
    options = ", ".join(
        f"list_filter({spans}.attributes, lambda a: a.key = '{k}')[1].value.{field}" for k in keys
    )
    return f"coalesce({options})"


CAMEL = f"""
SELECT {attr('sp', ['agent.id', 'gen_ai.agent.name'], 'stringValue')} AS agent,
       {attr('sp', ['action.tool', 'gen_ai.tool.name'], 'stringValue')} AS tool,
       CAST(sp.status.code AS VARCHAR) AS status
FROM (SELECT unnest(ss.spans) AS sp FROM
      (SELECT unnest(rs.scopeSpans) AS ss FROM
       (SELECT unnest(resourceSpans) AS rs FROM req WHERE resourceSpans IS NOT NULL)))
"""
SNAKE = f"""
SELECT {attr('sp', ['agent.id', 'gen_ai.agent.name'], 'string_value')} AS agent,
       {attr('sp', ['action.tool', 'gen_ai.tool.name'], 'string_value')} AS tool,
       CAST(sp.status.code AS VARCHAR) AS status
FROM (SELECT unnest(ss.spans) AS sp FROM
      (SELECT unnest(rs.scope_spans) AS ss FROM
       (SELECT unnest(resource_spans) AS rs FROM req WHERE resource_spans IS NOT NULL)))
"""
rows = duckdb.sql(f"""
WITH req AS (SELECT * FROM read_json('{PATH}', format='newline_delimited')),
spans AS ({CAMEL} UNION ALL {SNAKE})
SELECT agent, tool, coalesce(status, '') IN ('2', 'STATUS_CODE_ERROR') AS failed, count(*) AS n
FROM spans GROUP BY ALL ORDER BY n DESC
""").fetchall()
for r in rows[:3]:
    print(r)
