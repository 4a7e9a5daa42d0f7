"""A randomised scenario tester for continuous queries (issue 26).

Scenarios (:mod:`.generator`) of streams, stored graphs, continuous queries
and client operations run through the engine in-process (:mod:`.inprocess`)
or over HTTP against ``rivulet serve`` (:mod:`.http`), and every window is
compared with an oracle (:mod:`.oracle`) written from ``../shared/SEMANTICS.md``
and ``docs/semantics.md`` that evaluates the query's plain SPARQL with
pyoxigraph over exactly the window's content. Each feature is a switch
(:mod:`.features`); ``python -m tests.stream.scenarios --count N --seed S``
runs a longer batch than CI does.
"""
