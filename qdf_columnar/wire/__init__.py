"""wire layer of qdf_columnar."""
