#!/usr/bin/env python
"""Write the embedded CliniFact demo snapshot (deterministic; rerun gives identical bytes).

* resources/demo/ctgov/studies.zip — a bulk-download-shaped zip, one NCT########.json per member,
  in the ClinicalTrials.gov API v2 study schema;
* resources/demo/pubmed/<pmid>.xml — one efetch PubmedArticleSet per PMID, the per-PMID cache
  format of medfc.retrieval.pubmed, so the demo never needs the network.

Every study, PMID and text is invented for the demo: NCT ids are in the unused range
NCT9900xxxx and PMIDs in 9900xxxx. Usage: python scripts/make_demo_ctgov.py [--out resources/demo] [--check]
(``--check`` exits 1 when the committed files differ from a fresh build).
"""

from __future__ import annotations

import argparse
import json
import sys
import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

BRANCHES = {
    "BC01": "Infections",
    "BC04": "Neoplasms",
    "BC05": "Musculoskeletal Diseases",
    "BC06": "Digestive System Diseases",
    "BC08": "Respiratory Tract (Lung and Bronchial) Diseases",
    "BC10": "Nervous System Diseases",
    "BC14": "Heart and Blood Diseases",
    "BC17": "Skin and Connective Tissue Diseases",
    "BC18": "Nutritional and Metabolic Diseases",
    "BC19": "Gland and Hormone Related Diseases",
    "BC23": "Symptoms and General Pathology",
    "BXM": "Behaviors and Mental Disorders",
    "All": "All Conditions",
    "Rare": "Rare Diseases",
}

# Outcome analyses: (pValue or None, nonInferiorityType, statisticalMethod)
SUP, NI, EQ, NIE, SOO, OTH = "SUPERIORITY", "NON_INFERIORITY", "EQUIVALENCE", "NON_INFERIORITY_OR_EQUIVALENCE", "SUPERIORITY_OR_OTHER", "OTHER"
PLACEBO, ACTIVE, SHAM, NOINT, EXP = "PLACEBO_COMPARATOR", "ACTIVE_COMPARATOR", "SHAM_COMPARATOR", "NO_INTERVENTION", "EXPERIMENTAL"


def arm(label, type_, description, interventions):
    return {"label": label, "type": type_, "description": description, "interventions": interventions}


def outcome(title, time_frame, groups, analyses, description="", type_="PRIMARY", unit="participants"):
    return {"title": title, "timeFrame": time_frame, "groups": groups, "analyses": analyses, "description": description, "type": type_, "unit": unit}


def an(p, ni=SUP, method="ANCOVA", gids=None):
    return {"p": p, "ni": ni, "method": method, "gids": gids}


def T(n):  # demo NCT id
    return f"NCT9900{n:04d}"


def P(n):  # demo PMID
    return str(99000000 + n)


def drug_vs_placebo(drug, dose, condition_noun):
    return [
        arm(f"{drug} {dose}", EXP, f"Participants receive {drug.lower()} {dose} orally once daily for the treatment period.", [("DRUG", drug)]),
        arm("Placebo", PLACEBO, "Participants receive a matching placebo tablet orally once daily.", [("DRUG", "Placebo")]),
    ]


def groups_for(arms_, comparator_first=False, suffix=""):
    exp = [a for a in arms_ if a["type"] == EXP] or [arms_[0]]
    rest = [a for a in arms_ if a is not exp[0]]
    gs = [(f"{exp[0]['label']}{suffix}", exp[0]["description"])] + [(f"{a['label']}{suffix}", a["description"]) for a in rest]
    return list(reversed(gs)) if comparator_first else gs


STUDIES: list[dict] = []


def study(n, title, conditions, branches, arms_, outcomes, refs, status="COMPLETED", study_type="INTERVENTIONAL", results=True, meshes=(),
          completion="2018-06-30"):
    STUDIES.append(
        dict(n=n, title=title, conditions=conditions, branches=branches, arms=arms_, outcomes=outcomes, refs=refs, status=status, study_type=study_type, results=results, meshes=meshes,
             completion=completion)
    )


# ---------------------------------------------------------------------------------------------
# 1-10: one test type each, positive and negative p-value forms
a = drug_vs_placebo("Lisinopril", "10 mg", "hypertension")
study(1, "Lisinopril for Mild Essential Hypertension", ["Hypertension"], ["BC14", "All"], a,
      [outcome("Change From Baseline in Seated Systolic Blood Pressure", "Baseline and Week 12",
               [("Lisinopril", "Lisinopril 10 mg orally once daily."), ("Placebo", "Matching placebo orally once daily.")],
               [an("<0.001", SUP, "ANCOVA")], unit="mmHg")],
      [(P(1), "RESULT")], meshes=[("D006973", "Hypertension")])

a = drug_vs_placebo("Empagliflozin", "25 mg", "diabetes")
study(2, "Empagliflozin Added to Metformin in Type 2 Diabetes", ["Diabetes Mellitus, Type 2"], ["BC18", "BC19", "All"], a,
      [outcome("Change From Baseline in HbA1c", "Baseline to Week 24",
               [("Placebo + Metformin", "Placebo once daily added to stable metformin."), ("Empagliflozin 25 mg + Metformin", "Empagliflozin 25 mg once daily added to stable metformin.")],
               [an("=0.03", SUP, "Mixed Models Analysis")], unit="percent")],
      [(P(2), "RESULT")], meshes=[("D003924", "Diabetes Mellitus, Type 2")])

a = [arm("Mindfulness-Based Stress Reduction", EXP, "Eight weekly 2.5-hour group sessions of mindfulness practice.", [("BEHAVIORAL", "Mindfulness-Based Stress Reduction")]),
     arm("Health Education Control", ACTIVE, "Eight weekly group sessions of general health education.", [("BEHAVIORAL", "Health Education")])]
study(3, "Mindfulness Training for Chronic Low Back Pain", ["Low Back Pain"], ["BC05", "BC23", "All"], a,
      [outcome("Roland-Morris Disability Questionnaire Score", "26 weeks",
               [("MBSR Group", "Participants attending mindfulness-based stress reduction sessions."), ("Education Group", "Participants attending health education sessions.")],
               [an(".08", SUP, "Regression, Linear")], unit="score on a scale")],
      [(P(3), "RESULT")], meshes=[("D017116", "Low Back Pain")])

a = drug_vs_placebo("Vitamin D3", "2000 IU", "fracture")
study(4, "Vitamin D3 Supplementation and Bone Density in Older Women", ["Osteoporosis, Postmenopausal"], ["BC05", "BC18", "BC19", "All"], a,
      [outcome("Percent Change in Lumbar Spine Bone Mineral Density", "Baseline and 12 months",
               [("Cholecalciferol", "Vitamin D3 2000 IU daily."), ("Placebo Capsule", "Identical placebo capsule daily.")],
               [an("0.65", SUP, "t-test, 2 sided")], unit="percent change")],
      [(P(4), "RESULT"), (P(5), "BACKGROUND")], meshes=[("D015519", "Osteoporosis, Postmenopausal")])

a = [arm("Dabigatran 150 mg", EXP, "Dabigatran etexilate 150 mg twice daily.", [("DRUG", "Dabigatran etexilate")]),
     arm("Warfarin", ACTIVE, "Warfarin adjusted to an INR of 2.0 to 3.0.", [("DRUG", "Warfarin")])]
study(5, "Dabigatran Versus Warfarin in Nonvalvular Atrial Fibrillation", ["Atrial Fibrillation"], ["BC14", "All"], a,
      [outcome("Number of Participants With Stroke or Systemic Embolism", "Up to 24 months",
               [("Dabigatran Etexilate", "Dabigatran etexilate 150 mg twice daily."), ("Warfarin (INR 2-3)", "Dose-adjusted warfarin.")],
               [an("<0.001", NI, "Cox Proportional Hazards")])],
      [(P(6), "RESULT")], meshes=[("D001281", "Atrial Fibrillation")])

a = [arm("Biosimilar Adalimumab", EXP, "Proposed adalimumab biosimilar 40 mg every other week.", [("BIOLOGICAL", "Adalimumab biosimilar")]),
     arm("Reference Adalimumab", ACTIVE, "EU-approved adalimumab 40 mg every other week.", [("BIOLOGICAL", "Adalimumab")])]
study(6, "Biosimilar Adalimumab in Plaque Psoriasis", ["Psoriasis"], ["BC17", "All"], a,
      [outcome("Percent Improvement in PASI Score", "Week 16",
               [("Biosimilar Adalimumab 40 mg", "Proposed biosimilar every other week."), ("Humira 40 mg", "Reference product every other week.")],
               [an("0.02", EQ, "ANCOVA")], unit="percent improvement")],
      [(P(7), "RESULT")], meshes=[("D011565", "Psoriasis")])

a = [arm("Short-Course Antibiotics", EXP, "Amoxicillin-clavulanate for 5 days.", [("DRUG", "Amoxicillin-clavulanate")]),
     arm("Standard-Course Antibiotics", ACTIVE, "Amoxicillin-clavulanate for 10 days.", [("DRUG", "Amoxicillin-clavulanate 10 days")])]
study(7, "Five Versus Ten Days of Antibiotics for Community-Acquired Pneumonia in Children", ["Pneumonia"], ["BC01", "BC08", "All"], a,
      [outcome("Proportion of Children With Clinical Cure", "Day 14 to Day 21",
               [("5-Day Course", "Five days of amoxicillin-clavulanate."), ("10-Day Course", "Ten days of amoxicillin-clavulanate.")],
               [an("0.21", NIE, "Chi-squared")])],
      [(P(8), "RESULT")], meshes=[("D011014", "Pneumonia")])

a = [arm("Aerobic Exercise", EXP, "Supervised treadmill walking three times a week.", [("BEHAVIORAL", "Aerobic exercise")]),
     arm("Stretching Control", SHAM, "Supervised stretching and toning three times a week.", [("BEHAVIORAL", "Stretching")])]
study(8, "Aerobic Exercise and Memory in Mild Cognitive Impairment", ["Cognitive Dysfunction"], ["BC10", "BXM", "All"], a,
      [outcome("Change in Delayed Recall Score", "Baseline and 6 months",
               [("Aerobic Training", "Treadmill walking sessions."), ("Stretching and Toning", "Stretching sessions.")],
               [an("0.004", SOO, "ANOVA")], unit="words recalled")],
      [(P(9), "RESULT")], meshes=[("D060825", "Cognitive Dysfunction")])

a = [arm("Generic Tacrolimus", EXP, "Generic tacrolimus twice daily.", [("DRUG", "Tacrolimus (generic)")]),
     arm("Brand Tacrolimus", ACTIVE, "Prograf twice daily.", [("DRUG", "Prograf")])]
study(9, "Generic Versus Brand Tacrolimus After Kidney Transplantation", ["Kidney Transplantation"], ["All"], a,
      [outcome("Tacrolimus Trough Concentration", "Day 30",
               [("Generic Tacrolimus", "Generic formulation."), ("Prograf", "Brand formulation.")],
               [an("<0.01", "NON_INFERIORITY_OR_EQUIVALENCE_LEGACY", "Mixed Models Analysis")], unit="ng/mL")],
      [(P(10), "RESULT")])

a = [arm("Acupuncture", EXP, "Ten sessions of manual acupuncture.", [("PROCEDURE", "Acupuncture")]),
     arm("Usual Care", NOINT, "Usual care without acupuncture.", [])]
study(10, "Acupuncture for Chronic Tension-Type Headache", ["Tension-Type Headache"], ["BC10", "All"], a,
      [outcome("Number of Headache Days per Month", "Months 2 to 3",
               [("Acupuncture Group", "Manual acupuncture."), ("Usual Care Group", "No acupuncture.")],
               [an("0.36", "SUPERIORITY_OR_OTHER_LEGACY", "Wilcoxon (Mann-Whitney)")], unit="days")],
      [(P(11), "RESULT")], meshes=[("D018781", "Tension-Type Headache")])

# 11-16: test-type and p-value edge cases
a = drug_vs_placebo("Montelukast", "10 mg", "asthma")
study(11, "Montelukast for Exercise-Induced Bronchoconstriction", ["Asthma, Exercise-Induced"], ["BC08", "All"], a,
      [outcome("Maximum Percent Fall in FEV1 After Exercise", "Day 3",
               [("Montelukast", "10 mg once daily."), ("Placebo", "Matching placebo.")],
               [an("0.003", OTH, "ANOVA")], unit="percent fall")],
      [(P(12), "RESULT")])

a = [arm("Cognitive Behavioural Therapy for Insomnia", EXP, "Six weekly CBT-I sessions.", [("BEHAVIORAL", "CBT-I")]),
     arm("Sleep Hygiene Education", ACTIVE, "A single sleep hygiene education session.", [("BEHAVIORAL", "Sleep hygiene")])]
study(12, "Cognitive Behavioural Therapy for Insomnia in Older Adults", ["Sleep Initiation and Maintenance Disorders"], ["BC10", "BXM", "All"], a,
      [outcome("Insomnia Severity Index", "Post-treatment (week 8)",
               [("CBT-I", "Cognitive behavioural therapy for insomnia."), ("Sleep Hygiene", "Education only.")],
               [an("0.12", OTH, "Mixed Models Analysis"), an("0.04", SUP, "ANCOVA")], unit="score on a scale")],
      [(P(13), "RESULT")])

a = drug_vs_placebo("Omega-3 Fatty Acids", "4 g", "depression")
study(13, "Omega-3 Fatty Acids as Adjunct Treatment of Major Depression", ["Depressive Disorder, Major"], ["BXM", "All"], a,
      [outcome("Change in HAM-D17 Total Score", "Baseline to Week 8",
               [("Omega-3", "EPA and DHA 4 g per day."), ("Placebo (Corn Oil)", "Corn oil capsules.")],
               [an(">0.05", SUP, "t-test, 2 sided")], unit="score on a scale")],
      [(P(14), "RESULT")])

a = drug_vs_placebo("Zinc Acetate", "75 mg", "common cold")
study(14, "Zinc Lozenges for the Common Cold", ["Common Cold"], ["BC01", "BC08", "All"], a,
      [outcome("Duration of Cold Symptoms", "Up to 14 days",
               [("Zinc Lozenges", "Zinc acetate lozenges."), ("Placebo Lozenges", "Identical placebo lozenges.")],
               [an("NA", SUP, "Log Rank")], unit="days")],
      [(P(15), "RESULT")])

a = [arm("Probiotic", EXP, "Lactobacillus rhamnosus GG capsule twice daily.", [("DIETARY_SUPPLEMENT", "Lactobacillus rhamnosus GG")]),
     arm("Placebo", PLACEBO, "Identical capsule without bacteria twice daily.", [("DIETARY_SUPPLEMENT", "Placebo")])]
study(15, "Probiotics to Prevent Antibiotic-Associated Diarrhea", ["Diarrhea"], ["BC06", "BC23", "All"], a,
      [outcome("Incidence of Antibiotic-Associated Diarrhea", "During antibiotic treatment and 7 days after",
               [("Lactobacillus GG", "Probiotic capsule."), ("Placebo", "Placebo capsule.")],
               [an("NA", SUP, "Fisher Exact"), an("0.01", SUP, "Chi-squared")])],
      [(P(16), "RESULT")])

a = drug_vs_placebo("Melatonin", "3 mg", "delirium")
study(16, "Melatonin for Prevention of Postoperative Delirium", ["Delirium"], ["BXM", "BC10", "All"], a,
      [outcome("Incidence of Delirium", "Postoperative days 1 to 5",
               [("Melatonin", "3 mg nightly."), ("Placebo", "Placebo nightly.")],
               [an(None, SUP, "Chi-squared"), an("", SUP, "Fisher Exact")])],
      [(P(17), "RESULT")])

# 17-19: arm structure
study(17, "Three Doses of Semaglutide for Weight Management", ["Obesity"], ["BC18", "BC23", "All"],
      [arm("Semaglutide 1.0 mg", EXP, "Weekly injection.", [("DRUG", "Semaglutide")]),
       arm("Semaglutide 2.4 mg", EXP, "Weekly injection.", [("DRUG", "Semaglutide")]),
       arm("Placebo", PLACEBO, "Weekly placebo injection.", [("DRUG", "Placebo")])],
      [outcome("Percent Change in Body Weight", "Baseline to Week 68",
               [("Semaglutide 1.0 mg", ""), ("Semaglutide 2.4 mg", ""), ("Placebo", "")],
               [an("<0.001", SUP, "ANCOVA", ["OG001", "OG002"])], unit="percent change")],
      [(P(18), "RESULT")])

study(18, "Topical Ivermectin Versus Vehicle in Rosacea", ["Rosacea"], ["BC17", "All"],
      [arm("Ivermectin 1% Cream", EXP, "Once daily ivermectin cream.", [("DRUG", "Ivermectin")]),
       arm("Vehicle Cream", EXP, "Once daily vehicle cream (mis-typed placebo arm).", [("DRUG", "Vehicle")])],
      [outcome("Proportion With Clear or Almost Clear IGA", "Week 12",
               [("Ivermectin", ""), ("Vehicle", "")], [an("<0.001", SUP, "Cochran-Mantel-Haenszel")])],
      [(P(19), "RESULT")])

study(19, "Nicotine Patch With Counselling for Smoking Cessation", ["Tobacco Use Disorder"], ["BXM", "All"],
      [arm("Nicotine Patch + Counselling", EXP, "21 mg patch for 8 weeks with counselling.", [("DRUG", "Nicotine patch")]),
       {"label": "Counselling Alone", "description": "Counselling without patch.", "interventions": [("BEHAVIORAL", "Counselling")]}],
      [outcome("Biochemically Verified Abstinence", "Week 24",
               [("Patch + Counselling", ""), ("Counselling", "")], [an("0.01", SUP, "Chi-squared")])],
      [(P(20), "RESULT")])

# 20-24: references
a = drug_vs_placebo("Tranexamic Acid", "1 g", "bleeding")
study(20, "Tranexamic Acid in Total Knee Arthroplasty", ["Postoperative Hemorrhage"], ["BC14", "BC23", "All"], a,
      [outcome("Total Blood Loss", "Up to 48 hours after surgery",
               [("Tranexamic Acid", "1 g IV before incision."), ("Saline Placebo", "Normal saline IV before incision.")],
               [an("<0.001", SUP, "t-test, 2 sided")], unit="mL")],
      [(P(21), "RESULT"), (P(22), "RESULT")])

a = drug_vs_placebo("Dexamethasone", "8 mg", "nausea")
study(21, "Dexamethasone for Postoperative Nausea and Vomiting", ["Postoperative Nausea and Vomiting"], ["BC23", "All"], a,
      [outcome("Incidence of Postoperative Nausea and Vomiting", "0 to 24 hours after surgery",
               [("Dexamethasone 8 mg IV", "Single dose at induction."), ("Placebo IV", "Saline at induction.")],
               [an("0.02", SUP, "Chi-squared")])],
      [(P(23), "RESULT"), (P(24), "RESULT"), (P(25), "BACKGROUND")])

a = [arm("Text Message Reminders", EXP, "Daily SMS medication reminders for 6 months.", [("BEHAVIORAL", "SMS reminders")]),
     arm("Standard Care", NOINT, "Standard clinic follow-up.", [])]
study(22, "Text Message Reminders for Antiretroviral Adherence", ["HIV Infections"], ["BC01", "All"], a,
      [outcome("Proportion With Undetectable Viral Load", "Month 6",
               [("SMS Reminders", "Daily text messages."), ("Standard Care", "No reminders.")],
               [an("0.44", SUP, "Chi-squared")])],
      [(P(26), "BACKGROUND"), (P(27), "BACKGROUND"), (P(28), "BACKGROUND")],
      completion="2024-06-30")  # completed after the CliniFact release (2024-01-15): the clinifact diff's rebuilt-only rows

a = drug_vs_placebo("Colchicine", "0.5 mg", "pericarditis")
study(23, "Colchicine for Recurrent Pericarditis", ["Pericarditis"], ["BC14", "All"], a,
      [outcome("Recurrence Rate", "18 months",
               [("Colchicine", "0.5 mg twice daily."), ("Placebo", "Placebo twice daily.")],
               [an("0.001", SUP, "Log Rank")])],
      [(P(29), "DERIVED")])

a = drug_vs_placebo("Ondansetron", "8 mg", "gastroenteritis")
study(24, "Oral Ondansetron in Paediatric Gastroenteritis", ["Gastroenteritis"], ["BC06", "BC01", "All"], a,
      [outcome("Proportion Who Vomited", "Within 4 hours",
               [("Ondansetron", "Orally disintegrating tablet."), ("Placebo", "Identical tablet.")],
               [an("<0.001", SUP, "Chi-squared")])],
      [])

# 25-27: study-level filters
a = drug_vs_placebo("Ketamine", "0.5 mg/kg", "depression")
study(25, "Ketamine Infusion for Treatment-Resistant Depression", ["Depression"], ["BXM", "All"], a, [], [(P(30), "RESULT")], results=False)
study(26, "Intranasal Oxytocin in Autism Spectrum Disorder", ["Autism Spectrum Disorder"], ["BXM", "BC10", "All"],
      drug_vs_placebo("Oxytocin", "24 IU", "autism"), [], [(P(31), "BACKGROUND")], status="WITHDRAWN", results=False)
study(27, "Registry of Statin Use and Muscle Symptoms", ["Muscular Diseases"], ["BC05", "BC10", "All"],
      [{"label": "Statin Users", "description": "Patients prescribed statins.", "interventions": [("DRUG", "Statins")]},
       {"label": "Non-Users", "description": "Patients not prescribed statins.", "interventions": []}],
      [outcome("Muscle Symptom Score", "12 months", [("Statin Users", ""), ("Non-Users", "")], [an("0.02", SUP, "t-test, 2 sided")])],
      [(P(32), "RESULT")], study_type="OBSERVATIONAL")

# 28-30: several primary outcomes
a = [arm("Intensive Glucose Control", EXP, "Insulin infusion targeting 80-110 mg/dL.", [("DRUG", "Insulin")]),
     arm("Conventional Glucose Control", ACTIVE, "Insulin infusion targeting 140-180 mg/dL.", [("DRUG", "Insulin conventional")])]
study(28, "Intensive Insulin Therapy in Critically Ill Adults", ["Hyperglycemia", "Critical Illness"], ["BC18", "BC23", "All"], a,
      [outcome("Number of Episodes of Severe Hypoglycemia", "Intensive care unit stay (up to 28 days)",
               [("Intensive Control (80-110 mg/dL)", ""), ("Conventional Control (140-180 mg/dL)", "")], [an("<0.05", SUP, "Chi-squared")]),
       outcome("90-Day All-Cause Mortality", "90 days",
               [("Intensive Control (80-110 mg/dL)", ""), ("Conventional Control (140-180 mg/dL)", "")], [an("0.4", SUP, "Chi-squared")])],
      [(P(33), "RESULT")], status="TERMINATED")

a = drug_vs_placebo("Duloxetine", "60 mg", "neuropathy")
study(29, "Duloxetine for Painful Diabetic Peripheral Neuropathy", ["Diabetic Neuropathies"], ["BC10", "BC18", "BC19", "All"], a,
      [outcome("Change in Neuropathic Pain Symptom Inventory", "Week 12", [("Duloxetine 60 mg", ""), ("Placebo", "")], []),
       outcome("Change in Weekly Mean 24-Hour Average Pain Score", "Baseline to Week 12", [("Duloxetine 60 mg", ""), ("Placebo", "")], [an("0.001", SUP, "Mixed Models Analysis")])],
      [(P(34), "RESULT")])

a = drug_vs_placebo("Budesonide-Formoterol", "160/4.5 mcg", "COPD")
study(30, "Budesonide-Formoterol Maintenance in COPD", ["Pulmonary Disease, Chronic Obstructive"], ["BC08", "All"], a,
      [outcome("Trough FEV1 by Subgroup", "Week 12", [("Budesonide-Formoterol, GOLD 2", ""), ("Budesonide-Formoterol, GOLD 3", ""), ("Placebo", "")], [an("0.01", SUP, "ANCOVA")]),
       outcome("Rate of Moderate or Severe Exacerbations", "52 weeks", [("Budesonide/Formoterol", ""), ("Placebo Inhaler", "")], [an(".049", SUP, "Negative Binomial Regression")])],
      [(P(35), "RESULT")])

# 31-33: comparator types and PubMed edge cases
a = [arm("Motivational Interviewing", EXP, "Four motivational interviewing sessions.", [("BEHAVIORAL", "Motivational interviewing")]),
     arm("No Intervention", NOINT, "Assessment only.", [])]
study(31, "Motivational Interviewing to Reduce Heavy Drinking in College Students", ["Alcohol Drinking in College"], ["BXM", "All"], a,
      [outcome("Drinks per Week", "3 months", [("Motivational Interviewing", ""), ("Assessment Only", "")], [an("=0.0002", SUP, "Regression, Linear")])],
      [(P(36), "RESULT")])

a = [arm("Transcranial Magnetic Stimulation", EXP, "Active rTMS over the left dorsolateral prefrontal cortex.", [("DEVICE", "rTMS")]),
     arm("Sham Stimulation", SHAM, "Sham coil producing similar sound without stimulation.", [("DEVICE", "Sham rTMS")])]
study(32, "Repetitive TMS for Chronic Tinnitus", ["Tinnitus"], ["BC10", "BC23", "All"], a,
      [outcome("Tinnitus Handicap Inventory Score", "Week 6", [("Active rTMS", ""), ("Sham rTMS", "")], [an("0.5", SUP, "Mixed Models Analysis")])],
      [(P(37), "RESULT")])

a = [arm("Ultrasound-Guided Nerve Block", EXP, "Femoral nerve block under ultrasound guidance.", [("PROCEDURE", "Nerve block")]),
     arm("Systemic Opioid Analgesia", "OTHER", "Intravenous morphine as needed.", [("DRUG", "Morphine")])]
study(33, "Femoral Nerve Block for Hip Fracture Pain in the Emergency Department", ["Hip Fractures"], ["BC05", "BC23", "All"], a,
      [outcome("Pain Score at Rest", "2 hours after analgesia", [("Nerve Block", ""), ("IV Morphine", "")], [an("<0.0001", SUP, "Wilcoxon (Mann-Whitney)")])],
      [(P(38), "RESULT"), (P(39), "BACKGROUND")])

# 34-36: more skips
a = drug_vs_placebo("Rivaroxaban", "10 mg", "thrombosis")
study(34, "Rivaroxaban Thromboprophylaxis After Hip Replacement", ["Venous Thrombosis"], ["BC14", "All"], a,
      [outcome("Composite of Deep Vein Thrombosis, Pulmonary Embolism and Death", "Day 36",
               [("Rivaroxaban", ""), ("Placebo", "")], [an("<0.001", NI, "Cochran-Mantel-Haenszel"), an("<0.001", SUP, "Cochran-Mantel-Haenszel")])],
      [(P(40), "RESULT")])

a = [arm("Once-Daily Tenofovir Regimen", EXP, "Single-tablet regimen once daily.", [("DRUG", "Tenofovir single tablet")]),
     arm("Twice-Daily Regimen", ACTIVE, "Standard twice-daily regimen.", [("DRUG", "Standard regimen")])]
study(35, "Switching to a Once-Daily Single-Tablet Antiretroviral Regimen", ["HIV Infections"], ["BC01", "All"], a,
      [outcome("Proportion With HIV-1 RNA Below 50 Copies/mL", "Week 48",
               [("Single-Tablet Regimen", ""), ("Twice-Daily Regimen", "")], [an("0.03", NI, "Cochran-Mantel-Haenszel"), an("0.03", EQ, "Cochran-Mantel-Haenszel")])],
      [(P(41), "RESULT")])

a = drug_vs_placebo("Gabapentin", "300 mg", "pruritus")
study(36, "Gabapentin for Uremic Pruritus", ["Pruritus"], ["BC17", "BC23", "All"], a,
      [outcome("Itch Visual Analogue Scale", "Week 4", [("Gabapentin", ""), ("Placebo", "")], [an("0.01", SUP, "t-test, 2 sided")], type_="SECONDARY")],
      [(P(42), "RESULT")])

# 37-44: further positive/negative patterns
a = drug_vs_placebo("Magnesium Sulfate", "2 g", "migraine")
study(37, "Intravenous Magnesium for Acute Migraine", ["Migraine Disorders"], ["BC10", "All"], a,
      [outcome("Pain Relief at 2 Hours", "2 hours", [("Magnesium Sulfate IV", ""), ("Saline IV", "")],
               [an("0.2", SUP, "Chi-squared"), an("0.07", SUP, "Fisher Exact"), an("<0.05", SUP, "Regression, Logistic")])],
      [(P(43), "RESULT")])

a = [arm("Telemonitoring", EXP, "Daily home weight and symptom telemonitoring.", [("DEVICE", "Telemonitoring system")]),
     arm("Usual Heart Failure Care", ACTIVE, "Usual outpatient heart failure care.", [("OTHER", "Usual care")])]
study(38, "Home Telemonitoring After Heart Failure Hospitalisation", ["Heart Failure"], ["BC14", "All"], a,
      [outcome("30-Day Readmission Rate", "30 days after discharge", [("Telemonitoring Group", ""), ("Usual Care Group", "")], [an("< 0.05", SUP, "Chi-squared")])],
      [(P(44), "RESULT")])

a = drug_vs_placebo("Metformin", "850 mg", "polycystic ovary syndrome")
study(39, "Metformin for Ovulation Induction in Polycystic Ovary Syndrome", ["Polycystic Ovary Syndrome"], ["BC19", "All"], a,
      [outcome("Ovulation Rate", "6 months", [("Metformin 850 mg Twice Daily", ""), ("Placebo Twice Daily", "")], [an("0.05", SUP, "Chi-squared")])],
      [(P(45), "RESULT"), (P(46), "BACKGROUND"), (P(47), "BACKGROUND")])

a = [arm("Yoga", EXP, "Twelve weekly hatha yoga classes.", [("BEHAVIORAL", "Yoga")]),
     arm("Self-Care Book", ACTIVE, "A self-care book on back pain.", [("BEHAVIORAL", "Self-care book")])]
study(40, "Yoga Versus Self-Care Book for Chronic Low Back Pain", ["Low Back Pain"], ["BC05", "BC23", "All"], a,
      [outcome("Back Pain Bothersomeness", "12 weeks", [("Yoga Classes", ""), ("Self-Care Book", "")], [an("0.3", SUP, "ANCOVA")])],
      [(P(26), "BACKGROUND"), (P(48), "BACKGROUND")])

a = drug_vs_placebo("Inhaled Iloprost", "5 mcg", "pulmonary hypertension")
study(41, "Inhaled Iloprost in Pulmonary Arterial Hypertension", ["Hypertension, Pulmonary"], ["BC08", "BC14", "Rare", "All"], a,
      [outcome("Six-Minute Walk Distance", "Week 12", [("Iloprost", ""), ("Placebo", "")], [an("0.01", SUP, "ANCOVA")]),
       outcome("Six-Minute Walk Distance", "Week 12", [("Iloprost", ""), ("Placebo", "")], [an("0.009", SUP, "Wilcoxon (Mann-Whitney)")])],
      [(P(49), "RESULT")])

a = [arm("Buprenorphine Implant", EXP, "Four subdermal buprenorphine implants for 6 months.", [("DRUG", "Buprenorphine implant")]),
     arm("Sublingual Buprenorphine", ACTIVE, "Daily sublingual buprenorphine 8 mg or less.", [("DRUG", "Sublingual buprenorphine")])]
study(42, "Buprenorphine Implants in Clinically Stable Opioid Use Disorder", ["Opioid-Related Disorders"], ["BXM", "All"], a,
      [outcome("Proportion of Responders (Urine Negative for Illicit Opioids)", "Weeks 1 to 24",
               [("Sublingual Buprenorphine", ""), ("Buprenorphine Implants", "")], [an("0.31", NI, "Cochran-Mantel-Haenszel")])],
      [(P(50), "RESULT")])

a = [arm("Generic Levothyroxine", EXP, "Generic levothyroxine once daily.", [("DRUG", "Levothyroxine (generic)")]),
     arm("Brand Levothyroxine", ACTIVE, "Brand levothyroxine once daily.", [("DRUG", "Levothyroxine (brand)")])]
study(43, "Bioequivalence of Generic and Brand Levothyroxine in Hypothyroidism", ["Hypothyroidism"], ["BC19", "All"], a,
      [outcome("Serum TSH Concentration", "Week 6", [("Generic Levothyroxine", ""), ("Brand Levothyroxine", "")], [an("<0.001", EQ, "ANOVA")])],
      [(P(51), "BACKGROUND")])

a = [arm("Early Rhythm Control", EXP, "Antiarrhythmic drugs or ablation within 12 months of diagnosis.", [("DRUG", "Antiarrhythmic drugs")]),
     arm("Usual Care Rate Control", ACTIVE, "Rate control; rhythm control only for symptoms.", [("DRUG", "Rate control")])]
study(44, "Early Rhythm Control in Recently Diagnosed Atrial Fibrillation", ["Atrial Fibrillation"], ["BC14", "All"], a,
      [outcome("Composite of Cardiovascular Death, Stroke or Hospitalisation", "Median 5.1 years",
               [("Usual Care", ""), ("Early Rhythm Control", "")], [an("0.005", SUP, "Cox Proportional Hazards")])],
      [(P(52), "RESULT")])


# ---------------------------------------------------------------------------------------------
def build_study(s: dict) -> dict:
    nct = T(s["n"])
    arms_ = s["arms"]
    arm_groups, interventions = [], {}
    for a_ in arms_:
        g = {"label": a_["label"]}
        if "type" in a_:
            g["type"] = a_["type"]
        g["description"] = a_["description"]
        names = []
        for itype, iname in a_["interventions"]:
            names.append(f"{itype.replace('_', ' ').title()}: {iname}")
            iv = interventions.setdefault(iname, {"type": itype, "name": iname, "description": f"{iname} as described in the arm.", "armGroupLabels": []})
            iv["armGroupLabels"].append(a_["label"])
        if names:
            g["interventionNames"] = names
        arm_groups.append(g)
    branches = [{"abbrev": b, "name": BRANCHES[b]} for b in dict.fromkeys(s["branches"])]
    meshes = [{"id": i, "term": t} for i, t in s["meshes"]]
    protocol = {
        "identificationModule": {
            "nctId": nct,
            "orgStudyIdInfo": {"id": f"DEMO-{s['n']:03d}"},
            "organization": {"fullName": "medfc Demo Research Consortium (fictitious)", "class": "OTHER"},
            "briefTitle": s["title"],
            "officialTitle": f"A Randomized Trial: {s['title']} (demo record)",
        },
        "statusModule": {
            "statusVerifiedDate": "2023-01",
            "overallStatus": s["status"],
            "startDateStruct": {"date": "2015-03", "type": "ACTUAL"},
            "completionDateStruct": {"date": s["completion"], "type": "ACTUAL"},
        },
        "sponsorCollaboratorsModule": {"leadSponsor": {"name": "medfc Demo Research Consortium (fictitious)", "class": "OTHER"}},
        "descriptionModule": {"briefSummary": f"Demo record for the medfc workflow. {s['title']}."},
        "conditionsModule": {"conditions": s["conditions"]},
        "designModule": {
            "studyType": s["study_type"],
            "enrollmentInfo": {"count": 60 + 7 * s["n"], "type": "ACTUAL"},
        },
        "armsInterventionsModule": {"armGroups": arm_groups, "interventions": list(interventions.values())},
        "outcomesModule": {
            "primaryOutcomes": [{"measure": o["title"], "description": o["description"] or o["title"], "timeFrame": o["timeFrame"]} for o in s["outcomes"] if o["type"] == "PRIMARY"]
        },
        "referencesModule": {
            "references": [{"pmid": pmid, "type": rtype, "citation": f"Demo Author A, Demo Author B. {s['title']} (demo citation). J Demo Med. 2019;{int(pmid) % 100}:1-10."} for pmid, rtype in s["refs"]]
        },
    }
    if s["study_type"] == "INTERVENTIONAL":
        protocol["designModule"].update({"phases": ["PHASE3"], "designInfo": {"allocation": "RANDOMIZED", "interventionModel": "PARALLEL", "primaryPurpose": "TREATMENT", "maskingInfo": {"masking": "DOUBLE"}}})
    else:
        protocol["designModule"].update({"designInfo": {"observationalModel": "COHORT", "timePerspective": "PROSPECTIVE"}})
    if not s["refs"]:
        del protocol["referencesModule"]
    study_obj: dict = {"protocolSection": protocol}
    if s["results"]:
        measures = []
        for o in s["outcomes"]:
            groups = [{"id": f"OG{i:03d}", "title": t, "description": d or f"Participants in the {t} group."} for i, (t, d) in enumerate(o["groups"])]
            analyses = []
            for a_ in o["analyses"]:
                x = {"groupIds": a_["gids"] or [g["id"] for g in groups]}
                if a_["ni"]:
                    x["nonInferiorityType"] = a_["ni"]
                if a_["p"] is not None:
                    x["pValue"] = a_["p"]
                x["statisticalMethod"] = a_["method"]
                x["paramType"] = "Mean Difference (Final Values)"
                x["paramValue"] = "-2.1"
                x["ciPctValue"] = "95"
                x["ciNumSides"] = "TWO_SIDED"
                analyses.append(x)
            m = {
                "type": o["type"],
                "title": o["title"],
                "description": o["description"] or f"{o['title']} assessed at the stated time point.",
                "reportingStatus": "POSTED",
                "paramType": "MEAN",
                "unitOfMeasure": o["unit"],
                "timeFrame": o["timeFrame"],
                "groups": groups,
                "denoms": [{"units": "Participants", "counts": [{"groupId": g["id"], "value": str(30 + i)} for i, g in enumerate(groups)]}],
                "classes": [{"categories": [{"measurements": [{"groupId": g["id"], "value": f"{10.5 + 2 * i:.1f}"} for i, g in enumerate(groups)]}]}],
            }
            if analyses:
                m["analyses"] = analyses
            measures.append(m)
        study_obj["resultsSection"] = {"outcomeMeasuresModule": {"outcomeMeasures": measures}}
    study_obj["derivedSection"] = {
        "miscInfoModule": {"versionHolder": "2024-01-15"},
        "conditionBrowseModule": {
            "meshes": meshes,
            "ancestors": [],
            "browseLeaves": [{"id": f"M{1000 + s['n']}", "name": c, "asFound": c, "relevance": "HIGH"} for c in s["conditions"]],
            "browseBranches": branches,
        },
    }
    study_obj["hasResults"] = bool(s["results"])
    return study_obj


# ---------------------------------------------------------------------------------------------
# PubMed records: pmid -> (title, abstract sections or None, date xml, extra)
STRUCTURED = ("BACKGROUND", "METHODS", "RESULTS", "CONCLUSIONS")
NLM = {"BACKGROUND": "BACKGROUND", "METHODS": "METHODS", "RESULTS": "RESULTS", "CONCLUSIONS": "CONCLUSIONS", "OBJECTIVE": "OBJECTIVE", "UNLABELLED": "UNASSIGNED"}


def _pub_date(n: int) -> str:
    if n == 3:
        return "<PubDate><Year>2016</Year><Season>Spring</Season></PubDate>"
    if n == 8:
        return "<PubDate><MedlineDate>2017 Nov-Dec</MedlineDate></PubDate>"
    if n == 13:
        return "<PubDate><MedlineDate>2019-2020</MedlineDate></PubDate>"
    if n == 41:  # results published after the CliniFact release (2024-01-15): the clinifact diff's rebuilt-only rows
        return "<PubDate><Year>2024</Year><Month>Mar</Month><Day>05</Day></PubDate>"
    year = 2008 + (n * 7) % 15
    month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][n % 12]
    if n % 3 == 0:
        return f"<PubDate><Year>{year}</Year></PubDate>"
    if n % 3 == 1:
        return f"<PubDate><Year>{year}</Year><Month>{month}</Month></PubDate>"
    return f"<PubDate><Year>{year}</Year><Month>{month}</Month><Day>{(n % 27) + 1:02d}</Day></PubDate>"


def pubmed_records() -> dict[str, str]:
    by_pmid: dict[str, tuple[dict, str]] = {}
    for s in STUDIES:
        for pmid, rtype in s["refs"]:
            by_pmid.setdefault(pmid, (s, rtype))
    out = {}
    for pmid, (s, rtype) in sorted(by_pmid.items()):
        n = int(pmid) - 99000000
        topic = s["title"]
        cond = s["conditions"][0].lower()
        if rtype == "BACKGROUND":
            title = f"Epidemiology and current management of {cond}: a narrative review."
            sections = [(None, f"{s['conditions'][0]} is a common clinical problem with substantial burden for patients and health systems. "
                               f"This review summarises epidemiology, risk factors and current treatment options for {cond}, "
                               f"and outlines open questions that randomized trials should address in the coming years.")]
        else:
            title = f"{topic}: a randomized controlled trial."
            sections = [
                ("BACKGROUND", f"Effective treatments for {cond} are needed. We evaluated this question in a randomized trial."),
                ("METHODS", f"Adults with {cond} were randomly assigned in a 1:1 ratio. The primary outcome was prespecified and analysed by intention to treat."),
                ("RESULTS", f"A total of {60 + 7 * s['n']} participants underwent randomization. The primary outcome differed between groups (P&lt;0.05 in the main analysis)."),
                ("CONCLUSIONS", "In this trial, the intervention was compared with the control condition; longer trials are warranted."),
            ]
            if n % 2 == 0:  # unstructured variant
                sections = [(None, " ".join(t for _, t in sections))]
        markup = ""
        if n == 1:  # inline markup
            sections[2] = ("RESULTS", "Systolic pressure fell by 9.8 mm Hg with <i>lisinopril</i> versus 2.1 mm Hg with placebo (P&lt;10<sup>-3</sup>); serum K<sup>+</sup> was unchanged.")
        if n == 7:
            sections = [("UNLABELLED", "Biosimilar and reference <b>adalimumab</b> gave equivalent PASI improvement at week 16 in 350 adults with moderate to severe plaque psoriasis.")]
        if n == 36:  # under 15 words
            sections = [(None, "Brief motivational interviewing reduced drinking in students.")]
        abstract = ""
        if n != 37:  # 37: no abstract at all
            parts = []
            for label, text in sections:
                if label:
                    parts.append(f'<AbstractText Label="{label}" NlmCategory="{NLM.get(label, "UNASSIGNED")}">{text}</AbstractText>')
                else:
                    parts.append(f"<AbstractText>{text}</AbstractText>")
            abstract = "<Abstract>" + "".join(parts) + "</Abstract>"
        pubtypes = '<PublicationType UI="D016428">Journal Article</PublicationType>'
        pubtypes += '<PublicationType UI="D016454">Review</PublicationType>' if rtype == "BACKGROUND" else '<PublicationType UI="D016449">Randomized Controlled Trial</PublicationType>'
        mesh = "".join(f'<MeshHeading><DescriptorName UI="D9{n:05d}{k}" MajorTopicYN="{"Y" if k == 0 else "N"}">{escape(m)}</DescriptorName></MeshHeading>'
                       for k, m in enumerate([s["conditions"][0], "Humans", "Randomized Controlled Trials as Topic" if rtype == "RESULT" else "Review Literature as Topic"]))
        if n == 52:  # a book chapter record
            xml = (
                '<PubmedBookArticle><BookDocument><PMID Version="1">' + pmid + "</PMID>"
                '<ArticleIdList><ArticleId IdType="bookaccession">NBKDEMO52</ArticleId></ArticleIdList>'
                "<Book><Publisher><PublisherName>Demo Press</PublisherName></Publisher><BookTitle book=\"demo\">Demo Handbook of Cardiology</BookTitle>"
                "<PubDate><Year>2021</Year><Month>03</Month></PubDate></Book>"
                "<ArticleTitle>Early rhythm control in atrial fibrillation.</ArticleTitle>"
                + abstract.replace("<Abstract>", "<Abstract>")
                + '<PublicationType UI="D000072378">Book Chapter</PublicationType>'
                "</BookDocument><PubmedBookData><History><PubMedPubDate PubStatus=\"pubmed\"><Year>2021</Year><Month>3</Month><Day>1</Day></PubMedPubDate></History>"
                '<PublicationStatus>ppublish</PublicationStatus><ArticleIdList><ArticleId IdType="pubmed">' + pmid + "</ArticleId></ArticleIdList></PubmedBookData></PubmedBookArticle>"
            )
        else:
            xml = (
                '<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM"><PMID Version="1">' + pmid + "</PMID>"
                '<Article PubModel="Print"><Journal><ISSN IssnType="Print">0000-0000</ISSN><JournalIssue CitedMedium="Print"><Volume>12</Volume><Issue>3</Issue>'
                + _pub_date(n)
                + "</JournalIssue><Title>Journal of Demo Medicine</Title><ISOAbbreviation>J Demo Med</ISOAbbreviation></Journal>"
                "<ArticleTitle>" + escape(title) + "</ArticleTitle>" + abstract + markup
                + '<AuthorList CompleteYN="Y"><Author ValidYN="Y"><LastName>Author</LastName><ForeName>Demo</ForeName><Initials>D</Initials></Author></AuthorList>'
                "<Language>eng</Language><PublicationTypeList>" + pubtypes + "</PublicationTypeList></Article>"
                "<MeshHeadingList>" + mesh + "</MeshHeadingList></MedlineCitation>"
                '<PubmedData><PublicationStatus>ppublish</PublicationStatus><ArticleIdList><ArticleId IdType="pubmed">' + pmid + "</ArticleId></ArticleIdList></PubmedData></PubmedArticle>"
            )
        out[pmid] = '<?xml version="1.0" ?>\n<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" "https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">\n<PubmedArticleSet>\n' + xml + "\n</PubmedArticleSet>\n"
    return out


def write_zip(path: Path, studies: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for st in sorted(studies, key=lambda x: x["protocolSection"]["identificationModule"]["nctId"]):
            nct = st["protocolSection"]["identificationModule"]["nctId"]
            info = zipfile.ZipInfo(f"{nct}.json", date_time=(2024, 1, 15, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, json.dumps(st, ensure_ascii=False, indent=2))


def render(out: Path) -> None:
    studies = [build_study(s) for s in STUDIES]
    write_zip(out / "ctgov" / "studies.zip", studies)
    pm_dir = out / "pubmed"
    pm_dir.mkdir(parents=True, exist_ok=True)
    for old in pm_dir.glob("*.xml"):
        old.unlink()
    recs = pubmed_records()
    for pmid, xml in recs.items():
        (pm_dir / f"{pmid}.xml").write_text(xml, encoding="utf-8")
    print(f"wrote {len(studies)} studies to {out / 'ctgov' / 'studies.zip'} and {len(recs)} PubMed records to {pm_dir}")


def differences(fresh: Path, committed: Path) -> list[str]:
    """Generated files that differ between a fresh build and the committed snapshot."""
    names = {p.relative_to(fresh).as_posix() for p in fresh.rglob("*") if p.is_file()}
    names |= {p.relative_to(committed).as_posix() for p in (committed / "pubmed").glob("*.xml")}
    names.add("ctgov/studies.zip")
    return sorted(n for n in names if not (committed / n).is_file() or not (fresh / n).is_file()
                  or (committed / n).read_bytes() != (fresh / n).read_bytes())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "resources" / "demo"))
    ap.add_argument("--check", action="store_true", help="exit 1 if the files under --out differ from a fresh build")
    args = ap.parse_args()
    out = Path(args.out)
    if not args.check:
        render(out)
        return 0
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        render(Path(tmp))
        diff = differences(Path(tmp), out)
    print("up to date" if not diff else "differ from a fresh build: " + ", ".join(diff))
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
