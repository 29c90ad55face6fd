"""columns layer of qdf_columnar."""
