"""The typed options of the experiments: each model kind's config (:data:`MODEL_CONFIGS`, told apart by ``kind``),
the pairs datasets' data and run options and the CliniFact LLM steps' options. A light module: the plan builds these.
Every field is a config key whose one default is in the schema (workflow/schemas/config.schema.yaml).
"""

from __future__ import annotations

from dataclasses import dataclass, fields as dataclass_fields
from collections.abc import Mapping, Sequence
from typing import Annotated, ClassVar, Literal, Union

from medfc.common.labels import CLINIFACT_CODES, CLINIFACT_LABELS
from medfc.common.llm_backends import BackendName
from medfc.common.options import Options, OptionsError, Tagged


@dataclass(frozen=True)
class ModelOptions(Options):
    """What every model kind's config class declares (its tags): these defaults, or its own."""

    kind: ClassVar[str]
    section: ClassVar[str | None] = None  # its experiments section (None: the encoder's layered training config)
    model_name: ClassVar[str | None] = None  # its model name (None: any model name no other kind claims)
    # the model lists that may name it: HealthFC's, CliniFact's and "pairs" (the one path's, every declared dataset's)
    datasets: ClassVar[tuple[str, ...]] = ("healthfc", "clinifact", "pairs")
    limits: ClassVar[str] = ""  # why it serves only ``datasets``: the plan's one-line error after "uses [...], "
    # its jobs' experiments.resources row is its kind; gpu: they ask for experiments.gpu's GPUs (row by model size)
    gpu: ClassVar[bool] = False


@dataclass(frozen=True)
class LoopOptions(Options):
    """The keys of the one training loop (:mod:`medfc.experiments.models.training`) an encoder's config and the LoRA
    fine-tuning share."""

    model: str
    lr: float
    warmup_ratio: float
    weight_decay: float
    batch_size: int
    eval_batch_size: int
    grad_accum: int
    epochs: float
    seed: int
    device: str  # auto | cpu | cuda | cuda:N
    precision: Literal["auto", "fp32", "bf16", "fp16"]
    max_steps: int | None  # cap on optimizer steps (smoke runs)
    max_examples: int | None  # cap on training examples (smoke runs)
    max_grad_norm: float
    length_grouping: bool
    group_factor: int
    progress: bool


@dataclass(frozen=True)
class TrainConfig(ModelOptions, LoopOptions):
    """Kind ``encoder``: fine-tuning a transformer (``experiments.<dataset>.train`` after its overrides)."""

    kind: ClassVar[str] = "encoder"
    gpu: ClassVar[bool] = True

    max_length: int
    eval_metric: str
    class_weights: Literal["none", "balanced"]  # "balanced": cross-entropy weighted n / (k · n_class)
    early_stopping_patience: int | None  # stop after this many evaluations without a better metric


@dataclass(frozen=True)
class TfidfOptions(ModelOptions):
    """Kind ``tfidf``: the ``experiments.tfidf`` section (+ ``model``, ``sklearn:tfidf``); :mod:`medfc.experiments.models.tfidf`."""

    kind: ClassVar[str] = "tfidf"
    section: ClassVar[str | None] = "tfidf"
    model_name: ClassVar[str | None] = "sklearn:tfidf"

    model: str
    spaces: tuple[Literal["joint", "separate"], ...]
    analyzers: tuple[Literal["word", "word+char"], ...]
    word_ngrams: tuple[int, int]
    char_ngrams: tuple[int, int]
    min_df: int
    max_word_features: int | None
    max_char_features: int | None
    C_grid: tuple[float, ...]
    selection: Literal["cv", "validation"]
    cv_folds: int
    class_weights: Literal["none", "balanced"]
    max_iter: int
    seed: int
    refit_with_validation: bool


@dataclass(frozen=True)
class GbmOptions(ModelOptions):
    """Kind ``gbm``: the ``experiments.gbm`` section (+ ``model``, ``sklearn:gbm``); :mod:`medfc.experiments.models.gbm`."""

    kind: ClassVar[str] = "gbm"
    section: ClassVar[str | None] = "gbm"
    model_name: ClassVar[str | None] = "sklearn:gbm"
    datasets: ClassVar[tuple[str, ...]] = ("pairs",)  # its features are of a claim and a text (medfc.experiments.models.features)
    limits: ClassVar[str] = ("gradient boosting over claim–text features (sklearn:gbm); it reads the claim and text of CliniFact's "
                             "and the declared datasets' pairs only")

    model: str
    learning_rate: float
    max_iter: int
    max_leaf_nodes: int
    min_samples_leaf: int
    l2_regularization: float
    class_weights: Literal["none", "balanced"]
    seeds: tuple[int, ...]
    refit_with_validation: bool
    embedding_model: str | None  # a frozen encoder whose embeddings add features; None: the hand features alone
    embedding_features: tuple[Literal["cos", "difference", "product"], ...]
    embedding_claim_length: int
    embedding_evidence_length: int
    embedding_batch_size: int
    device: str  # auto | cpu | cuda | cuda:N (the embedding encoder's)
    progress: bool
    cache_dir: str | None  # resolved by the plan; None here (a caller without the plan, e.g. a benchmark): none kept
    cache_dirs: ClassVar[dict[str, str]] = {"cache_dir": "embeddings"}  # shared with the frozen kind's store
    model_keys: ClassVar[tuple[str, ...]] = ("embedding_model",)  # keys naming a pretrained model it loads (the plan's offline check)

    def _check(self, where: str) -> None:
        if self.embedding_model and (self.embedding_model.startswith("sklearn:") or model_config_class(self.embedding_model) is not TrainConfig):
            raise OptionsError(f"{where}.embedding_model: {self.embedding_model!r} is a model kind's name; name the encoder itself "
                               f"(a hub name, a directory or an offline: name), e.g. offline:minilm")


@dataclass(frozen=True)
class FrozenOptions(ModelOptions):
    """Kind ``frozen``: the ``experiments.frozen`` section (``cache_dir``: the embeddings' store; ``""``: none)."""

    kind: ClassVar[str] = "frozen"
    section: ClassVar[str | None] = "frozen"
    model_name: ClassVar[str | None] = "frozen"
    cache_dirs: ClassVar[dict[str, str]] = {"cache_dir": "embeddings"}  # a null key → <cache_dir>/<this>, set by the plan

    model: str
    claim_length: int
    evidence_length: int
    truncation: Literal["system", "head", "tail"]
    batch_size: int
    C_grid: tuple[float, ...]
    cv_folds: int
    class_weights: Literal["none", "balanced"]
    max_iter: int
    seed: int
    refit_with_validation: bool
    device: str  # auto | cpu | cuda | cuda:N
    progress: bool
    cache_dir: str

    @property
    def encoder(self) -> str:
        """The frozen encoder: ``model`` after ``frozen:``."""
        return base_model(self.model)

    def _check(self, where: str) -> None:
        if not self.encoder:
            raise OptionsError(f"{where}.model: {self.model!r} names no encoder; write frozen:<hub name, directory or offline: name>, "
                               "e.g. frozen:offline:minilm")


# Every model kind's config: a new kind is one more ModelOptions class here (its tags), its entry in
# medfc.experiments.models.kinds.MODEL_KINDS, and its section and experiments.resources row in the schema.
MODEL_CONFIGS: tuple[type[ModelOptions], ...] = (TrainConfig, TfidfOptions, GbmOptions, FrozenOptions)
# the union's members are read from MODEL_CONFIGS when a config is built (a kind registered later is one)
ModelConfig = Annotated[Union[MODEL_CONFIGS], Tagged("kind", members=lambda: MODEL_CONFIGS)]  # noqa: UP007


def model_config_class(model: str) -> type[Options]:
    """The config class of a model name (the kind whose ``model_name`` it is, else an encoder)."""
    for cls in MODEL_CONFIGS:
        if cls.model_name is not None and (model == cls.model_name or model.startswith(cls.model_name + ":")):
            return cls
    if model.startswith("sklearn:"):
        known = [cls.model_name for cls in MODEL_CONFIGS if cls.model_name and cls.model_name.startswith("sklearn:")]
        raise ValueError(f"{model!r}: the scikit-learn baselines are {' and '.join(known)}")
    return TrainConfig


def base_model(model: str) -> str:
    """The pretrained model a model name loads (``frozen:offline:mpnet`` → ``offline:mpnet``; ``""``: none)."""
    for cls in MODEL_CONFIGS:
        if cls.model_name is not None and model.startswith(cls.model_name + ":"):
            return model[len(cls.model_name) + 1 :]
    return model if model_config_class(model) is TrainConfig else ""


@dataclass(frozen=True)
class PairData(Options):
    """A dataset's split files: its name, classes (in the models' order), the field of a file holding each of ``id``,
    ``claim``, ``evidence``, ``title`` and ``label`` (null: none), and ``codes`` (label value → class; empty: same)."""

    dataset: str
    classes: tuple[str, ...]
    fields: Mapping[str, str | None]
    codes: Mapping[str, str]

    def label_of(self, value: object) -> str | None:
        """The class of a label value (None outside the classes); a code may be written ``1``, ``"1.0"`` or ``"1"``."""
        from medfc.datasets.records import label_text

        label = self.codes.get(label_text(value)) if self.codes else str(value).strip()
        return label if label in self.classes else None


# CliniFact's release CSVs (22 columns; the label a release code, 1 = evidence, 0 = inconclusive, 2 = NEI)
CLINIFACT_PAIRS = PairData(
    dataset="clinifact", classes=tuple(CLINIFACT_LABELS),
    fields={"id": "index", "claim": "claim", "evidence": "article_abstract", "title": "article_title", "label": "label"},
    codes={str(code): label for code, label in CLINIFACT_CODES.items()},
)
SPLITS = ("train", "validation", "test")  # a pairs dataset's split files: its runs' and its final models' inputs


def imported_pairs(dataset: str, classes: Sequence[str], *, title: bool) -> PairData:
    """The split files a declared dataset's import writes (:mod:`medfc.datasets`): its fields by their own names."""
    fields = {"id": "id", "claim": "claim", "evidence": "evidence", "title": "title" if title else None, "label": "label"}
    return PairData(dataset=dataset, classes=tuple(classes), fields=fields, codes={})


@dataclass(frozen=True)
class PairsTrainOptions(Options):
    """One discriminative run of a pairs dataset (``pairs_experiment``)."""

    data: PairData
    train: ModelConfig
    include_title: bool
    predict_splits: tuple[str, ...]
    checkpoint_dir: str | None


@dataclass(frozen=True)
class ZeroShotOptions(Options):
    """``clinifact_zero_shot``: ``experiments.clinifact.zero_shot``, ``model`` and the resolved ``cache_dir``."""

    backend: BackendName  # a name of medfc.common.llm_backends.LLM_BACKENDS
    model: str
    tokenizer: str | None  # prompt trimming with the openai backend (transformers uses the model's)
    max_prompt_tokens: int
    batch_size: int
    device: str
    precision: Literal["auto", "fp32", "bf16", "fp16"]
    base_url: str
    api_key_env: str
    top_logprobs: int
    cache_dir: str
    min_interval_s: float
    timeout_s: float
    max_retries: int
    splits: tuple[str, ...]


@dataclass(frozen=True)
class FineTuneOptions(LoopOptions):
    """``clinifact_fine_tune``: ``experiments.clinifact.fine_tune`` (< ``model_fine_tune[model]`` < the smoke caps)."""

    lora_r: int
    lora_alpha: int
    lora_dropout: float
    target_modules: tuple[str, ...]
    max_prompt_tokens: int
    load_in_4bit: bool
    gradient_checkpointing: bool
    predict_splits: tuple[str, ...]
    save_adapters: bool
    save_merged: bool
    save_dir: str | None

    def train_config(self) -> TrainConfig:
        """The training loop's config: its keys, the lowest validation cross-entropy as the metric."""
        shared = {f.name: getattr(self, f.name) for f in dataclass_fields(LoopOptions)}
        return TrainConfig(**shared, max_length=self.max_prompt_tokens, eval_metric="val_loss", class_weights="none",
                           early_stopping_patience=None)
