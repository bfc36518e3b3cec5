"""The external services the datasets' and MedSNIP's code ask for texts: the PubMed client (:mod:`~medfc.retrieval.pubmed`:
CliniFact's abstracts, the PubMed searches), the search clients (:mod:`~medfc.retrieval.search`: web, PubMed,
Wikipedia; HealthFC's open-domain evidence and MedSNIP's retrieval verifier) and the registry of search sources
(:mod:`~medfc.retrieval.search_sources`). Below HealthFC and CliniFact, which share it; docs/ARCHITECTURE.md."""
