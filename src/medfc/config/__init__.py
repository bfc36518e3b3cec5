"""Whether a config can run: its schema, the checks across keys, the prerequisites of its planned jobs, each mistake
one line naming the key (:func:`medfc.config.validate.plan_for`, the workflow's one entry point)."""
