"""The runners of the CliniFact systems that have one of their own: one module per system, named by
its record in :data:`medfc.experiments.clinifact_systems.CLINIFACT_SYSTEMS` (``runner="medfc.experiments.
clinifact_runners.<module>:run"``, ``options_class="medfc.experiments.clinifact_runners.<module>:<Options>"``).

A module holds the system's options class (a frozen dataclass derived from
:class:`~medfc.experiments.clinifact_systems.CliniFactRunnerOptions`, without defaults: its keys are its section
``experiments.clinifact.<section>``'s, plus ``model`` and the paths its record asks for) and its runner,
``run(inputs, options, runtime) -> (records, info)``: the splits its record's ``inputs`` names, its options, the
job's threads and log → one :class:`~medfc.experiments.records.CliniFactPrediction` per pair (``system``: its
name; :func:`medfc.experiments.clinifact_data.prediction_record` makes one) and its run's info. The generic step
``experiments.steps:clinifact_system`` writes both, with the job's provenance. The plan imports the module to
check a job's options before any job runs, so it imports its libraries (torch, transformers, pandas) inside
``run``, never at its top; the step's code version covers the module (its rule's ``step``).

No system of the paper needs one: the module is where a new one goes.
"""
