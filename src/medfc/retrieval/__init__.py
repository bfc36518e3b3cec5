"""The external services the datasets' and MedSNIP's code ask for texts: the PubMed client, the search clients (web,
PubMed, Wikipedia) and the registry of search sources; below HealthFC and CliniFact (docs/ARCHITECTURE.md)."""
