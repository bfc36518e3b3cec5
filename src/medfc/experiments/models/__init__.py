"""The model kinds and what trains and keeps them; nothing here knows a dataset's systems or runs."""
