from __future__ import annotations

import re
from pathlib import Path

import pytest

from medfc.common.report import SkipReport
from medfc.retrieval import pubmed as P

DEMO_PUBMED = Path(__file__).resolve().parents[3] / "resources" / "demo" / "pubmed"

SET = """<?xml version="1.0" ?>
<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" "https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">
<PubmedArticleSet>
<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM"><PMID Version="1">91000001</PMID>
<Article PubModel="Print"><Journal><JournalIssue CitedMedium="Print"><PubDate><Year>2014</Year><Month>03</Month><Day>7</Day></PubDate></JournalIssue><Title>J Test</Title></Journal>
<ArticleTitle>Effect of <i>drug X</i> on CD4<sup>+</sup> counts.</ArticleTitle>
<Abstract><AbstractText Label="BACKGROUND" NlmCategory="BACKGROUND">Drug X may raise
   CD4<sup>+</sup> counts.</AbstractText><AbstractText Label="RESULTS" NlmCategory="RESULTS">Counts rose (<i>P</i>&lt;0.01).</AbstractText><AbstractText Label="UNLABELLED" NlmCategory="UNASSIGNED">Further work.</AbstractText></Abstract>
<PublicationTypeList><PublicationType UI="D016428">Journal Article</PublicationType><PublicationType UI="D016449">Randomized Controlled Trial</PublicationType></PublicationTypeList></Article>
<MeshHeadingList><MeshHeading><DescriptorName UI="D1" MajorTopicYN="Y">HIV Infections</DescriptorName><QualifierName UI="Q1" MajorTopicYN="N">drug therapy</QualifierName></MeshHeading><MeshHeading><DescriptorName UI="D2" MajorTopicYN="N">Humans</DescriptorName></MeshHeading></MeshHeadingList>
</MedlineCitation><PubmedData><ArticleIdList><ArticleId IdType="pubmed">91000001</ArticleId></ArticleIdList></PubmedData></PubmedArticle>
<PubmedArticle><MedlineCitation><PMID Version="1">91000002</PMID><Article><Journal><JournalIssue><PubDate><Year>1999</Year><Season>Winter</Season></PubDate></JournalIssue></Journal>
<ArticleTitle>No abstract here.</ArticleTitle><PublicationTypeList><PublicationType>Letter</PublicationType></PublicationTypeList></Article></MedlineCitation></PubmedArticle>
<PubmedArticle><MedlineCitation><PMID Version="1">91000003</PMID><Article><Journal><JournalIssue><PubDate><MedlineDate>1998 Dec-1999 Jan</MedlineDate></PubDate></JournalIssue></Journal>
<ArticleTitle>Plain abstract.</ArticleTitle><Abstract><AbstractText>One   paragraph only.</AbstractText></Abstract></Article></MedlineCitation></PubmedArticle>
<PubmedBookArticle><BookDocument><PMID Version="1">91000004</PMID><Book><BookTitle>Handbook</BookTitle><PubDate><Year>2020</Year></PubDate></Book>
<ArticleTitle>A chapter.</ArticleTitle><Abstract><AbstractText Label="SUMMARY">Chapter text.</AbstractText></Abstract><PublicationType>Book Chapter</PublicationType></BookDocument></PubmedBookArticle>
</PubmedArticleSet>
"""


def test_parse_article_set_exact():
    recs = {r["pmid"]: r for r in P.parse_pubmed_xml(SET)}
    a = recs["91000001"]
    assert a["title"] == "Effect of drug X on CD4+ counts."
    assert a["abstract"] == "BACKGROUND: Drug X may raise CD4+ counts.\nRESULTS: Counts rose (P<0.01).\nUNLABELLED: Further work."
    assert (a["year"], a["month"], a["day"], a["publication_date"]) == (2014, "Mar", 7, "2014-Mar-07")
    assert a["mesh_headings"] == ["HIV Infections", "Humans"]
    assert a["publication_types"] == ["Journal Article", "Randomized Controlled Trial"]
    b = recs["91000002"]
    assert b["abstract"] is None and b["abstract_words"] == 0
    assert (b["year"], b["season"], b["publication_date"]) == (1999, "Winter", "1999-N/A-N/A")
    c = recs["91000003"]
    assert c["abstract"] == "One   paragraph only." and c["publication_date"] == "1998-Dec-N/A"  # spaces in a line are text
    d = recs["91000004"]
    assert (d["kind"], d["title"], d["abstract"], d["publication_date"], d["publication_types"]) == ("book", "A chapter.", "SUMMARY: Chapter text.", "2020-N/A-N/A", ["Book Chapter"])


def test_split_article_set_round_trips():
    parts = P.split_article_set(SET)
    assert sorted(parts) == ["91000001", "91000002", "91000003", "91000004"]
    assert P.parse_pubmed_xml(parts["91000001"]) == [r for r in P.parse_pubmed_xml(SET) if r["pmid"] == "91000001"]


def test_demo_records():
    recs = {p.stem: P.parse_pubmed_xml(p.read_bytes())[0] for p in sorted(DEMO_PUBMED.glob("*.xml"))}
    assert len(recs) == 52 and all(k == r["pmid"] for k, r in recs.items())
    assert recs["99000037"]["abstract"] is None
    assert recs["99000036"]["abstract_words"] == 7
    assert recs["99000003"]["publication_date"] == "2016-N/A-N/A" and recs["99000003"]["season"] == "Spring"
    assert recs["99000008"]["publication_date"] == "2017-Nov-N/A"
    assert recs["99000013"]["year"] == 2019
    assert recs["99000052"]["kind"] == "book"
    assert "(P<10-3); serum K+ was unchanged." in recs["99000001"]["abstract"]
    assert recs["99000001"]["abstract"].split("\n")[0].startswith("BACKGROUND: ")
    assert recs["99000007"]["abstract"].startswith("UNLABELLED: Biosimilar and reference adalimumab")


def _efetch_handler(calls):
    def handler(method, path, query, body):
        if method == "POST":
            from urllib.parse import parse_qs

            query = parse_qs(body.decode())
        ids = query["id"][0].split(",")
        calls.append((method, ids, query.get("tool", [None])[0], query.get("email", [None])[0], query.get("api_key", [None])[0]))
        if len(calls) == 1 and method == "GET" and "retry" in path:
            return 429, {"Retry-After": "2"}, b""
        arts = "".join(
            f'<PubmedArticle><MedlineCitation><PMID Version="1">{i}</PMID><Article><ArticleTitle>T{i}</ArticleTitle>'
            f"<Abstract><AbstractText>Abstract of {i}.</AbstractText></Abstract></Article></MedlineCitation></PubmedArticle>"
            for i in ids
            if not i.endswith("9")  # ids ending in 9 do not exist
        )
        return 200, {"Content-Type": "text/xml"}, f"<?xml version='1.0'?><PubmedArticleSet>{arts}</PubmedArticleSet>".encode()

    return handler


def test_fetch_batches_get_then_post_and_caches_per_pmid(server, tmp_path, clock, monkeypatch):
    monkeypatch.setenv("NCBI_API_KEY", "k3y")
    calls: list = []
    server.handler = _efetch_handler(calls)
    f = P.PubmedFetcher(tmp_path / "pm", email="t@example.org", tool="medfc-test", batch_size=250, url=server.url + "/efetch.fcgi", clock=clock, sleep=clock.sleep)
    pmids = [str(10000 + i) for i in range(260)]
    report = SkipReport("abs")
    recs = list(f.records(pmids, report=report, progress=False))
    assert [c[0] for c in calls] == ["POST", "GET"]  # 250 ids by POST, then 10 by GET
    assert [len(c[1]) for c in calls] == [250, 10]
    assert calls[0][2:] == ("medfc-test", "t@example.org", "k3y")
    assert f.http.limiter.rate == 10.0  # API key → 10 requests/second
    assert clock.sleeps == [0.1]
    missing = [p for p in pmids if p.endswith("9")]
    assert report.reasons() == {"pmid_not_returned": len(missing)}
    assert len(recs) == 260 - len(missing) and recs[0]["abstract"] == "Abstract of 10000."
    assert len(list((tmp_path / "pm").glob("*.xml"))) == len(recs)
    # rerun with two new PMIDs: only those reach the server, by GET
    calls.clear()
    list(f.records(pmids[:5] + ["20000", "20001"], progress=False))
    assert calls == [("GET", ["20000", "20001"], "medfc-test", "t@example.org", "k3y")]


def test_fetch_retries_429_and_offline_mode(server, tmp_path, clock, monkeypatch):
    monkeypatch.delenv("NCBI_API_KEY", raising=False)
    calls: list = []
    server.handler = _efetch_handler(calls)
    f = P.PubmedFetcher(tmp_path / "pm", email="t@example.org", url=server.url + "/retry/efetch.fcgi", clock=clock, sleep=clock.sleep)
    assert f.http.limiter.rate == 3.0
    got = f.fetch(["111", "112"], progress=False)
    assert sorted(got) == ["111", "112"] and len(calls) == 2 and 2.0 in clock.sleeps
    off = P.PubmedFetcher(tmp_path / "other", offline=True, extra_cache_dirs=[tmp_path / "pm"], url=server.url + "/x")
    report = SkipReport("abs")
    assert sorted(off.fetch(["111", "113"], report=report, progress=False)) == ["111"]
    assert report.reasons() == {"pmid_not_cached_offline": 1} and len(calls) == 2


def test_records_without_abstract_are_reported_not_fatal(tmp_path):
    f = P.PubmedFetcher(DEMO_PUBMED, offline=True)
    report = SkipReport("abs")
    recs = list(f.records(["99000036", "99000037", "99000038"], report=report, progress=False))
    assert [r["pmid"] for r in recs] == ["99000036", "99000037", "99000038"]
    assert report.reasons() == {"no_abstract": 1}
    assert re.fullmatch(r"\d{4}-\w{3}-(\d\d|N/A)|\d{4}-N/A-N/A", recs[2]["publication_date"])


def test_no_request_without_a_contact_email_and_no_rate_above_ncbis(server, tmp_path, clock, monkeypatch, caplog):
    monkeypatch.delenv("NCBI_API_KEY", raising=False)
    monkeypatch.delenv("NCBI_EMAIL", raising=False)
    calls: list = []
    server.handler = _efetch_handler(calls)
    f = P.PubmedFetcher(tmp_path / "pm", url=server.url + "/efetch.fcgi", requests_per_second=10, clock=clock, sleep=clock.sleep)
    assert f.http.limiter.rate == 3.0 and "NCBI allows 3 without an API key" in caplog.text
    with pytest.raises(P.MissingContactEmail, match=r"clinifact\.pubmed\.email .*NCBI_EMAIL"):
        f.fetch(["111"], progress=False)
    assert calls == []  # nothing was sent
    monkeypatch.setenv("NCBI_EMAIL", "me@example.org")
    assert sorted(P.PubmedFetcher(tmp_path / "pm", url=server.url + "/efetch.fcgi", clock=clock, sleep=clock.sleep).fetch(["111"], progress=False)) == ["111"]
    assert calls[0][3] == "me@example.org"


# --------------------------------------------------------------------------- text as PubMed has it
# A real-format efetch answer, pretty-printed (indented, one element a line, some inline markup on lines of
# its own), with the characters PubMed uses: U+00A0 (no-break space), U+2009 (thin space), U+202F (narrow
# no-break space), written as character references and as raw UTF-8.
PRETTY = """<?xml version="1.0" ?>
<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" "https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">
<PubmedArticleSet>
  <PubmedArticle>
    <MedlineCitation Status="MEDLINE" Owner="NLM" IndexingMethod="Automated">
      <PMID Version="1">91000010</PMID>
      <Article PubModel="Print-Electronic">
        <Journal>
          <ISSN IssnType="Electronic">1234-5678</ISSN>
          <JournalIssue CitedMedium="Internet">
            <Volume>12</Volume>
            <PubDate>
              <Year>2021</Year>
              <Month>Dec</Month>
              <Day>21</Day>
            </PubDate>
          </JournalIssue>
          <Title>Journal of Tests</Title>
        </Journal>
        <ArticleTitle>Serum β
          <sub>2</sub>-microglobulin after 10&#xa0;mg of <i>drug X</i> in CD4<sup>+</sup> T&#x2009;cells: a 12\u202fweek trial.</ArticleTitle>
        <Abstract>
          <AbstractText Label="BACKGROUND" NlmCategory="BACKGROUND">
            Drug X at 10\u00a0mg/kg lowers β<sub>2</sub>-microglobulin
            (β
            <sub>2</sub>
            M) in CD4<sup>+</sup> cells.
          </AbstractText>
          <AbstractText Label="RESULTS" NlmCategory="RESULTS">Levels fell by 1.2&#x202f;mg/L (<i>P</i>&#x2009;&lt;&#x2009;0.01; <b>n</b>&#xa0;=&#xa0;40), <u>not</u> in controls.</AbstractText>
          <AbstractText Label="CONCLUSIONS" NlmCategory="CONCLUSIONS">
            It works.
          </AbstractText>
        </Abstract>
        <DataBankList CompleteYN="Y">
          <DataBank>
            <DataBankName>ClinicalTrials.gov</DataBankName>
            <AccessionNumberList>
              <AccessionNumber>NCT01234567</AccessionNumber>
              <AccessionNumber> NCT07654321 </AccessionNumber>
              <AccessionNumber>NCT01234567</AccessionNumber>
            </AccessionNumberList>
          </DataBank>
          <DataBank>
            <DataBankName>ISRCTN</DataBankName>
            <AccessionNumberList>
              <AccessionNumber>ISRCTN12345678</AccessionNumber>
            </AccessionNumberList>
          </DataBank>
          <DataBank>
            <DataBankName>ClinicalTrials.gov</DataBankName>
            <AccessionNumberList>
              <AccessionNumber>NCT09999999</AccessionNumber>
            </AccessionNumberList>
          </DataBank>
        </DataBankList>
        <PublicationTypeList>
          <PublicationType UI="D016449">Randomized Controlled Trial</PublicationType>
        </PublicationTypeList>
      </Article>
    </MedlineCitation>
  </PubmedArticle>
</PubmedArticleSet>
"""


def test_pubmed_text_keeps_its_characters_and_drops_only_layout_whitespace():
    (rec,) = P.parse_pubmed_xml(PRETTY.encode("utf-8"))
    assert rec["title"] == "Serum β2-microglobulin after 10\u00a0mg of drug X in CD4+ T\u2009cells: a 12\u202fweek trial."
    assert rec["abstract"] == (
        "BACKGROUND: Drug X at 10\u00a0mg/kg lowers β2-microglobulin (β2M) in CD4+ cells.\n"
        "RESULTS: Levels fell by 1.2\u202fmg/L (P\u2009<\u20090.01; n\u00a0=\u00a040), not in controls.\n"
        "CONCLUSIONS: It works."
    )
    assert (rec["year"], rec["publication_date"], rec["publication_types"]) == (2021, "2021-Dec-21", ["Randomized Controlled Trial"])
    assert P.parse_pubmed_xml(P.split_article_set(PRETTY)["91000010"]) == [rec]  # the same through the per-PMID cache


# The same kind of record as an XML library's pretty-printer writes it (Python's minidom): every node of mixed
# content on a line of its own, the text with its own spaces, indented two spaces a level (\\x20: a space of the text
# at the end of a line).
ONE_NODE_A_LINE = """<?xml version="1.0" ?>
<PubmedArticleSet>
  <PubmedArticle>
    <MedlineCitation Status="MEDLINE" Owner="NLM">
      <PMID Version="1">91000011</PMID>
      <Article PubModel="Print">
        <ArticleTitle>
          Variants at the\x20
          <i>TERT</i>
           gene and CD4
          <sup>+</sup>
          <sub>2</sub>
           T\u00a0cells.
        </ArticleTitle>
        <Abstract>
          <AbstractText Label="RESULTS" NlmCategory="RESULTS">
            Oral Essentials
            <sup>&#xae;</sup>
             or Crest
            <sup>&#xae;</sup>
             3D (
            <i>P</i>
            &#x2009;=&#x2009;0.04;\x20
            <i>n</i>
            \x20
            <b>=</b>
             12).
          </AbstractText>
        </Abstract>
      </Article>
    </MedlineCitation>
  </PubmedArticle>
</PubmedArticleSet>
"""


def test_one_node_a_line_keeps_the_texts_own_spaces_and_adds_none():
    (rec,) = P.parse_pubmed_xml(ONE_NODE_A_LINE)
    assert rec["title"] == "Variants at the TERT gene and CD4+2 T\u00a0cells."
    assert rec["abstract"] == "RESULTS: Oral Essentials® or Crest® 3D (P\u2009=\u20090.04; n = 12)."


def test_databanklist_nct_ids_are_a_field_of_the_record():
    (rec,) = P.parse_pubmed_xml(PRETTY)
    assert rec["nct_ids"] == ["NCT01234567", "NCT07654321", "NCT09999999"]
    assert {r["pmid"]: r["nct_ids"] for r in P.parse_pubmed_xml(SET)} == {"91000001": [], "91000002": [], "91000003": [], "91000004": []}


def _cache(tmp_path, name: str, text: str) -> P.PubmedFetcher:
    cache = tmp_path / name
    cache.mkdir()
    (cache / "91000010.xml").write_bytes(P.split_article_set(PRETTY)["91000010"])
    (cache / "91000001.xml").write_text(text, encoding="utf-8")
    return cache


TRUNCATED = P.split_article_set(SET)["91000001"].decode("utf-8")[:700]  # cut inside the record


def test_a_truncated_cached_file_offline_is_a_counted_skip_naming_the_file_and_line(tmp_path):
    cache = _cache(tmp_path, "pm", TRUNCATED)
    report = SkipReport("abs")
    recs = list(P.PubmedFetcher(cache, offline=True).records(["91000001", "91000010"], report=report, progress=False))
    assert [r["pmid"] for r in recs] == ["91000010"]
    assert report.reasons() == {"cache_file_unreadable": 1}
    (skip,) = report.skipped
    line = TRUNCATED.count("\n") + 1
    assert skip["id"] == "91000001"
    assert skip["detail"].startswith(f"{cache / '91000001.xml'}, line {line}: not well-formed XML: unclosed token")


def test_a_truncated_cached_file_is_refetched_and_replaced(server, tmp_path, clock, monkeypatch):
    monkeypatch.delenv("NCBI_API_KEY", raising=False)
    calls: list = []
    server.handler = _efetch_handler(calls)
    cache = _cache(tmp_path, "pm", TRUNCATED)
    f = P.PubmedFetcher(cache, email="t@example.org", url=server.url + "/efetch.fcgi", clock=clock, sleep=clock.sleep)
    report = SkipReport("abs")
    recs = {r["pmid"]: r for r in f.records(["91000001", "91000010"], report=report, progress=False)}
    assert [c[1] for c in calls] == [["91000001"]]  # only the broken file is asked for again
    assert recs["91000001"]["abstract"] == "Abstract of 91000001." and recs["91000010"]["title"].startswith("Serum β2-")
    assert report.counts["cache_files_refetched"] == 1 and report.reasons() == {}
    assert P.parse_pubmed_xml((cache / "91000001.xml").read_bytes())[0]["title"] == "T91000001"


def test_an_unparseable_document_names_its_source_and_line():
    with pytest.raises(P.PubmedXmlError, match=r"^efetch answer, line 4: not well-formed XML: no element found") as err:
        P.parse_pubmed_xml('<?xml version="1.0" ?>\n<PubmedArticleSet>\n<PubmedArticle><MedlineCitation>\n', source="efetch answer")
    assert (err.value.path, err.value.line) == ("efetch answer", 4)


# --- answers are checked: PMIDs are digits before they become paths, records not asked for are dropped --------------


def _article(pmid: str, title: str) -> str:
    return (f'<PubmedArticle><MedlineCitation><PMID Version="1">{pmid}</PMID><Article><ArticleTitle>{title}</ArticleTitle>'
            f"<Abstract><AbstractText>Abstract of {title}.</AbstractText></Abstract></Article></MedlineCitation></PubmedArticle>")


def test_records_not_asked_for_are_dropped_and_counted_and_never_become_paths(server, tmp_path, clock):
    """An efetch answer (a proxy's, a server's bug) that holds other PMIDs than those asked for: 222's record for
    111, and a PMID that is a path. Nothing of it is stored or returned."""
    calls: list = []

    def handler(method, path, query, body):
        calls.append(query["id"][0])
        arts = _article("222", "Not asked for") + _article("../../escaped", "Escape") + _article("113", "Asked for")
        return 200, {"Content-Type": "text/xml"}, f"<?xml version='1.0'?><PubmedArticleSet>{arts}</PubmedArticleSet>".encode()

    server.handler = handler
    cache = tmp_path / "a" / "b" / "pm"
    f = P.PubmedFetcher(cache, email="t@example.org", url=server.url + "/efetch.fcgi", clock=clock, sleep=clock.sleep)
    report = SkipReport("abs")
    recs = list(f.records(["111", "113", "../../x", "PMC7", " 114 "], report=report, progress=False))
    assert calls == ["111,113,114"]  # only digits are asked for (whitespace around them stripped)
    assert [(r["pmid"], r["title"]) for r in recs] == [("113", "Asked for")]
    assert sorted(p.name for p in cache.iterdir()) == ["113.xml"]
    assert not list((tmp_path / "a").glob("*.xml")) and not list(tmp_path.glob("*.xml"))  # ../../escaped.xml never written
    assert report.reasons() == {"pmid_not_digits": 2, "pmid_not_returned": 2, "record_not_asked_for": 2}
    assert sorted(s["id"] for s in report.skipped if s["reason"] == "record_not_asked_for") == ["../../escaped", "222"]
    assert f.cached_path("../../escaped") is None and f.cached_path("113") == cache / "113.xml"
