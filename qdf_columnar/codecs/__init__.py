"""codecs layer of qdf_columnar."""
