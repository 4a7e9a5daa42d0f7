"""The media type registry and the tables derived from it."""

from engine.rdf import (
    FORMAT_NAMES,
    MEDIA_TYPE_FORMATS,
    REGISTRY,
    guess_format,
    offered_for,
    rdf_format,
    result_format,
)


def test_rdf_media_types_name_rdflib_parsers():
    assert rdf_format("text/turtle; charset=utf-8") == "turtle"
    assert rdf_format("Application/N-Triples") == "nt"
    assert rdf_format("application/n-quads") == "nquads"
    assert rdf_format("text/html") is None


def test_a_json_body_is_not_taken_for_json_ld_although_construct_offers_it():
    assert "application/json" not in MEDIA_TYPE_FORMATS
    assert "application/json" in [entry.media_type for entry in offered_for("graph")]


def test_file_suffixes_name_rdflib_parsers():
    assert guess_format("data.ttl") == "turtle"
    assert guess_format("DATA.NQ") == "nquads"
    assert guess_format("data.owl") == "xml"
    assert guess_format("README") is None


def test_result_media_types_and_their_aliases_name_result_formats():
    assert result_format("application/sparql-results+json") == "json"
    assert result_format("text/xml") == "xml"
    assert result_format("text/tsv") == "tsv"
    assert result_format("text/turtle") is None


def test_an_alias_is_answered_with_the_proper_content_type():
    aliases = {entry.media_type: entry.content_type for entry in offered_for("solutions") if entry.alias_of}
    assert aliases["application/json"] == "application/sparql-results+json"
    assert aliases["text/xml"] == "application/sparql-results+xml"
    turtle = [entry for entry in offered_for("graph") if entry.media_type == "application/x-turtle"]
    assert turtle[0].content_type == "text/turtle; charset=utf-8"


def test_the_first_offer_of_each_kind_is_the_default():
    assert offered_for("solutions")[0].media_type == "application/sparql-results+json"
    assert offered_for("graph")[0].media_type == "text/turtle"
    assert [m.media_type for m in offered_for("dataset")] == ["application/n-quads", "application/trig"]


def test_every_short_name_and_alias_points_at_a_registered_media_type():
    registered = {entry.media_type for entry in REGISTRY}
    assert set(FORMAT_NAMES.values()) <= registered
    assert {entry.alias_of for entry in REGISTRY if entry.alias_of} <= registered
