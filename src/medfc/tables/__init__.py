"""The papers' tables and CliniFact Fig. 3 from the experiments' scores and predictions (HealthFC Tables 3 and 5,
CliniFact Table 8, significance tests), with the papers' own numbers (resources/papers/numbers.yaml) beside ours."""
