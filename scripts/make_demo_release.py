#!/usr/bin/env python3
"""Generate the demo HealthFC release file ``resources/demo/healthfc_release/Datensatz.csv``.

DEMO CONTENT written by the medfc project for its demo snapshot (resources/demo/site): it is in the
*format* of the official HealthFC ``Datensatz.csv`` (12 columns, UTF-8 with a BOM, label codes
0 SUPPORTED / 1 NEI / 2 REFUTED; docs/sources.md §2) but holds none of the official file's content. The
German claims, explanations and evidence sentences are copied from the demo article pages; the
English fields are translations the project wrote by hand (below). The official release is never
copied or modified.

What the file exercises:

* rows for 27 of the 30 demo claims (``sport-depression#0``, ``melatonin-schlaf-jetlag#2`` and
  ``homoeopathie-heuschnupfen#0`` have none: crawl-only claims) plus one row for the
  robots-forbidden page ``/intern/entwurf-vitamin-d/`` (a release row without a crawled article);
* 1–4 gold evidence sentences per claim, copied verbatim from the demo article (each is checked
  to be a sentence of the parsed article's sentence list, body then studies section:
  :func:`medfc.healthfc.sentences.article_sentences`) and concatenated into ``*_top_sentences``;
  three claims (``kaffee-herzrhythmus#0``, ``rotwein-herzinfarkt#0``, ``glucosamin-arthrose#0``,
  one per layout) have one gold sentence in the studies section, as about 10% of the real ones do;
* ``de_verdict`` in the release's own forms (docs/sources.md §1a): reversed and lower-case answers
  ("wahrscheinlich Nein", "möglicherweise nicht", "ja") and, for pre-2014 pages,
  "<Level> wissenschaftliche Beweislage | <direction>" with free-text directions
  ("für die Nicht-Wirksamkeit", "für KEINE Wirksamkeit", "Ungenügende …"); each maps to the row's
  ``label``;
* one verdict updated on the portal since the release (``handy-hirntumor#0``: the release says
  "Studienlage widersprüchlich", NOT ENOUGH INFO, dated 7 June 2018; the page says "Nein, möglicherweise
  nicht", updated 12 September 2023): the release's label wins and the dataset report lists the
  disagreement; the diff (``healthfc_diff``) shows the verdict difference and the article updated since;
* one claim worded differently in the release (``zucker-hyperaktive-kinder#0``: "Macht Zucker Kinder
  hyperaktiv?", the page asks "Werden Kinder durch Zucker hyperaktiv?"): still joined (the article's only
  claim), listed by the diff as a changed claim text with its similarity score;
* one sentence slightly altered (``kaffee-herzrhythmus#0``: "höheres" → "erhöhtes") for fuzzy
  alignment; one row with Mac-Roman mojibake (``glutenfrei-reizdarm#0``: claim and explanation); one
  row with empty explanations (``detox-kuren#0``); authors joined with commas and "und";
  the typo verdict "wissenschafliche Beweise fehlen" (from the page of ``rotwein-herzinfarkt#0``).

Deterministic; the output is committed. ``--check`` exits 1 when the committed file differs.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from medfc.healthfc.parse import parse_page  # noqa: E402
from medfc.healthfc.sentences import article_sentences  # noqa: E402

SITE = ROOT / "resources" / "demo" / "site"
OUT = ROOT / "resources" / "demo" / "healthfc_release" / "Datensatz.csv"
ORIGIN = "https://www.medizin-transparent.at"
COLUMNS = ("en_claim", "en_explanation", "en_top_sentences", "de_claim", "de_explanation", "de_top_sentences",
           "label", "de_verdict", "de_title", "authors", "date", "url")
CODES = {"SUPPORTED": 0, "NOT ENOUGH INFO": 1, "REFUTED": 2}

# claim id → (English claim, English explanation, [(German evidence sentence, English), ...])
ROWS: dict[str, tuple[str, str, list[tuple[str, str]]]] = {
    "akupunktur-migraene#0": (
        "Can acupuncture prevent migraine attacks?",
        "In several studies, people who received acupuncture had fewer migraine days in the following months than "
        "people without acupuncture. The effect was similar in size to that of preventive medication.",
        [("In fünf Studien wurde Akupunktur mit vorbeugenden Medikamenten verglichen.",
          "Five studies compared acupuncture with preventive medication."),
         ("Die Teilnehmenden brachen die Behandlung mit Akupunktur seltener wegen Nebenwirkungen ab als die Behandlung mit Medikamenten.",
          "Participants stopped acupuncture treatment because of side effects less often than treatment with medication."),
         ("Ohne Akupunktur halbierte sich die Zahl der Migränetage bei ca. 15 von 100 Personen.",
          "Without acupuncture, the number of migraine days halved in about 15 out of 100 people.")],
    ),
    "akupunktur-migraene#1": (
        "Does real acupuncture work better than sham acupuncture?",
        "In the studies, real acupuncture did only slightly better than a sham treatment in which the needles were "
        "placed at the wrong points or only superficially. Whether this small difference matters is unclear.",
        [("Um den Placebo-Effekt zu berücksichtigen, verglichen 15 Studien echte Akupunktur mit einer Schein-Akupunktur.",
          "To take the placebo effect into account, 15 studies compared real acupuncture with sham acupuncture."),
         ("Auch nach einer Schein-Akupunktur hatten viele Teilnehmende deutlich weniger Migränetage.",
          "Many participants also had clearly fewer migraine days after sham acupuncture."),
         ("Dieser Unterschied ist klein, und die Ergebnisse der einzelnen Studien schwanken stark.",
          "This difference is small, and the results of the individual studies vary widely.")],
    ),
    "cranberry-blasenentzuendung#0": (
        "Do cranberry products prevent recurrent bladder infections in women?",
        "Some studies found fewer bladder infections in women who took cranberry products, others did not. The "
        "largest and most careful study found no clear benefit overall.",
        [("Insgesamt fand sie keinen statistisch gesicherten Nutzen von Cranberry-Produkten.",
          "Overall, it found no statistically significant benefit of cranberry products."),
         ("In manchen der eingeschlossenen Studien traten mit Cranberrys zwar weniger Blasenentzündungen auf.",
          "In some of the included studies, fewer bladder infections did occur with cranberries."),
         ("Eine davon, eine Studie mit Frauen nach einer gynäkologischen Operation, fand mit Cranberry-Kapseln weniger Harnwegsinfekte.",
          "One of them, a study of women after gynaecological surgery, found fewer urinary tract infections with cranberry capsules."),
         ("Eine andere Studie mit älteren Frauen in Pflegeheimen fand dagegen keinen Unterschied.",
          "Another study of older women in nursing homes, by contrast, found no difference.")],
    ),
    "detox-kuren#0": (
        "Do detox cures rid the body of toxins?",
        "",  # the row with empty explanations (German and English)
        [("Wir haben nach Studien gesucht, die die Wirkung von Detox-Kuren beim Menschen untersucht haben.",
          "We searched for studies that examined the effect of detox cures in humans."),
         ("Doch welche Giftstoffe sollen eigentlich entfernt werden?",
          "But which toxins are actually supposed to be removed?")],
    ),
    "folsaeure-schwangerschaft#0": (
        "Does taking folic acid around conception protect the child from neural tube defects such as spina bifida?",
        "Several large randomised trials consistently show that folic acid clearly lowers the risk of neural tube "
        "defects when it is taken before conception.",
        [("Mit Folsäure traten Neuralrohrdefekte um ca. 70 % seltener auf.",
          "With folic acid, neural tube defects occurred about 70% less often."),
         ("Besonders deutlich war der Effekt bei Frauen, die bereits ein Kind mit Neuralrohrdefekt geboren hatten.",
          "The effect was especially clear in women who had already given birth to a child with a neural tube defect.")],
    ),
    "glucosamin-arthrose#0": (
        "Does glucosamine relieve pain in knee osteoarthritis?",
        "In the methodologically best studies, glucosamine worked no better than a placebo. More favourable results "
        "come mainly from older studies funded by the manufacturer.",
        [("Auffällig war außerdem, dass Studien mit einem bestimmten Präparat eines Herstellers deutlich günstigere Ergebnisse lieferten als andere Studien.",
          "It was also striking that studies of one manufacturer's product gave clearly more favourable results than other studies."),
         ("Auffällig ist, dass sich in fast allen Studien auch die Beschwerden der Placebo-Gruppe deutlich besserten.",
          "It is striking that in almost all studies the complaints of the placebo group also improved clearly."),
         # from the studies section (pre-2014 layout: between the comments "Studien im Detail" and "Autoren")
         ("Die Metaanalyse umfasste zehn große Studien mit insgesamt 3.803 Teilnehmenden.",
          "The meta-analysis included ten large studies with a total of 3,803 participants.")],
    ),
    "glutenfrei-reizdarm#0": (
        "Does a gluten-free diet relieve symptoms of irritable bowel syndrome without coeliac disease?",
        "In a few small studies, people with irritable bowel syndrome reported fewer symptoms on a gluten-free diet. "
        "However, the studies are too small and too short for a reliable conclusion.",
        [("Wir haben drei randomisierte Studien gefunden, die eine glutenfreie Ernährung bei Menschen mit Reizdarm untersucht haben.",
          "We found three randomised trials that examined a gluten-free diet in people with irritable bowel syndrome.")],
    ),
    "grippeimpfung-senioren#0": (
        "Does the flu vaccination protect people over 65 from the flu?",
        "Vaccinated older people fall ill with laboratory-confirmed flu less often than unvaccinated ones. However, "
        "the protection is weaker in old age than in younger adults and varies from season to season.",
        [("Nur wenige randomisierte Studien haben die Grippeimpfung bei älteren Menschen untersucht.",
          "Only a few randomised trials have examined flu vaccination in older people."),
         ("Von den Ungeimpften erkrankten ca. 9 von 100 an einer im Labor bestätigten Grippe, von den Geimpften ca. 4 von 100.",
          "Of the unvaccinated, about 9 in 100 fell ill with laboratory-confirmed flu, of the vaccinated about 4 in 100.")],
    ),
    "handy-hirntumor#0": (
        "Does frequent mobile phone use increase the risk of brain tumours?",
        "Although almost everyone uses a mobile phone today, the number of brain tumours has not risen in recent "
        "decades. The available studies have weaknesses, however, for example because use was only asked about. A "
        "small risk with very intensive use can therefore not be ruled out entirely.",
        [("Dabei werden Menschen mit Hirntumor gefragt, wie viel sie in der Vergangenheit mit dem Handy telefoniert haben.",
          "In these studies, people with a brain tumour are asked how much they used to talk on their mobile phone."),
         ("Menschen mit einem Hirntumor überschätzen möglicherweise im Nachhinein, wie viel sie telefoniert haben, weil sie nach einer Erklärung für ihre Erkrankung suchen.",
          "People with a brain tumour may overestimate in hindsight how much they used the phone, because they are looking for an explanation for their illness."),
         ("Würde Handystrahlung das Hirntumorrisiko deutlich erhöhen, müsste die Zahl der Erkrankungen inzwischen gestiegen sein.",
          "If mobile phone radiation clearly increased the risk of brain tumours, the number of cases should have risen by now.")],
    ),
    "heilfasten-rheuma#0": (
        "Does therapeutic fasting relieve symptoms of rheumatoid arthritis?",
        "There are only very few small studies on this question, and their results do not allow a reliable conclusion.",
        [("Wir haben nur wenige Studien gefunden, die Heilfasten bei rheumatoider Arthritis untersucht haben.",
          "We found only a few studies that examined therapeutic fasting in rheumatoid arthritis."),
         ("Die anderen Studien hatten ebenfalls nur wenige Teilnehmende und beobachteten diese nur kurz.",
          "The other studies also had only a few participants and observed them only briefly.")],
    ),
    "hpv-impfung-krebsvorstufen#0": (
        "Does the HPV vaccination protect young women from precancerous lesions of the cervix?",
        "Large, well-conducted studies consistently show that the vaccination protects against high-grade "
        "precancerous lesions caused by the virus types contained in the vaccine. It works best when given before "
        "the first sexual intercourse.",
        [("Bei Frauen, die zu Beginn der Studie nicht mit HPV infiziert waren, senkte die Impfung das Risiko für hochgradige Krebsvorstufen deutlich.",
          "In women who were not infected with HPV at the start of the study, the vaccination clearly lowered the risk of high-grade precancerous lesions."),
         ("Ohne Impfung traten solche Vorstufen bei ca. 164 von 10.000 Frauen auf, mit Impfung bei ca. 2 von 10.000 Frauen.",
          "Without vaccination, such lesions occurred in about 164 out of 10,000 women, with vaccination in about 2 out of 10,000 women."),
         ("Auch wenn man alle Frauen betrachtet, also auch jene, die sich bereits angesteckt hatten, schützte die Impfung, allerdings weniger stark.",
          "Even when all women are considered, including those already infected, the vaccination protected, although less strongly."),
         ("Am besten wirkt die Impfung, wenn sie vor dem ersten sexuellen Kontakt erfolgt.",
          "The vaccination works best when it is given before the first sexual contact.")],
    ),
    "ingwer-uebelkeit-schwangerschaft#0": (
        "Does ginger relieve nausea and vomiting in early pregnancy?",
        "In several small studies, pregnant women who took ginger reported less nausea than women who received a "
        "placebo. Ginger had little effect on vomiting, however. As the studies are small and partly flawed, the "
        "effect is not certain.",
        [("Im Vergleich zum Placebo berichteten Frauen mit Ingwer über weniger Übelkeit.",
          "Compared with placebo, women taking ginger reported less nausea."),
         ("Auf die Häufigkeit des Erbrechens hatte Ingwer kaum Einfluss.",
          "Ginger had hardly any influence on how often the women vomited.")],
    ),
    "entwurf-vitamin-d#0": (
        "Does taking vitamin D regularly protect against acute respiratory infections?",
        "DRAFT: In studies with daily intake, slightly fewer participants fell ill with respiratory infections. The "
        "effect was small and the results inconsistent.",
        [("Mit täglicher Einnahme erkrankten etwas weniger Teilnehmende an akuten Atemwegsinfekten.",
          "With daily intake, slightly fewer participants fell ill with acute respiratory infections."),
         ("Eine Metaanalyse fasst ca. 40 randomisierte Studien zusammen.",
          "A meta-analysis summarises about 40 randomised trials.")],
    ),
    "kaffee-herzrhythmus#0": (
        "Does regular coffee consumption lead to heart rhythm disorders such as atrial fibrillation?",
        "Large observational studies find no higher risk of atrial fibrillation or other heart rhythm disorders in "
        "people who drink coffee every day. A small randomised study does show slightly more extra beats on coffee "
        "days, but no dangerous rhythm disorders.",
        [("Menschen, die täglich Kaffee tranken, hatten dabei kein höheres Risiko für Herzrhythmusstörungen als Menschen, die keinen Kaffee tranken.",
          "People who drank coffee every day had no higher risk of heart rhythm disorders than people who drank no coffee."),
         ("Auch hier fand sich kein Hinweis darauf, dass Kaffee Vorhofflimmern auslöst.",
          "Here, too, there was no indication that coffee triggers atrial fibrillation."),
         ("An Kaffee-Tagen zählten die Geräte im Mittel etwas mehr Extraschläge aus den Herzkammern.",
          "On coffee days, the devices counted slightly more extra beats from the ventricles on average."),
         # from the studies section (current layout: div.pods-post-page__study-detail)
         ("Sie fand keinen Zusammenhang zwischen der täglichen Kaffeemenge und dem Risiko für Vorhofflimmern.",
          "It found no association between the daily amount of coffee and the risk of atrial fibrillation.")],
    ),
    "kokosoel-alzheimer#0": (
        "Can coconut oil stop or slow the progression of Alzheimer's disease?",
        "There are only two very small studies on this question. They lasted a few weeks to months and had major "
        "methodological weaknesses. Whether coconut oil helps in Alzheimer's disease is therefore unknown.",
        [("Bei unserer Recherche haben wir nur zwei Studien gefunden, die Kokosöl bei Menschen mit Alzheimer untersucht haben.",
          "In our search we found only two studies that examined coconut oil in people with Alzheimer's disease."),
         ("Die Hälfte bekam drei Wochen lang täglich 40 ml Kokosöl.",
          "Half of them received 40 ml of coconut oil daily for three weeks.")],
    ),
    "kurkuma-arthrose#0": (
        "Do turmeric supplements relieve pain in knee osteoarthritis?",
        "Some studies suggest pain relief, others find no difference from a placebo. Most studies are small, short "
        "and partly funded by manufacturers.",
        [("In mehreren Studien hatten die Teilnehmenden mit Kurkuma weniger Schmerzen als mit einem Placebo.",
          "In several studies, participants had less pain with turmeric than with a placebo."),
         ("In anderen Studien fand sich dagegen kein Unterschied.",
          "Other studies, by contrast, found no difference."),
         ("Mehrere Studien wurden von Herstellern der Präparate finanziert.",
          "Several studies were funded by manufacturers of the supplements.")],
    ),
    "melatonin-schlaf-jetlag#0": (
        "Does melatonin ease the symptoms of jet lag after flights across several time zones?",
        "Several randomised trials show that melatonin relieves typical jet lag symptoms such as tiredness and sleep "
        "problems, especially on eastward flights across five or more time zones.",
        [("Eine Übersichtsarbeit fasst zehn randomisierte Studien zu Melatonin bei Jetlag zusammen.",
          "A review summarises ten randomised trials of melatonin for jet lag."),
         ("Am deutlichsten war der Effekt bei Flügen nach Osten über fünf oder mehr Zeitzonen.",
          "The effect was clearest on eastward flights across five or more time zones.")],
    ),
    "melatonin-schlaf-jetlag#1": (
        "Do adults with difficulty falling asleep fall asleep faster with melatonin?",
        "According to several studies, melatonin shortens the time it takes to fall asleep by about seven minutes on "
        "average. This is well established, but hardly noticeable for most of those affected.",
        [("Mit Melatonin schliefen die Teilnehmenden im Mittel ca. sieben Minuten schneller ein als mit einem Placebo.",
          "With melatonin, participants fell asleep about seven minutes faster on average than with a placebo."),
         ("Diese Unterschiede sind statistisch gut abgesichert, für die meisten Betroffenen aber kaum bemerkbar.",
          "These differences are statistically well established, but hardly noticeable for most of those affected.")],
    ),
    "omega-3-herz#0": (
        "Does taking omega-3 capsules regularly lower the risk of a heart attack?",
        "Omega-3 supplements may lower the risk of a heart attack slightly. Of 1,000 people who take capsules for "
        "several years, perhaps three to four are spared a heart attack. However, the study results are not entirely "
        "consistent.",
        [("Ohne Kapseln erlitten ca. 29 von 1.000 Personen einen Herzinfarkt, mit Kapseln waren es ca. 26 von 1.000.",
          "Without capsules, about 29 out of 1,000 people had a heart attack; with capsules it was about 26 out of 1,000.")],
    ),
    "omega-3-herz#1": (
        "Do people who take omega-3 capsules live longer?",
        "Numerous large, well-conducted studies consistently show that omega-3 capsules do not prolong life. People "
        "who took capsules died during the study period just as often as people who received a placebo.",
        [("Das Ergebnis: Menschen, die Omega-3-Kapseln einnahmen, starben im Untersuchungszeitraum nicht seltener als Menschen, die ein Placebo oder gar nichts bekamen.",
          "The result: people who took omega-3 capsules did not die less often during the study period than people who received a placebo or nothing at all.")],
    ),
    "probiotika-antibiotika-durchfall#0": (
        "Do probiotics prevent diarrhoea in children taking antibiotics?",
        "In numerous studies, children who took probiotics in addition to the antibiotic got diarrhoea less often. "
        "High doses of certain bacterial and yeast strains are the best studied.",
        [("Die Kinder bekamen zusätzlich zum Antibiotikum entweder ein Probiotikum oder ein Placebo bzw. keine zusätzliche Behandlung.",
          "In addition to the antibiotic, the children received either a probiotic or a placebo or no additional treatment."),
         ("Ohne Probiotikum bekamen ca. 19 von 100 Kindern Durchfall.",
          "Without a probiotic, about 19 out of 100 children got diarrhoea.")],
    ),
    "rotwein-herzinfarkt#0": (
        "Does a glass of red wine a day protect against a heart attack?",
        "There are no studies in which people were randomly assigned to red wine or no alcohol and observed for long "
        "enough. Observational studies do suggest a link, but for this question they are very prone to bias.",
        [("Tatsächlich zeigen viele Beobachtungsstudien, dass Menschen, die mäßig Alkohol trinken, seltener einen Herzinfarkt erleiden als Menschen, die gar keinen Alkohol trinken.",
          "Indeed, many observational studies show that people who drink alcohol in moderation have heart attacks less often than people who drink no alcohol at all."),
         ("Dieser Zusammenhang ist aber mit großer Vorsicht zu interpretieren.",
          "However, this association must be interpreted with great caution."),
         # from the studies section (2014–2017 layout)
         ("Randomisierte Studien, die den Einfluss von Rotwein auf das Herzinfarktrisiko untersuchen, haben wir nicht gefunden.",
          "We found no randomised trials that examine the influence of red wine on the risk of a heart attack.")],
    ),
    "schnuller-kindstod#0": (
        "Does a dummy during sleep lower the risk of sudden infant death?",
        "Several case-control studies show that babies who had fallen asleep with a dummy on the day of their death "
        "died less often of sudden infant death. Whether the dummy itself protects cannot be reliably concluded "
        "from this, however.",
        [("Mehrere Fall-Kontroll-Studien haben untersucht, ob Babys, die am plötzlichen Kindstod starben, beim letzten Einschlafen einen Schnuller hatten.",
          "Several case-control studies examined whether babies who died of sudden infant death had a dummy when they last fell asleep."),
         ("Babys, die mit Schnuller eingeschlafen waren, starben deutlich seltener am plötzlichen Kindstod.",
          "Babies who had fallen asleep with a dummy died of sudden infant death considerably less often.")],
    ),
    "sonnencreme-hautkrebs#0": (
        "Does applying sunscreen daily lower the risk of squamous cell carcinoma of the skin?",
        "In a large Australian study, adults who applied sunscreen daily developed squamous cell carcinoma less often "
        "than adults who applied it only at their own discretion. In absolute numbers, however, the difference was small.",
        [("In der Gruppe mit täglichem Eincremen erkrankten weniger Menschen neu daran als in der Vergleichsgruppe.",
          "In the group with daily application, fewer people newly developed it than in the comparison group."),
         ("Übertragen auf die australische Studie heißt das: Von 1.000 Personen, die sich über vier Jahre täglich eincremen, erkranken ca. 10 bis 15 weniger an einem Plattenepithelkarzinom.",
          "Applied to the Australian study, this means: of 1,000 people who apply sunscreen daily for four years, about 10 to 15 fewer develop squamous cell carcinoma.")],
    ),
    "vitamin-c-erkaeltung#0": (
        "Does taking vitamin C regularly prevent colds?",
        "In numerous large studies, people who regularly took vitamin C caught colds just as often as people who took "
        "a placebo. The only exception was people under extreme physical stress, such as marathon runners.",
        [("Eine Cochrane-Übersichtsarbeit fasst 29 Studien mit mehr als 11.000 Teilnehmenden zusammen, die regelmäßig Vitamin C oder ein Placebo einnahmen.",
          "A Cochrane review summarises 29 studies with more than 11,000 participants who regularly took vitamin C or a placebo."),
         ("Insgesamt erkrankten beide Gruppen gleich häufig an Erkältungen.",
          "Overall, both groups caught colds equally often."),
         ("Eine Ausnahme fand sich in fünf kleineren Studien mit Menschen unter großer körperlicher Belastung, darunter Marathonläufer, Skifahrer und Soldaten in arktischen Regionen.",
          "An exception was found in five smaller studies of people under heavy physical stress, including marathon runners, skiers and soldiers in arctic regions.")],
    ),
    "vitamin-c-erkaeltung#1": (
        "Does vitamin C relieve symptoms if it is only taken at the onset of a cold?",
        "The few studies in which vitamin C was taken only at the first signs of a cold found no clear benefit. "
        "However, the studies are few and partly small.",
        [("In den bisherigen Untersuchungen verkürzte Vitamin C die Erkältung dann nicht und milderte die Beschwerden nicht.",
          "In the studies so far, vitamin C then neither shortened the cold nor eased the symptoms."),
         ("Da diese Studien teils klein sind und unterschiedliche Dosierungen verwendeten, ist dieses Ergebnis weniger sicher.",
          "As these studies are partly small and used different doses, this result is less certain.")],
    ),
    "vitamin-d-depression#0": (
        "Can vitamin D supplements prevent or relieve depression?",
        "In the studies so far, vitamin D supplements worked no better against depressive symptoms than a dummy "
        "drug. However, some of the studies are small and examined very different doses, so the result is not "
        "entirely certain.",
        [("In der Gesamtauswertung linderte Vitamin D depressive Beschwerden nicht stärker als das Placebo.",
          "In the overall analysis, vitamin D did not relieve depressive symptoms more than the placebo.")],
    ),
    "zucker-hyperaktive-kinder#0": (
        "Does sugar make children hyperactive?",
        "In numerous well-conducted studies, children behaved no differently after sugary drinks than after sugar-free "
        "ones. This also applies to children with ADHD. However, parents who believed their child had been given "
        "sugar rated its behaviour as more restless.",
        [("Bereits in den 1980er- und 1990er-Jahren führten Forschende zahlreiche Studien durch, in denen Kinder entweder ein mit Zucker gesüßtes Getränk oder ein Getränk mit Süßstoff erhielten.",
          "As early as the 1980s and 1990s, researchers conducted numerous studies in which children received either a drink sweetened with sugar or a drink with sweetener."),
         ("Das Ergebnis war eindeutig: Zucker hatte keinen Einfluss auf Verhalten oder geistige Leistungsfähigkeit der Kinder.",
          "The result was clear: sugar had no influence on the children's behaviour or mental performance."),
         ("Das galt auch für Kinder, deren Eltern sie als besonders zuckerempfindlich beschrieben, und für Kinder mit ADHS.",
          "This also applied to children whose parents described them as particularly sensitive to sugar, and to children with ADHD.")],
    ),
}

#: claim id → (original German sentence, the altered version written into the release)
ALTERED = {
    "kaffee-herzrhythmus#0": (
        "Menschen, die täglich Kaffee tranken, hatten dabei kein höheres Risiko für Herzrhythmusstörungen als Menschen, die keinen Kaffee tranken.",
        "Menschen, die täglich Kaffee tranken, hatten dabei kein erhöhtes Risiko für Herzrhythmusstörungen als Menschen, die keinen Kaffee tranken.",
    ),
}
MOJIBAKE = {"glutenfrei-reizdarm#0": ("de_claim", "de_explanation")}
EMPTY_EXPLANATION = {"detox-kuren#0"}

#: de_verdict in the release's own forms (docs/sources.md §1a), where it is not the page's verdict text
RELEASE_VERDICT = {
    "kaffee-herzrhythmus#0": "wahrscheinlich Nein",
    "vitamin-d-depression#0": "möglicherweise nicht",
    "ingwer-uebelkeit-schwangerschaft#0": "möglicherweise Ja",
    "omega-3-herz#1": "nein",
    "hpv-impfung-krebsvorstufen#0": "ja",
    "kokosoel-alzheimer#0": "wissenschaftliche Belege fehlen",
    # pre-2014 pages: "<Level> wissenschaftliche Beweislage | <direction>"
    "grippeimpfung-senioren#0": "Mittlere wissenschaftliche Beweislage | für die Wirksamkeit",
    "vitamin-c-erkaeltung#0": "Hohe wissenschaftliche Beweislage | gegen die vorbeugende Wirksamkeit",
    "vitamin-c-erkaeltung#1": "Niedrige wissenschaftliche Beweislage | für die Nicht-Wirksamkeit",
    "heilfasten-rheuma#0": "Ungenügende wissenschaftliche Beweislage",
    "glucosamin-arthrose#0": "Mittlere wissenschaftliche Beweislage | für KEINE Wirksamkeit",
    "schnuller-kindstod#0": "Niedrige wissenschaftliche Beweislage | für einen Zusammenhang",
    "folsaeure-schwangerschaft#0": "Hohe wissenschaftliche Beweislage | für die Wirksamkeit",
}
#: claim id → (de_verdict, label) of a verdict the portal changed after the release was made
UPDATED_SINCE_RELEASE = {"handy-hirntumor#0": ("Studienlage widersprüchlich", "NOT ENOUGH INFO")}
#: claim id → the article's date in the release, for the article the portal updated after the release was made
#: (its page says "zuletzt aktualisiert: 12. September 2023")
DATED_IN_RELEASE = {"handy-hirntumor#0": "2018-06-07"}
#: claim id → the German claim as the release has it, where the page words the question differently today
WORDED_IN_RELEASE = {"zucker-hyperaktive-kinder#0": "Macht Zucker Kinder hyperaktiv?"}
GERMAN_MONTHS = ("Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
                 "November", "Dezember")


def mac_roman_mojibake(text: str) -> str:
    """What UTF-8 text looks like after being decoded as Mac Roman ("ü" → "√º")."""
    return text.encode("utf-8").decode("mac_roman")


def join_authors(names: list[str]) -> str:
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " und " + names[-1]


def german_date(iso: str | None) -> str:
    if not iso:
        return ""
    y, m, d = (int(x) for x in iso.split("-"))
    return f"{d}. {GERMAN_MONTHS[m - 1]} {y}"


def verdict_and_label(claim) -> tuple[str, str]:
    """The row's de_verdict and label; checked to map to that label (and, unless updated, the page's)."""
    from medfc.healthfc.verdicts import verdict_from_text

    if claim.claim_id in UPDATED_SINCE_RELEASE:
        text, label = UPDATED_SINCE_RELEASE[claim.claim_id]
    else:
        text, label = RELEASE_VERDICT.get(claim.claim_id, claim.verdict_text), claim.label
        v = verdict_from_text(text)
        if (v.label, v.evidence_level, v.small_effect) != (claim.label, claim.evidence_level, claim.small_effect):
            raise SystemExit(f"{claim.claim_id}: release verdict {text!r} does not map to the page's verdict")
    if verdict_from_text(text).label != label:
        raise SystemExit(f"{claim.claim_id}: release verdict {text!r} does not map to {label}")
    return text, label


def build_rows() -> list[dict[str, str]]:
    pages = sorted(p.parent for p in SITE.rglob("index.html"))
    rows: list[dict[str, str]] = []
    seen: set[str] = set()
    for page in pages:
        rel = page.relative_to(SITE).as_posix()
        url = f"{ORIGIN}/{rel}/"
        try:
            article = parse_page(url, (page / "index.html").read_text(encoding="utf-8"))
        except Exception:  # listings, truncated pages, pages without a verdict
            continue
        sentences = set(article_sentences(article.record()))
        for claim in article.claims:
            if claim.claim_id not in ROWS:
                continue
            seen.add(claim.claim_id)
            claim_en, expl_en, evidence = ROWS[claim.claim_id]
            missing = [de for de, _ in evidence if de not in sentences]
            if missing:
                raise SystemExit(f"{claim.claim_id}: evidence not a sentence of the demo article: {missing}")
            de_sents = [de for de, _ in evidence]
            de_verdict, label = verdict_and_label(claim)
            if claim.claim_id in ALTERED:
                old, new = ALTERED[claim.claim_id]
                de_sents = [new if s == old else s for s in de_sents]
            row = {
                "en_claim": claim_en,
                "en_explanation": expl_en,
                "en_top_sentences": " ".join(en for _, en in evidence),
                "de_claim": WORDED_IN_RELEASE.get(claim.claim_id, claim.question),
                "de_explanation": "" if claim.claim_id in EMPTY_EXPLANATION else claim.explanation,
                "de_top_sentences": " ".join(de_sents),
                "label": str(CODES[label]),
                "de_verdict": de_verdict,
                "de_title": article.title,
                "authors": join_authors(article.authors),
                "date": german_date(DATED_IN_RELEASE.get(claim.claim_id, article.date)),
                "url": url,
            }
            for col in MOJIBAKE.get(claim.claim_id, ()):
                row[col] = mac_roman_mojibake(row[col])
            rows.append(row)
    unknown = sorted(set(ROWS) - seen)
    if unknown:
        raise SystemExit(f"claims in ROWS that the demo site does not have: {unknown}")
    return rows


def render(rows: list[dict[str, str]]) -> bytes:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return b"\xef\xbb\xbf" + buf.getvalue().encode("utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed file differs from a fresh run")
    args = ap.parse_args(argv)
    data = render(build_rows())
    if args.check:
        same = OUT.exists() and OUT.read_bytes() == data
        print("up to date" if same else f"{OUT} differs from a fresh run")
        return 0 if same else 1
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(data)
    n_rows = len(data.decode("utf-8-sig").splitlines()) - 1
    print(f"wrote {OUT} ({n_rows} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
