"""The HealthFC systems, each declared once (:class:`System` specs of :data:`REGISTRY`) for the plan, the
cross-validation driver, the tables and the tests. A light module (no torch, scikit-learn or pandas)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Annotated, Any, Literal, Union

from medfc.common.labels import BINARY_VERACITY_LABELS, LOE_LABELS, REFUTED, SUPPORTED, VERACITY_LABELS
from medfc.common.options import OneOf, Options, OptionsError, Tagged
from medfc.common.registry import lookup
from medfc.experiments.records import Claim, join_sentences
from medfc.experiments.models.options import ModelConfig
from medfc.retrieval.search_sources import source_names

EVIDENCE_SOURCES = source_names()  # where open-domain evidence is searched: the registry medfc.retrieval.search_sources


@dataclass(frozen=True)
class SingleOptions(Options):
    """oracle, claims_only, gold_explanations: one classifier."""

    val_fraction: float


@dataclass(frozen=True)
class LevelOptions(Options):
    """level_of_evidence: one classifier over high / moderate / low on the input ``loe_input``."""

    loe_input: Literal["claim", "claim+evidence", "claim+explanation", "claim+document"]
    val_fraction: float


@dataclass(frozen=True)
class RetrievedOptions(Options):
    """retrieved_<source>, open_domain_<source>: one classifier on the first snippets."""

    retrieved_top_k: int
    val_fraction: float


@dataclass(frozen=True)
class PipelineOptions(Options):
    """pipeline: an evidence selector (``evidence_train``), then a veracity classifier."""

    threshold: float
    max_evidence: int
    neg_ratio: float | None
    val_fraction: float
    evidence_train: ModelConfig


@dataclass(frozen=True)
class JointOptions(Options):
    """joint: one encoder with an evidence head and a label head."""

    threshold: float
    max_evidence: int
    evidence_weight: float
    joint_pool: Literal["gold", "pred"]
    val_fraction: float


# (claim, the system's options: an instance of its own options class, the evidence texts) → the example's text pair / the
# evidence texts it shows
Reads = Callable[[Claim, Any, Sequence[str]], tuple[str, str | None]]
Shows = Callable[[Claim, Any, Sequence[str]], list[str]]


def binary_eligible(c: Claim) -> bool:
    """The open-domain comparison's claims: SUPPORTED or REFUTED."""
    return c.label in (SUPPORTED, REFUTED)


def loe_eligible(c: Claim) -> bool:
    """The level-of-evidence task's claims: SUPPORTED or REFUTED with a level high / moderate / low."""
    return c.label in (SUPPORTED, REFUTED) and c.evidence_level in LOE_LABELS


def _loe_reads(c: Claim, o: LevelOptions, ev: Sequence[str]) -> tuple[str, str | None]:
    return c.claim, {
        "claim": None,
        "claim+evidence": join_sentences(c.gold_evidence),
        "claim+explanation": c.explanation,
        "claim+document": join_sentences(c.sentences),
    }[o.loe_input]


def retrieved_text(snippets: Sequence[str], top_k: int) -> str:
    """The first ``top_k`` snippets in rank order, concatenated (each stripped, one space between)."""
    return join_sentences(list(snippets)[: int(top_k)])


def _retrieved_reads(c: Claim, o: RetrievedOptions, ev: Sequence[str]) -> tuple[str, str | None]:
    return c.claim, retrieved_text(ev, o.retrieved_top_k)


def _retrieved_shows(c: Claim, o: RetrievedOptions, ev: Sequence[str]) -> list[str]:
    return list(ev)[: o.retrieved_top_k]


@dataclass(frozen=True)
class System:
    """One HealthFC system: its ``options`` class, which picks its trainer
    (:data:`medfc.experiments.healthfc.runs.TRAINERS`); ``reads(claim, options, evidence)``, the text pair a claim
    becomes (``evidence``: the snippets of ``source``, the pipeline's sentences, or nothing); ``shows``, the
    evidence its records show (None: the selected sentences); ``gold``; ``eligible``, the claims it predicts (None:
    all; the others counted as ``<not_eligible>_<split>``); ``model_kinds`` (None: any); ``paper_row``: the row of
    ``healthfc.table3`` and key giving its veracity F1."""

    name: str
    options: type[Options]
    labels: tuple[str, ...] = tuple(VERACITY_LABELS)
    reads: Reads | None = None
    shows: Shows | None = None
    gold: Callable[[Claim], str] = lambda c: c.label
    eligible: Callable[[Claim], bool] | None = None
    not_eligible: str = ""
    source: str | None = None
    model_kinds: tuple[str, ...] | None = None
    paper_row: tuple[str, str] | None = None

    @property
    def selects_evidence(self) -> bool:
        """Whether it chooses evidence sentences itself (and is scored on them)."""
        return self.shows is None

    def runs_with(self, kind: str) -> bool:
        return self.model_kinds is None or kind in self.model_kinds


_ARTICLE = (
    System("pipeline", PipelineOptions, reads=lambda c, o, ev: (c.claim, join_sentences(ev))),
    System("joint", JointOptions, model_kinds=("encoder",)),
    System("oracle", SingleOptions, reads=lambda c, o, ev: (c.claim, join_sentences(c.gold_evidence)),
           shows=lambda c, o, ev: c.gold_evidence, paper_row=("pipeline", "oracle_f1")),
    System("claims_only", SingleOptions, reads=lambda c, o, ev: (c.claim, None),
           shows=lambda c, o, ev: []),
    System("gold_explanations", SingleOptions, reads=lambda c, o, ev: (c.claim, c.explanation),
           shows=lambda c, o, ev: []),
    System("level_of_evidence", LevelOptions, labels=tuple(LOE_LABELS), reads=_loe_reads,
           shows=lambda c, o, ev: c.gold_evidence if o.loe_input == "claim+evidence" else [],
           gold=lambda c: c.evidence_level, eligible=loe_eligible, not_eligible="loe_not_applicable"),
)
# evidence retrieved for the claim from a source instead of the article: three classes (Table 5, "Google
# snippets" = retrieved_web) and supported vs refuted on the supported / refuted claims (the open-domain comparison)
_RETRIEVED = tuple(System(f"retrieved_{s}", RetrievedOptions, reads=_retrieved_reads, shows=_retrieved_shows, source=s)
                   for s in EVIDENCE_SOURCES)
_OPEN_DOMAIN = tuple(System(f"open_domain_{s}", RetrievedOptions, labels=tuple(BINARY_VERACITY_LABELS), reads=_retrieved_reads,
                            shows=_retrieved_shows, eligible=binary_eligible, not_eligible="nei_not_in_binary", source=s)
                     for s in EVIDENCE_SOURCES)

REGISTRY: dict[str, System] = {s.name: s for s in (*_ARTICLE, *_RETRIEVED, *_OPEN_DOMAIN)}

SYSTEMS = tuple(REGISTRY)
RETRIEVED_SYSTEMS = tuple(s.name for s in _RETRIEVED)
OPEN_DOMAIN_SYSTEMS = tuple(s.name for s in _OPEN_DOMAIN)
EVIDENCE_SYSTEMS = tuple(s.name for s in REGISTRY.values() if s.selects_evidence)  # scored on their selected sentences too
# the rows of the HealthFC tables, in their order
TABLE3_SYSTEMS = ("pipeline", "joint", "oracle")
TABLE5_SYSTEMS = ("claims_only", *RETRIEVED_SYSTEMS, "gold_explanations", "level_of_evidence")


def system(name: str) -> System:
    """The spec of a system; an unknown name is an error naming the known ones."""
    return lookup(REGISTRY, name, "HealthFC system")


def evidence_source(name: str) -> str | None:
    """The source a system's retrieved evidence comes from (``retrieved_web`` → ``web``); None for the others."""
    return system(name).source


# what :func:`input_fields` puts into each field of a probe claim, to see which ones a system's ``reads`` uses
_PROBE = {"claim": "<<claim>>", "explanation": "<<explanation>>", "document": "<<document>>", "evidence": "<<evidence>>",
          "snippet": "<<snippet>>"}


def input_fields(spec: System, options: Options) -> tuple[str, ...]:
    """The fields a new claim needs for ``spec`` with ``options`` (``medfc predict``): ``claim`` and whichever of
    ``evidence``, ``explanation`` or ``document`` its ``reads`` uses on a probe claim; ``claim`` and ``sentences``
    for a system that selects its evidence."""
    if spec.selects_evidence:
        return ("claim", "sentences")
    if spec.reads is None:
        raise ValueError(f"the {spec.name} system reads no single example per claim")
    probe = Claim("probe", _PROBE["claim"], "", "", _PROBE["explanation"], [_PROBE["document"], _PROBE["evidence"]], [1])
    a, b = spec.reads(probe, options, [_PROBE["snippet"]])
    text = f"{a} {b or ''}"
    fields = ["claim"] if _PROBE["claim"] in text else []
    if _PROBE["document"] in text:
        fields.append("document")
    elif _PROBE["evidence"] in text or _PROBE["snippet"] in text:
        fields.append("evidence")
    if _PROBE["explanation"] in text:
        fields.append("explanation")
    return tuple(fields)


def system_option_keys(name: str) -> list[str]:
    """The ``experiments.healthfc`` keys a system's runs depend on (its rule passes just these)."""
    return [f.name for f in fields(system(name).options)]


# the registry's names: checked against REGISTRY when the options are built (a system registered later is one)
SystemName = Annotated[Literal[SYSTEMS], OneOf(lambda: tuple(REGISTRY))]  # type: ignore[valid-type]
SystemOptions = Annotated[Union[SingleOptions, LevelOptions, RetrievedOptions, PipelineOptions, JointOptions],  # noqa: UP007
                          Tagged("system", choose=lambda name: system(name).options)]


@dataclass(frozen=True)
class HealthFCFoldOptions(Options):
    """One HealthFC run (``healthfc_experiment``), built by the plan."""

    system: SystemName
    lang: Literal["en", "de"]
    fold: int
    train: ModelConfig
    system_options: SystemOptions
    checkpoint_dir: str | None

    def _check(self, where: str) -> None:
        spec = system(self.system)
        if not spec.runs_with(self.train.kind):
            raise OptionsError(f"{where}.train: the {self.system} system needs a model of kind {' or '.join(spec.model_kinds or ())}, "
                               f"not {self.train.kind} ({self.train.model})")
