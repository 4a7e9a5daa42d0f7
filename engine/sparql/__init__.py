"""SPARQL by stage: text to algebra to solutions to result documents.

:mod:`.syntax` parses query, update and registration text into the algebra
(:mod:`.algebra`, the contract between the stages); :mod:`.plan` holds the
planner, the cost model and the rewrites; :mod:`.exec` evaluates the algebra
with one operator per node kind; :mod:`.expr` evaluates expressions;
:mod:`.results` reads and writes the SPARQL result formats. Each subpackage
exports its API from its ``__init__``; import from there.
"""
