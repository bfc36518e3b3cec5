"""The HealthFC experiments: the registry of systems, the cross-validation driver and the joint system."""
