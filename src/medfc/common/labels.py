"""The labels of each dataset, spelled once (every module that names a label imports it from here). Two CliniFact
artifacts keep the words they were first written with, keyed by the release's code (the last two mappings)."""

from __future__ import annotations

# HealthFC
SUPPORTED, NOT_ENOUGH_INFO, REFUTED = "SUPPORTED", "NOT ENOUGH INFO", "REFUTED"
VERACITY_LABELS = [SUPPORTED, NOT_ENOUGH_INFO, REFUTED]
VERDICT_NAMES = {SUPPORTED: "Supported", REFUTED: "Refuted", NOT_ENOUGH_INFO: "NEI"}  # as the HealthFC paper prints them (its tables and figures)
BINARY_VERACITY_LABELS = [SUPPORTED, REFUTED]  # the open-domain setting: supported vs refuted claims only
LOE_LABELS = ["high", "moderate", "low"]
EVIDENCE_LABELS = ["other", "evidence"]

# CliniFact: release code → label; CLINIFACT_LABELS is the models' class order
CLINIFACT_CODES = {1: "evidence", 0: "inconclusive", 2: "NEI"}
CLINIFACT_LABELS = [CLINIFACT_CODES[1], CLINIFACT_CODES[0], CLINIFACT_CODES[2]]
CLINIFACT_RECORD_NAMES = {1: "EVIDENCE", 0: "INCONCLUSIVE", 2: "NOT ENOUGH INFO"}
CLINIFACT_RELEASE_NAMES = {1: "evidence", 0: "inconclusive", 2: "not enough information"}
