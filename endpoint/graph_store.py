"""``/store``: the SPARQL 1.1 Graph Store HTTP Protocol.

Graphs are named indirectly (``/store?graph=IRI``, ``/store?default``) or
directly (``/store/any/path`` is the graph whose IRI is that URL). GET and
HEAD read a graph, PUT replaces it, POST adds to it, DELETE drops it. A POST
to ``/store`` itself creates a new graph (201 and its IRI in ``Location``),
or, with an N-Quads or TriG body, loads a whole dataset: the bulk upload;
a GET of ``/store`` itself sends the whole dataset back, in N-Quads or TriG
(one snapshot, streamed: the dump Oxigraph's server and Fuseki give).
Every write is one transaction: readers see the graph before or after it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from endpoint import negotiation
from endpoint.asgi_requests import accept, require_write
from endpoint.protocol import format_values, media_type_and_charset
from endpoint.public_url import public_url
from endpoint.responses import graph_response
from endpoint.settings import Settings
from endpoint.workers import Workers
from engine.api import Store
from engine.rdf import (
    IRI,
    MEDIA_TYPE_FORMATS,
    Term,
    guess_format,
    iri_problem,
    parse_rdf,
    rdf_format,
    write_dataset,
)

QUAD_FORMATS = {"nquads", "trig"}

Triple = tuple[Term, Term, Term]


@dataclass(frozen=True)
class Target:
    """The graph a request acts on: ``iri`` None is the default graph;
    ``new`` is a POST to the store itself (no graph named)."""

    iri: str | None
    new: bool = False


@dataclass(frozen=True)
class Document:
    """An uploaded RDF document and the parser name for it."""

    data: bytes
    format: str


class GraphStoreRoute:
    """The handlers of ``/store`` and ``/store/{path}`` for one store."""

    def __init__(self, store: Store, settings: Settings, workers: Workers) -> None:
        self.store = store
        self.settings = settings
        self.workers = workers

    async def indirect(self, request: Request) -> Response:
        params = request.query_params
        graphs = params.getlist("graph")
        if len(graphs) > 1 or (graphs and "default" in params):
            raise HTTPException(400, "name one graph: either ?default or one ?graph=IRI")
        if graphs:
            target = Target(_checked_iri(graphs[0]))
        elif "default" in params:
            target = Target(None)
        elif request.method == "POST":
            target = Target(f"{public_url(request, self.settings)}/{uuid.uuid4().hex}", new=True)
        elif request.method in ("GET", "HEAD"):
            return await self._get_dataset(request)
        else:
            raise HTTPException(400, "name the graph: ?default or ?graph=IRI")
        return await self._dispatch(request, target)

    async def direct(self, request: Request) -> Response:
        return await self._dispatch(request, Target(_checked_iri(public_url(request, self.settings))))

    async def _dispatch(self, request: Request, target: Target) -> Response:
        if request.method in ("GET", "HEAD"):
            return await self._get(request, target)
        require_write(request, self.settings)
        if request.method == "PUT":
            return await self._put(request, target)
        if request.method == "POST":
            return await self._post(request, target)
        return await self._delete(target)

    # ------------------------------------------------------------------ reads
    def _exists(self, target: Target) -> bool:
        return target.iri is None or IRI(target.iri) in self.store.named_graphs()

    def _require_graph(self, target: Target) -> None:
        if not self._exists(target):
            raise HTTPException(404, f"no graph <{target.iri}> in the store")

    async def _get(self, request: Request, target: Target) -> Response:
        self._require_graph(target)
        offer = negotiation.pick_offer(negotiation.GRAPH, accept(request),
                                       format_values(request.query_params.multi_items()))
        if request.method == "HEAD":
            return Response(media_type=offer.content_type, headers={"Vary": "Accept"})
        triples = self.store.triples(target.iri)
        return await graph_response(triples, offer, self.workers, {"Vary": "Accept"})

    async def _get_dataset(self, request: Request) -> Response:
        """The whole store: the default graph and every named graph."""
        offer = negotiation.pick_offer(negotiation.DATASET, accept(request),
                                       format_values(request.query_params.multi_items()))
        if request.method == "HEAD":
            return Response(media_type=offer.content_type, headers={"Vary": "Accept"})
        chunks = write_dataset(offer.format, self.store.graphs())
        return StreamingResponse(await self.workers.stream(chunks), headers={"Vary": "Accept"},
                                 media_type=offer.content_type)

    # ----------------------------------------------------------------- writes
    async def _put(self, request: Request, target: Target) -> Response:
        document = _document(await request.body(), request.headers.get("content-type"))
        _refuse_quads(document)
        existed = self._exists(target)
        base = target.iri or public_url(request, self.settings)
        triples = await self.workers.call(_parse_triples, document, base)
        await self.workers.call(self.store.replace_graph, target.iri, triples)
        return Response(status_code=204 if existed else 201)

    async def _post(self, request: Request, target: Target) -> Response:
        media_type, _ = media_type_and_charset(request.headers.get("content-type"))
        if media_type == "multipart/form-data":
            documents = await _form_documents(request)
        else:
            documents = [_document(await request.body(), request.headers.get("content-type"))]
        if target.new and len(documents) == 1 and documents[0].format in QUAD_FORMATS:
            await self.workers.call(_load_dataset, self.store, documents[0])
            return Response(status_code=204)
        for document in documents:
            _refuse_quads(document)
        existed = self._exists(target)
        base = target.iri or public_url(request, self.settings)
        triples = [t for d in documents for t in await self.workers.call(_parse_triples, d, base)]
        await self.workers.call(self.store.add, triples, target.iri)
        if target.new:
            return Response(status_code=201, headers={"Location": target.iri})
        return Response(status_code=204 if existed else 201)

    async def _delete(self, target: Target) -> Response:
        self._require_graph(target)
        await self.workers.call(self.store.drop_graph, target.iri)
        return Response(status_code=204)


def _document(data: bytes, content_type: str | None) -> Document:
    media_type, _ = media_type_and_charset(content_type)
    fmt = rdf_format(media_type)
    if fmt is None:
        raise HTTPException(415, f"unsupported Content-Type {media_type or 'none'}; send one of "
                                 f"{', '.join(MEDIA_TYPE_FORMATS)}")
    return Document(data, fmt)


async def _form_documents(request: Request) -> list[Document]:
    """The files of a multipart upload, each typed by its own Content-Type
    or else by its file name's suffix."""
    documents = []
    async with request.form() as form:
        for name, part in form.multi_items():
            if not isinstance(part, UploadFile):
                raise HTTPException(400, f"multipart field {name!r} is not a file upload")
            media_type, _ = media_type_and_charset(part.content_type)
            fmt = rdf_format(media_type) or guess_format(part.filename or "")
            if fmt is None:
                raise HTTPException(415, f"cannot tell the RDF syntax of upload {part.filename or name!r}")
            documents.append(Document(await part.read(), fmt))
    if not documents:
        raise HTTPException(400, "the multipart body has no files")
    return documents


def _refuse_quads(document: Document) -> None:
    if document.format in QUAD_FORMATS:
        raise HTTPException(415, "N-Quads and TriG name their own graphs: POST them to /store "
                                 "without a graph parameter")


def _parse_triples(document: Document, base: str) -> list[Triple]:
    """Parse an upload; rdflib's parsers raise many exception types, all of
    which mean the client sent a malformed document."""
    try:
        return [(s, p, o) for s, p, o, _ in parse_rdf(document.data, document.format, base)]
    except Exception as exc:
        raise HTTPException(400, f"could not parse the body as {document.format}: {exc}") from exc


def _checked_iri(text: str) -> str:
    """A graph IRI as SPARQL's IRIREF allows it; 400 otherwise (such a name
    would also be unusable in queries)."""
    problem = iri_problem(text)
    if problem:
        raise HTTPException(400, f"not a usable graph IRI: {text!r}: {problem}")
    return text


def _load_dataset(store: Store, document: Document) -> None:
    """A bulk N-Quads / TriG upload; all or nothing."""
    try:
        store.load(document.data, document.format)
    except Exception as exc:  # rdflib raises many kinds; all mean a malformed upload
        raise HTTPException(400, f"could not parse the body as {document.format}, "
                                 f"nothing was loaded: {exc}") from exc
