"""The demo dataset's IRIs and the queries the client tests send (each
client module asks the same questions and expects the same answers)."""

EX = "http://example.org/rivers/"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
XSD_INT = "http://www.w3.org/2001/XMLSchema#integer"

LONGEST = f"""PREFIX ex: <{EX}>
SELECT ?river ?km WHERE {{ ?river ex:lengthKm ?km }} ORDER BY DESC(?km) LIMIT 3"""
TOP3 = [(f"{EX}Danube", "2850"), (f"{EX}Rhine", "1230"), (f"{EX}Elbe", "1094")]

INTO_RHINE = f"""PREFIX ex: <{EX}>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
CONSTRUCT {{ ?r ex:flowsInto ex:Rhine ; rdfs:label ?label }}
WHERE {{ ?r ex:flowsInto ex:Rhine ; rdfs:label ?label }}"""
INTO_RHINE_TRIPLES = f"""
<{EX}Moselle> <{EX}flowsInto> <{EX}Rhine> .
<{EX}Moselle> <{RDFS_LABEL}> "Moselle"@en .
<{EX}Moselle> <{RDFS_LABEL}> "Mosel"@de .
<{EX}Main> <{EX}flowsInto> <{EX}Rhine> .
<{EX}Main> <{RDFS_LABEL}> "Main"@en .
"""
ISAR = f"INSERT DATA {{ <{EX}Isar> <{EX}flowsInto> <{EX}Danube> }}"
