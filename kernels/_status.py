"""Integer status codes returned by kernels: >= 0 means success (often a count)."""

OK = 0
ERR_TRUNCATED = -1  # input ended before a declared structure ended
ERR_CORRUPT = -2  # input complete but inconsistent (bad run length, index out of range...)
ERR_OVERFLOW = -3  # a value does not fit the output type
ERR_LIMIT = -5  # a limit the caller set was reached (says nothing about the input's validity)
