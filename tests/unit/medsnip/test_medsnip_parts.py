"""MedSNIP parts: sentence splitting, the bench loader, aggregation, bootstrap variants against
scipy and hand computation, label projection, boundary fidelity and ARI against sklearn, the
retrieval verifier's guards, and the search backends."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
import scipy.stats
from sklearn.metrics import adjusted_rand_score

from tests.helpers.fake_openai import FakeOpenAI, reply_json
from tests.helpers.config import call_step
from tests.helpers.medsnip import decompose_opts, llm_opts, prepare_opts, retrieval_opts, score_opts, verify_opts
from tests.unit.medsnip.conftest import DEMO_BENCH

from medfc.common.jsoncache import UnitCache
from medfc.common.report import SkipReport
from medfc.medsnip import analysis, steps
from medfc.medsnip.answers import bench_answers, read_records
from medfc.medsnip.calls import make_llm
from medfc.medsnip.options import VerifyOptions
from medfc.medsnip.sentences import align_atoms, split_sentences
from medfc.medsnip.verify import BM25Search, Verifier, parse_one_word
from medfc.retrieval.search import CachedSearch, PubMedSearch, WebSearch
from medfc.scoring.medsnip import (
    FALSE,
    TRUE,
    _counts,
    _encode,
    _metric_from_counts,
    aggregate,
    binary_scores,
    clustered_paired_bootstrap,
    paired_bootstrap,
)

T, F = TRUE, FALSE


def test_sentence_split_rules_and_spans():
    text = ("## Overview\nVitamin D is made in the skin [1]. It helps (mostly) bones [2,3]! Ok.\n"
            "Key Considerations:\n1. **Dose**: Adults need 600 IU per day [1-3].\n- e.g. sunlight. More sun helps in summer?\n")
    sents = split_sentences(text)
    assert [s.text for s in sents] == ["Vitamin D is made in the skin", "It helps (mostly) bones!",
                                       "Dose: Adults need 600 IU per day", "e.g. sunlight", "More sun helps in summer?"]
    assert [text[s.start:s.end] for s in sents][:3] == ["Vitamin D is made in the skin", "It helps (mostly) bones [2,3]!",
                                                          "Dose**: Adults need 600 IU per day"]
    assert [s.index for s in sents] == [0, 1, 2, 3, 4]
    assert align_atoms(["Vitamin D is made in human skin.", "Bones need calcium.", "Sun in summer helps more."], sents) == [0, None, 4]


def test_bench_loader_groups_entries_and_skips_bad_records():
    report = SkipReport("t")
    answers = bench_answers(read_records(DEMO_BENCH), report)
    assert [a["answer_id"] for a in answers] == ["101", "102", "103", "104"]
    assert [len(a["snippets"]) for a in answers] == [3, 3, 3, 2] and [len(a["atoms"]) for a in answers] == [4, 4, 4, 2]
    s = answers[2]["snippets"][1]
    assert (s["snippet_id"], s["pattern"], s["atoms"], s["labels"]) == ("103-S2", "D", [3], {"atomic": T, "general": T, "contextual": F})
    assert answers[0]["atoms"][3] == {"index": 4, "text": "Vitamin D cures the common cold.", "label": F}
    assert [a["label"] for a in answers] == [F, F, F, T] and answers[2]["subset"] == "vignette"
    recs = read_records(DEMO_BENCH)
    bad = [dict(recs[0]), dict(recs[1], pattern="G"), dict(recs[2], label_atomic="false"), dict(recs[3], snippet_id="102"),
           {k: v for k, v in recs[4].items() if k != "atoms"}, dict(recs[1], snippet_id="101-S9", full_text="another text"),
           dict(recs[6], atoms=[{"index": 1}])]
    report = SkipReport("t")
    out = bench_answers([recs[0], *bad], report)
    assert report.reasons() == {"bad_atom": 1, "bad_label": 1, "bad_pattern": 1, "bad_snippet_id": 1, "duplicate_snippet_id": 1,
                                "entry_mismatch": 1, "missing_field": 1}
    assert [len(a["snippets"]) for a in out] == [1]
    report = SkipReport("t")
    assert [a["answer_id"] for a in bench_answers(recs, report, ["test"])] == ["102"] and report.excluded == {"split_dev": 6, "split_train": 2}


def test_aggregation_rules():
    units = [T, F, None, F, T]
    assert [aggregate(units, r) for r in ("or_false", "and_false", "majority", "first")] == [F, T, T, T]
    # majority ignores the abstaining unit: 2 FALSE vs 2 TRUE is a tie -> TRUE; 3 vs 2 -> FALSE
    assert aggregate([T, F, None, F, T, F], "majority") == F
    assert aggregate(units, "threshold_k", k=2) == F and aggregate(units, "threshold_k", k=3) == T
    assert aggregate([F], "threshold_k", k=2) == T  # FALSE only with at least k FALSE units (the MedSNIP repository's rule)
    assert aggregate([None, None], "and_false") is None and aggregate([F, F], "and_false") == F
    assert aggregate([None, T], "and_false", abstain="as_false") == T
    with pytest.raises(ValueError, match="aggregation"):
        aggregate([T], "any")


def _random_arms(n: int, seed: int):
    rng = np.random.default_rng(seed)
    g = list(np.where(rng.random(n) < 0.35, F, T))
    a = list(np.where(rng.random(n) < 0.3, F, T))
    b = [x if rng.random() < 0.75 else (T if x == F else F) for x in g]
    return g, a, b


@pytest.mark.parametrize("method,scipy_method", [("percentile", "percentile"), ("bca", "BCa")])
def test_flat_bootstrap_equals_scipy(method, scipy_method):
    g, a, b = _random_arms(80, 3)
    ours = paired_bootstrap(g, a, b, n_resamples=3000, seed=9, method=method)
    G, PA, KA = _encode(g, a, "drop")
    _, PB, KB = _encode(g, b, "drop")
    C = np.concatenate([_counts(G, PA, KA), _counts(G, PB, KB)], axis=1).astype(float)

    def delta(i, axis=-1):
        s = C[i].sum(axis=-2)
        return _metric_from_counts(s[..., 4:], "ff1") - _metric_from_counts(s[..., :4], "ff1")

    ref = scipy.stats.bootstrap((np.arange(80),), delta, paired=True, vectorized=True, n_resamples=3000,
                                rng=np.random.default_rng(9), method=scipy_method).confidence_interval
    assert (ours["ci_low"], ours["ci_high"]) == (pytest.approx(ref.low, abs=1e-12), pytest.approx(ref.high, abs=1e-12))
    assert ours["diff"] == pytest.approx(binary_scores(g, b)["ff1"] - binary_scores(g, a)["ff1"])
    if method == "bca":
        assert ours["ci_low"] != paired_bootstrap(g, a, b, n_resamples=3000, seed=9)["ci_low"]


def test_bca_hand_computed_on_a_constructed_sample():
    # 4 claims, gold F F T T; A predicts T T T T (FF1 0), B predicts F T T T (FF1 2/3): Δ = 2/3.
    gold, a, b = [F, F, T, T], [T, T, T, T], [F, T, T, T]
    r = paired_bootstrap(gold, a, b, n_resamples=2000, seed=1, method="bca")
    # jackknife Δ leaving out each claim: 0 (claim 0 gone), 1 (claim 1 gone: tp 1 fn 0), 2/3, 2/3
    # mean 7/12, so U = (7, -5, -1, -1) / 12: sum U^3 = 216/1728, sum U^2 = 76/144
    assert r["acceleration"] == pytest.approx((216 / 1728) / (6 * (76 / 144) ** 1.5))
    assert r["diff"] == pytest.approx(2 / 3) and r["score_a"] == 0.0
    assert r["ci_low"] < r["ci_high"] and not r["bca_degenerate"]


def test_clustered_bootstrap_resamples_whole_answers():
    # with one unit per cluster it is the flat bootstrap over the same draws
    g, a, b = _random_arms(60, 5)
    ids = [f"c{i}" for i in range(60)]
    flat = paired_bootstrap(g, a, b, n_resamples=400, seed=4)
    cl = clustered_paired_bootstrap((g, a, ids), (g, b, ids), n_resamples=400, seed=4)
    assert (cl["ci_low"], cl["ci_high"], cl["p_gt_0"]) == (flat["ci_low"], flat["ci_high"], flat["p_gt_0"])
    # different units per answer: compare with a plain loop over resampled answers
    arm_a = ([F, T, T, F, T, T, T], [F, T, F, T, T, T, F], ["x", "x", "x", "y", "y", "z", "z"])
    arm_b = ([F, F, T, T], [F, T, T, T], ["x", "y", "z", "z"])
    r = clustered_paired_bootstrap(arm_a, arm_b, n_resamples=300, seed=2)
    order = ["x", "y", "z"]
    rng = np.random.default_rng(2)
    diffs = []
    for _ in range(300):
        pick = rng.integers(0, 3, size=3)
        def arm(g, p, c):
            gg = [gi for k in pick for gi, ci in zip(g, c) if ci == order[k]]
            pp = [pi for k in pick for pi, ci in zip(p, c) if ci == order[k]]
            return binary_scores(gg, pp)["ff1"]
        diffs.append(arm(*arm_b) - arm(*arm_a))
    assert (r["ci_low"], r["ci_high"]) == (pytest.approx(np.percentile(diffs, 2.5)), pytest.approx(np.percentile(diffs, 97.5)))
    assert (r["n_clusters"], r["n_units_a"], r["n_units_b"]) == (3, 7, 4)
    assert r["score_a"] == pytest.approx(binary_scores(arm_a[0], arm_a[1])["ff1"])


def test_ff1_interval_resamples_whole_answers():
    # one arm's FF1 with its percentile interval, against a plain loop over resampled answers (abstentions dropped)
    gold = [F, T, T, F, T, F, T, F]
    pred = [F, F, T, T, None, F, T, F]
    clusters = ["x", "x", "y", "y", "y", "z", "w", "w"]
    r = analysis.ff1_interval(gold, pred, clusters, n_resamples=300, seed=3, alpha=0.1)
    order = ["x", "y", "z", "w"]
    rng = np.random.default_rng(3)
    values = []
    for _ in range(300):
        pick = rng.integers(0, 4, size=4)
        rows = [(g, q) for k in pick for g, q, c in zip(gold, pred, clusters) if c == order[k]]
        values.append(binary_scores([g for g, _ in rows], [q for _, q in rows])["ff1"])
    assert r["ff1"] == pytest.approx(binary_scores(gold, pred)["ff1"]) == pytest.approx(0.75)  # tp 3, fp 1, fn 1
    assert (r["ci_low"], r["ci_high"]) == (pytest.approx(np.percentile(values, 5)), pytest.approx(np.percentile(values, 95)))
    assert (r["n_clusters"], r["ci_level"]) == (4, pytest.approx(0.9))


def test_ari_matches_sklearn_and_set_f1_by_hand():
    rng = np.random.default_rng(0)
    for _ in range(100):
        n = int(rng.integers(1, 15))
        x, y = list(rng.integers(0, 4, n)), list(rng.integers(0, 5, n))
        assert analysis.adjusted_rand_index(x, y) == pytest.approx(adjusted_rand_score(x, y), abs=1e-12)
    human = [[0], [1, 2], [3]]
    auto = [[0, 1], [2], [3], []]
    # {0,1}: best {0} (P 1/2 R 1 -> 2/3) or {1,2} (P 1/2 R 1/2 -> 1/2); {2}: {1,2} -> 2/3; {3}: 1; empty: 0
    assert [f for _, f in analysis.best_human_pairs(auto, human)] == pytest.approx([2 / 3, 2 / 3, 1.0, 0.0])
    hu = [{"source_sentences": s, "source_atoms": [k + 1]} for k, s in enumerate(human)]
    au = [{"source_sentences": s} for s in auto[:3]]
    p = analysis.partition_ari(hu, au, 4)
    assert p == {"over": "sentences", "ari": pytest.approx(adjusted_rand_score([0, 1, 1, 2], [0, 0, 1, 2]))}


def test_rouge_l_and_best_pairs_by_hand():
    # LCS of the tokens: the, cat, on, mat = 4 of 6 and 6 -> P = R = F = 2/3
    assert analysis.rouge_l("The cat sat on the mat.", "the cat lay on a mat", stem=False) == pytest.approx(2 / 3)
    # punctuation and case do not count; numbers are tokens
    assert analysis.rouge_tokens("Vitamin-D3, 4,000 IU!", stem=False) == ["vitamin", "d3", "4", "000", "iu"]
    # stemming (tokens longer than three characters): running -> run, runners -> runner; "runs" -> run
    assert analysis.rouge_l("running runners", "runs fast", stem=False) == 0.0
    assert analysis.rouge_l("running runners", "runs fast", stem=True) == pytest.approx(0.5)
    assert analysis.rouge_l("", "anything") == 0.0 and analysis.rouge_l("same words", "same words") == 1.0
    assert analysis.lcs_length(list("ABCBDAB"), list("BDCABA")) == 4
    # each automatic snippet's best human snippet by set-F1; ties -> the first; no sentence -> None
    human = [[0], [1, 2], [], [3]]
    assert analysis.best_human_pairs([[0, 1], [2], [3], [], [5]], human) == [
        (0, pytest.approx(2 / 3)), (1, pytest.approx(2 / 3)), (3, 1.0), (None, 0.0), (0, 0.0)]


def test_fidelity_cosine_is_sentence_transformers_minilm_cosine():
    """The default fidelity encoder is the offline all-MiniLM-L6-v2, pooled as sentence-transformers pools it."""
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from medfc.common.embeddings import TransformersEmbedder, default_model_path

    texts = ["Vitamin D does not prevent colds in adults.", "Adults who take vitamin D get as many colds.",
             "Zinc lozenges shorten a cold by about a day."]
    ours = TransformersEmbedder(max_length=256).encode(texts)
    ref = SentenceTransformer(default_model_path(), device="cpu").encode(texts, normalize_embeddings=True)
    assert np.allclose(ours @ ours.T, ref @ ref.T, atol=1e-5)


def test_label_projection_policies():
    answer = {"answer_id": "e", "text": "Aspirin thins blood. Aspirin cures flu and aspirin is cheap. Water is wet.",
              "atoms": [{"index": 1, "text": "Aspirin thins blood.", "label": T}, {"index": 2, "text": "Aspirin cures flu.", "label": F},
                        {"index": 3, "text": "Aspirin is cheap.", "label": T}, {"index": 4, "text": "Water is wet.", "label": T}],
              "snippets": [{"index": 1, "text": "a", "atoms": [1], "pattern": "D", "labels": {"atomic": T, "general": T, "contextual": T}},
                           {"index": 2, "text": "b", "atoms": [2], "pattern": "D", "labels": {"atomic": F, "general": F, "contextual": F}},
                           {"index": 3, "text": "c", "atoms": [3], "pattern": "F", "labels": {"atomic": T, "general": T, "contextual": T}},
                           {"index": 4, "text": "d", "atoms": [4], "pattern": "D", "labels": {"atomic": T, "general": T, "contextual": T}}]}
    one_each = [{"source_sentences": [i]} for i in range(3)]
    assert analysis.project_labels(answer, one_each, "drop_mixed") == [T, None, T]  # sentence 1 holds a FALSE and a TRUE snippet
    units = [{"source_sentences": [0]}, {"source_sentences": [1]}, {"source_sentences": [0, 2]}, {"source_sentences": [0, 1, 2]}, {"source_sentences": []}]
    assert analysis.project_labels(answer, units, "drop_mixed") == [T, None, T, None, None]
    assert analysis.project_labels(answer, units, "and") == [T, F, T, F, None]
    # majority: sentence 1's snippets tie 1 FALSE : 1 TRUE -> TRUE; then the AND over each unit's sentences
    assert analysis.project_labels(answer, units, "majority") == [T, T, T, T, None]
    assert analysis.sentence_votes(answer)[1] == {F: 1, T: 1}
    # a second FALSE snippet on sentence 1 tips it: units touching it become FALSE
    two_false = {**answer, "atoms": answer["atoms"] + [{"index": 5, "text": "Aspirin cures flu.", "label": F}],
                 "snippets": answer["snippets"] + [{"index": 5, "text": "e", "atoms": [5], "pattern": "D",
                                                    "labels": {"atomic": F, "general": F, "contextual": F}}]}
    assert analysis.sentence_votes(two_false)[1] == {F: 2, T: 1}
    assert analysis.project_labels(two_false, units, "majority") == [T, F, T, F, None]


def test_single_call_parsing():
    assert [parse_one_word(x) for x in ("True", "false.", "**FALSE** because", "Yes", "", "True, mostly", "Not true")] == [T, F, F, None, None, T, None]


def _rag(url, tmp_path, passages, max_rounds=5):
    opts = VerifyOptions.from_mapping(verify_opts("retrieval", "r", llm_opts(url), retrieval=retrieval_opts(passages, tmp_path / "search", max_rounds)))
    searchers = {"bm25": CachedSearch(BM25Search(passages, "text", "title", "id", "url"), UnitCache(tmp_path / "search"))}
    return Verifier(make_llm(opts.llm), opts, UnitCache(""), SkipReport("t"), searchers)


def test_retrieval_guards_cap_and_malformed(tmp_path):
    def responder(body):
        msgs = body["messages"]
        user, system = msgs[1]["content"], msgs[0]["content"]
        if system.startswith("You are a medical fact-checker. No more"):
            return '{"final_answer": false, "reasoning": "forced"}' if "aspirin" in user else '{"abstain": true}'
        if "eager" in user:  # TRUE at once without evidence -> told to search; then searches and answers
            if "(no evidence yet)" in user and "TRUE on the first turn" not in user:
                return '{"final_answer": true, "confidence": 0.99}'
            if "(no evidence yet)" in user:
                return '{"search_query": "fluids per day", "source": "bm25"}'
            return '{"final_answer": true, "confidence": 0.97}'
        if "aspirin" in user:  # searches forever -> cap -> forced final
            return '{"search_query": "aspirin", "source": "bm25"}'
        if "ghost" in user:  # asks for a backend that does not exist, even after the repair
            return '{"search_query": "x", "source": "web"}'
        return "not json"

    units = [{"unit_id": u, "answer_id": "a", "mode": "human_snippets", "text": t} for u, t in
             (("u1", "An eager statement about fluids."), ("u2", "aspirin thins blood"), ("u3", "a ghost statement"), ("u4", "junk"))]
    with FakeOpenAI(responder) as server:
        ver = _rag(server.base_url, tmp_path, _passages(tmp_path), max_rounds=3)
        out = {r["unit_id"]: r for r in ver.run(units, {})}
    assert (out["u1"]["verdict"], out["u1"]["confidence"], out["u1"]["rounds"], len(out["u1"]["evidence"])) == (T, 0.97, 3, 1)
    assert (out["u2"]["cap_hit"], out["u2"]["forced_final"], out["u2"]["verdict"], out["u2"]["confidence"], len(out["u2"]["evidence"])) == (True, True, F, None, 3)
    assert out["u2"]["usage"]["calls"] == 4  # 3 turns + the forced final
    assert (out["u3"]["malformed"], out["u3"]["forced_final"], out["u3"]["abstained"], out["u3"]["verdict"]) == (True, True, True, None)
    assert out["u3"]["usage"]["calls"] == 3 and "schema: source" in out["u3"]["error"]  # turn + repair + forced final
    assert ver.counts["guard_true_without_evidence"] == 1 and ver.counts["cap_hit"] == 1 and ver.counts["malformed"] == 2
    from medfc.medsnip.evaluate import effective_verdict

    assert [effective_verdict(out[u], 0.9) for u in ("u1", "u2", "u3")] == [T, None, None]


def _passages(tmp_path):
    p = tmp_path / "p.jsonl"
    p.write_text("".join(json.dumps({"id": f"d{i}", "title": t, "text": x, "url": ""}) + "\n" for i, (t, x) in enumerate([
        ("Aspirin", "Aspirin inhibits platelets and thins blood."), ("Fluids", "Adults need about two liters of fluids per day."),
        ("Coffee", "Coffee contains caffeine."), ("Empty", "")])), encoding="utf-8")
    return p


def test_bm25_backend_ranks_and_caches(tmp_path):
    bm = BM25Search(_passages(tmp_path), "text", "title", "id", "url")
    assert len(bm.docs) == 3  # the passage without text is left out
    assert [h.id for h in bm.search("does aspirin thin the blood", 3)] == ["d0"]
    assert bm.search("the of and", 3) == []
    cached = CachedSearch(bm, UnitCache(tmp_path / "c"))
    first = cached.search("fluids per day", 2)
    assert [h.id for h in first] == ["d1"] and cached.search("fluids  per day", 2) == first and cached.searches == 1


def test_pubmed_and_web_backends_through_local_servers(tmp_path, monkeypatch):
    from medfc.retrieval.pubmed import PubmedFetcher

    xml = (b'<?xml version="1.0" ?><PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>11</PMID><Article>'
           b'<ArticleTitle>Aspirin and bleeding</ArticleTitle><Abstract><AbstractText Label="RESULTS">Aspirin raised bleeding.</AbstractText>'
           b'</Abstract></Article></MedlineCitation></PubmedArticle></PubmedArticleSet>')
    log = []

    class H(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            log.append(self.path)
            if self.path.startswith("/esearch"):
                reply_json(self, {"esearchresult": {"idlist": ["11", "12"]}})
            else:
                reply_json(self, xml, headers={"Content-Type": "text/xml"})

        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            log.append(("web", body, self.headers.get("X-API-KEY")))
            reply_json(self, {"answerBox": {"title": "Box", "answer": "Yes."}, "organic": [
                {"title": "R1", "snippet": "First.", "link": "https://a", "position": 1},
                {"title": "R2", "snippet": "Second.", "link": "https://b", "position": 2}]})

        def log_message(self, *a):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        fetcher = PubmedFetcher(tmp_path / "pm", api_key="", email="t@example.org", url=base + "/efetch", esearch_url=base + "/esearch",
                                requests_per_second=1000)
        pm = CachedSearch(PubMedSearch(fetcher), UnitCache(tmp_path / "sc"))
        hits = pm.search("aspirin bleeding", 3)
        assert [(h.id, h.title, h.text, h.url) for h in hits] == [("11", "Aspirin and bleeding", "RESULTS: Aspirin raised bleeding.",
                                                                    "https://pubmed.ncbi.nlm.nih.gov/11/")]
        assert "term=aspirin+bleeding" in log[0] and "retmax=3" in log[0] and "sort=relevance" in log[0] and "tool=medfc" in log[0]
        assert pm.search("aspirin bleeding", 3) == hits and len(log) == 2  # esearch + efetch once
        monkeypatch.setenv("MEDFC_TEST_SERPER", "serper-key")
        from medfc.common.http import HttpClient

        web = WebSearch(base + "/search", "MEDFC_TEST_SERPER", HttpClient(cache_dir=tmp_path / "web", rate=1000))
        assert [(h.title, h.text) for h in web.search("q", 2)] == [("Box", "Yes."), ("R1", "First.")]
        monkeypatch.setenv("MEDFC_TEST_SERPER", "rotated-key")
        web.search("q", 2)
        assert log[2:] == [("web", {"num": 2, "q": "q"}, "serper-key")]  # cached: the key is not part of the cache key
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize("unparsed,expected", [("false", [F, None, T]), ("abstain", [None, None, T])])
def test_single_call_unparsed_and_failed_calls(tmp_path, unparsed, expected):
    """The model's unreadable answer follows the ``unparsed`` rule; a failed call is no verdict under either
    (not FALSE under ``unparsed: false``): ``failed``, not ``unparsed``, not cached."""
    answers = {"a": {"answer_id": "a", "query": "Q?", "text": "Full answer."}}
    units = [{"unit_id": f"a:atoms:{k}", "answer_id": "a", "mode": "atoms", "text": t} for k, t in enumerate(("maybe unit", "down unit", "fine unit"))]
    with FakeOpenAI(lambda b: "Perhaps." if "maybe" in b["messages"][-1]["content"] else "true") as server:
        opts = VerifyOptions.from_mapping(verify_opts("full_context", "s", llm_opts(server.base_url, max_retries=0), unparsed=unparsed,
                                                      unit_cache_dir=str(tmp_path / "u")))
        ver = Verifier(make_llm(opts.llm), opts, UnitCache(tmp_path / "u"), SkipReport("t"))
        out = ver.run(units[:1], answers)
        server.fail_next = [(500, {})]
        out += ver.run(units[1:], answers)
        user = server.chat_requests()[0]["messages"][-1]["content"]
    assert [r["verdict"] for r in out] == expected and [r["unparsed"] for r in out] == [True, False, False]
    assert [r["failed"] for r in out] == [False, True, False] and ver.failures == [("a:atoms:1", out[1]["error"])]
    assert ver.counts == {"unparsed": 1, "failed_call": 1} and "HTTP 500" in out[1]["error"]
    assert user == "Question: Q?\nFull answer (context only, not evidence): Full answer.\nStatement: maybe unit"
    # the failed call is not cached, the answered ones are
    assert ver.cache.stats == {"misses": 3}
    assert len(list((tmp_path / "u").rglob("*.json"))) == 2


def test_tiny_local_causal_lm_through_the_medsnip_path(tmp_path):
    """A random tiny model answers nonsense: decomposition falls back to whole texts, and the
    single-call verifier's unparsed answers count FALSE; nothing crashes and every call is counted."""
    from tests.helpers.tiny_models import build_tiny_causal_lm

    from medfc.common.io import read_jsonl
    from medfc.medsnip import steps

    model = build_tiny_causal_lm(tmp_path / "lm", n_positions=4096)
    local = llm_opts("", backend="transformers", model=str(model), max_tokens=8, batch_size=3)
    call_step(steps.prepare, {"source": str(DEMO_BENCH)}, {"answers": tmp_path / "a.jsonl"}, prepare_opts(splits=["dev"]))
    info = call_step(steps.decompose, {"answers": tmp_path / "a.jsonl"}, {"units": tmp_path / "u.jsonl", "report": tmp_path / "r.json"},
                     decompose_opts("direct", local, unit_cache_dir=str(tmp_path / "cache")))
    units = list(read_jsonl(tmp_path / "u.jsonl"))
    assert [(u["unit_id"], u["fallback"], u["source_sentences"]) for u in units] == [("101:direct:1", True, [0, 1, 2]),
                                                                                      ("103:direct:1", True, [0, 1, 2])]
    assert info["counts"]["direct_malformed"] == 2 and info["counts"]["fallback_whole_text"] == 2
    assert info["calls"]["decompose:direct"]["calls"] == 2 and info["calls"]["decompose:direct:repair"]["calls"] == 2
    assert info["usage"]["completion_tokens"] > 0
    v = call_step(steps.verify, {"units": tmp_path / "u.jsonl", "answers": tmp_path / "a.jsonl"}, {"verdicts": tmp_path / "v.jsonl"},
                  verify_opts("claim_only", "tiny", local))
    assert v["usage"]["calls"] == 2 and v["verdicts"] == {"FALSE": 2} and v["counts"] == {"unparsed": 2}
    # a model too short for the prompt: failed calls, which fail the step naming them (no verdicts written) ...
    from medfc.medsnip.calls import LLMCallsFailed

    short = {**local, "model": str(build_tiny_causal_lm(tmp_path / "short"))}
    with pytest.raises(LLMCallsFailed, match=r"^medsnip verify tiny: 2 LLM calls failed, for 2 of 2 units .*exceeds the model's 128 positions"):
        call_step(steps.verify, {"units": tmp_path / "u.jsonl", "answers": tmp_path / "a.jsonl"}, {"verdicts": tmp_path / "v2.jsonl"},
                  verify_opts("claim_only", "tiny", short, unparsed="abstain"))
    assert not (tmp_path / "v2.jsonl").exists()
    # ... unless max_failed_share allows them: then written as failed (no verdict, never FALSE), counted
    v2 = call_step(steps.verify, {"units": tmp_path / "u.jsonl", "answers": tmp_path / "a.jsonl"}, {"verdicts": tmp_path / "v2.jsonl"},
                   verify_opts("claim_only", "tiny", {**short, "max_failed_share": 1.0}, unparsed="false"))
    assert v2["counts"] == {"failed_call": 2} and v2["calls"]["verify:claim_only"]["failed"] == 2 and v2["verdicts"] == {"None": 2}
    assert v2["failed"] == 2 and v2["unparsed"] == 0


def test_failed_search_is_recorded_not_raised(tmp_path):
    from medfc.common.http import HttpError

    class Broken:
        name = "bm25"

        def index_id(self):
            return "broken"

        def search(self, query, k):
            raise HttpError("GET https://index: HTTP 503 after 4 attempts", status=503)

    def responder(body):
        user = body["messages"][1]["content"]
        if "(no evidence yet)" in user:
            return '{"search_query": "aspirin", "source": "bm25"}'
        return '{"abstain": true}' if "(search failed)" in user else '{"final_answer": true, "confidence": 1.0}'

    with FakeOpenAI(responder) as server:
        ver = _rag(server.base_url, tmp_path, _passages(tmp_path))
        ver.searchers = {"bm25": CachedSearch(Broken(), UnitCache(""))}
        [out] = ver.run([{"unit_id": "u", "answer_id": "a", "mode": "atoms", "text": "aspirin thins blood"}], {})
    assert out["evidence"] == [{"round": 1, "source": "bm25", "query": "aspirin", "hits": [],
                                "error": "HttpError: GET https://index: HTTP 503 after 4 attempts"}]
    assert (out["abstained"], out["verdict"], out["rounds"]) == (True, None, 2)
    assert ver.counts["search_failed"] == 1 and ver.report.reasons() == {"search_failed": 1}


def test_per_pattern_clustered_interval():
    """One answer per snippet: the clustered interval is the flat percentile one (same draws); snippets
    sharing answers: whole answers are resampled, and the number of clusters is the number of answers."""
    rng = np.random.default_rng(3)
    rows = [{"pattern": "AB"[k % 2], "gold": [T, F][int(rng.integers(0, 2))], "snippet": [T, F][int(rng.integers(0, 2))],
             "atoms": [[T, F][int(rng.integers(0, 2))] for _ in range(2)], "cluster": f"a{k}"} for k in range(40)]
    flat = analysis.per_pattern(rows, n_resamples=300, seed=5, method="percentile")
    for pattern in ("A", "B", "all"):
        r = flat[pattern]
        assert (r["cluster_ci_low"], r["cluster_ci_high"], r["cluster_p_gt_0"]) == (r["ci_low"], r["ci_high"], r["p_gt_0"])
    assert flat["all"]["n_clusters"] == 40
    shared = analysis.per_pattern([{**r, "cluster": f"a{k // 4}"} for k, r in enumerate(rows)], n_resamples=300, seed=5)
    assert shared["all"]["n_clusters"] == 10 and shared["A"]["n_clusters"] == 10
    assert (shared["all"]["cluster_ci_low"], shared["all"]["cluster_ci_high"]) != (flat["all"]["ci_low"], flat["all"]["ci_high"])


def _verdict(mode: str, answer: str, k: int, gold: str, verdict: str | None, **extra) -> dict:
    labels = {"physician": gold} if mode == "human_atoms" else {"atomic": gold, "general": gold, "contextual": gold}
    return {"verifier": "v", "mode": mode, "unit_id": f"{answer}:{mode}:{k}", "answer_id": answer, "labels": labels,
            "verdict": verdict, "pattern": None if mode == "human_atoms" else "A", "source_atoms": [k], "usage": {"calls": 1},
            "rounds": 1, **extra}


def _write_jsonl(path, rows) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_score_step_cluster_bootstrap_option(tmp_path):
    """``score.cluster_bootstrap``: the union in first-appearance order by default, the repository's sorted
    intersection on request; scores.json records which."""
    rng = np.random.default_rng(8)
    pick = lambda: [T, F][int(rng.integers(0, 2))]  # noqa: E731
    atoms = [_verdict("human_atoms", a, k, pick(), pick()) for a in ("12", "3", "7", "40") for k in range(1, 4)]
    snips = [_verdict("human_snippets", a, k, pick(), pick()) for a in ("7", "12", "3", "9") for k in range(1, 3)]  # 40 / 9: one arm only
    _write_jsonl(tmp_path / "answers.jsonl", [{"answer_id": a, "source": "bench", "label": T} for a in ("12", "3", "7", "40", "9")])
    _write_jsonl(tmp_path / "atoms.jsonl", atoms)
    _write_jsonl(tmp_path / "snips.jsonl", snips)
    inputs = {"answers": tmp_path / "answers.jsonl", "verdicts": [tmp_path / "atoms.jsonl", tmp_path / "snips.jsonl"]}
    arm = lambda recs, key: ([r["labels"][key] for r in recs], [r["verdict"] for r in recs], [r["answer_id"] for r in recs])  # noqa: E731
    opts = score_opts("unit", "human_atoms", n_resamples=700)
    with pytest.raises(KeyError, match="no verdicts, no scores"):  # a miswired rule writes no empty scores
        call_step(steps.score, {"answers": tmp_path / "answers.jsonl"}, {"scores": tmp_path / "none.json"}, opts)
    assert not (tmp_path / "none.json").exists()
    default = call_step(steps.score, inputs, {"scores": tmp_path / "d.json"}, opts)
    cmp = default["arms"]["v/human_snippets"]["vs_baseline"]
    assert default["options"]["cluster_bootstrap"] == "union" and cmp["clusters"] == "union" and cmp["n_clusters"] == 5
    assert cmp == clustered_paired_bootstrap(arm(atoms, "physician"), arm(snips, "atomic"), n_resamples=700, seed=42,
                                             alpha=1 - opts["ci_level"])
    repo = call_step(steps.score, inputs, {"scores": tmp_path / "r.json"}, {**opts, "cluster_bootstrap": "sorted_intersection"})
    cmp_r = repo["arms"]["v/human_snippets"]["vs_baseline"]
    assert json.loads((tmp_path / "r.json").read_text())["options"]["cluster_bootstrap"] == "sorted_intersection"
    assert cmp_r == clustered_paired_bootstrap(arm(atoms, "physician"), arm(snips, "atomic"), n_resamples=700, seed=42,
                                               alpha=1 - opts["ci_level"], clusters="sorted_intersection")
    assert (cmp_r["clusters"], cmp_r["n_clusters"], cmp_r["n_clusters_a_only"], cmp_r["n_clusters_b_only"]) == ("sorted_intersection", 3, 1, 1)
    # the caption says which clusters the Δ interval resampled when it is the repository's variant
    out = {"csv": tmp_path / "t.csv", "md": tmp_path / "t.md", "tex": tmp_path / "t.tex"}
    call_step(steps.table, {"scores": tmp_path / "r.json"}, out, {"title": "bench", "dataset": "bench"})
    assert "answers both arms hold, sorted; Δ = 0 when an arm draws no unit" in (tmp_path / "t.md").read_text()
    call_step(steps.table, {"scores": tmp_path / "d.json"}, out, {"title": "bench", "dataset": "bench"})
    assert "both arms hold" not in (tmp_path / "t.md").read_text()
    # the arms' own scores and FF1 intervals do not depend on the option
    for key in ("ff1", "ff1_interval", "counts"):
        assert repo["arms"]["v/human_snippets"][key] == default["arms"]["v/human_snippets"][key]


def test_score_step_reports_how_nei_claims_were_predicted(tmp_path):
    """HealthFC answers without a label (NOT ENOUGH INFO) are not scored; each arm counts how they were
    predicted (OR-FALSE over the units), and the table caption says so."""
    answers = [{"answer_id": "c1", "source": "healthfc", "label": T}, {"answer_id": "c2", "source": "healthfc", "label": F},
               {"answer_id": "n1", "source": "healthfc", "label": None}, {"answer_id": "n2", "source": "healthfc", "label": None},
               {"answer_id": "n3", "source": "healthfc", "label": None}]
    _write_jsonl(tmp_path / "answers.jsonl", answers)
    units = {"atoms": {"c1": [T, T], "c2": [F, T], "n1": [T, F], "n2": [T], "n3": [F]},
             "direct": {"c1": [T], "c2": [F], "n1": [T], "n2": [T], "n3": [None]}}
    for mode, per in units.items():
        _write_jsonl(tmp_path / f"{mode}.jsonl", [{"verifier": "v", "mode": mode, "unit_id": f"{a}:{mode}:{k}", "answer_id": a, "verdict": v,
                                                 "pattern": "D", "usage": {}, "rounds": 1}
                                                for a, vs in per.items() for k, v in enumerate(vs)])
    res = call_step(steps.score, {"answers": tmp_path / "answers.jsonl", "verdicts": [tmp_path / "atoms.jsonl", tmp_path / "direct.jsonl"]},
                    {"scores": tmp_path / "s.json"}, score_opts("answer", "atoms", n_resamples=100))
    assert res["n_answers_nei"] == 3
    assert {k: res["arms"]["v/atoms"]["nei_predictions"][k] for k in ("n", "n_pred_true", "n_pred_false", "n_pred_none")} == \
        {"n": 3, "n_pred_true": 1, "n_pred_false": 2, "n_pred_none": 0}
    assert {k: res["arms"]["v/direct"]["nei_predictions"][k] for k in ("n", "n_pred_true", "n_pred_false", "n_pred_none")} == \
        {"n": 3, "n_pred_true": 2, "n_pred_false": 0, "n_pred_none": 1}
    assert res["arms"]["v/atoms"]["n"] == 2  # only the supported / refuted claims are scored
    call_step(steps.table, {"scores": tmp_path / "s.json"}, {"csv": tmp_path / "t.csv", "md": tmp_path / "t.md", "tex": tmp_path / "t.tex"},
              {"title": "HealthFC", "dataset": "healthfc"})
    caption = (tmp_path / "t.md").read_text().split("\n\n")[0]
    assert "3 NOT ENOUGH INFO claims (not scored) predicted TRUE / FALSE: v/atoms 1 / 2, v/direct 2 / 0" in caption
