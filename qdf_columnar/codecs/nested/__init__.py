"""Nested codec units: how list, struct and map columns are shredded into flat levels
(:mod:`.unit` for the contract, :mod:`.plan` for the walk over the registered units)."""
