"""Deterministic synthetic datasets for the demo, the benchmarks and the tests.

The only generator today is :func:`make_log_table`, a web-service access-log batch.
It is meant to look like a real log (skewed categorical columns, correlated fields,
heavy-tailed numbers, random ids), not to favour any particular file format: nothing
in it is sorted, bucketed or quantised for the benefit of an encoder beyond what a
real service would emit.

Everything is drawn from ``numpy.random.Generator(PCG64(seed))`` with vectorised
calls only, so the same ``(n_rows, seed)`` always yields the same table and a
million rows take well under two seconds.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["LOG_COLUMNS", "make_log_table"]

#: Column names of :func:`make_log_table`, in order.
LOG_COLUMNS: tuple[str, ...] = (
    "ts",
    "level",
    "service",
    "host",
    "method",
    "path",
    "status",
    "latency_ms",
    "bytes_sent",
    "trace_id",
    "user_id",
    "region",
)

# --------------------------------------------------------------------------- vocabularies
# The vocabularies are "infrastructure" (which services, hosts and routes exist), so they
# are fixed constants built from their own seed: changing ``seed`` changes the traffic,
# not the fleet.
_VOCAB_SEED = 20260101

_START_US = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z in microseconds since the epoch

_LEVELS = ("INFO", "WARN", "ERROR", "DEBUG")
_LEVEL_P = (0.80, 0.12, 0.05, 0.03)

# Services in popularity order (rank 1 first) with the REST resources each one owns.
_SERVICES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("catalog", ("products", "categories")),
    ("search", ("search", "suggestions")),
    ("cart", ("carts", "wishlists")),
    ("users", ("users", "profiles")),
    ("auth", ("sessions", "tokens")),
    ("orders", ("orders", "returns")),
    ("recommendations", ("recommendations", "feeds")),
    ("inventory", ("stock", "warehouses")),
    ("payments", ("payments", "refunds")),
    ("reviews", ("reviews", "ratings")),
    ("shipping", ("shipments", "rates")),
    ("notifications", ("notifications", "subscriptions")),
)
_SERVICE_ZIPF_S = 1.0
# Typical median latency (ms) per service: search and recommendations are slow, auth fast.
_SERVICE_MEDIAN_MS = (18.0, 65.0, 12.0, 9.0, 6.0, 35.0, 80.0, 15.0, 120.0, 14.0, 25.0, 8.0)

_ROUTES_TOTAL = 200
_SUBRESOURCES = ("items", "status", "history", "events", "summary", "attachments", "settings", "audit")
_COLLECTION_ACTIONS = ("search", "export", "batch")
_ROUTE_ZIPF_S = 1.2

_METHODS = ("GET", "POST", "PUT", "DELETE")
# Method mix by route kind: a collection is listed or appended to, an item is read,
# replaced or deleted, a sub-resource or action is mostly read or posted to.
_METHOD_P_COLLECTION = (0.74, 0.26, 0.0, 0.0)
_METHOD_P_ITEM = (0.70, 0.0, 0.18, 0.12)
_METHOD_P_SUB = (0.80, 0.20, 0.0, 0.0)

_REGIONS = ("us-east-1", "eu-west-1", "us-west-2", "eu-central-1", "ap-southeast-1", "sa-east-1")
_HOSTS_PER_REGION = (16, 14, 12, 10, 8, 4)  # 64 hosts; bigger regions carry more traffic
_HOST_ROLES = ("web", "api")

_STATUSES = (200, 201, 204, 301, 304, 400, 401, 403, 404, 429, 500, 502, 503)


def _status_table() -> np.ndarray:
    """P(status | level, method) as a (levels, methods, statuses) array.

    INFO/DEBUG rows are successes whose code follows the method (POST creates, DELETE
    returns 204, GETs are sometimes cached 304 or redirected); WARN rows are client
    errors; ERROR rows are mostly 5xx with a few rate-limit / bad-request leftovers.
    """
    idx = {s: i for i, s in enumerate(_STATUSES)}
    p = np.zeros((len(_LEVELS), len(_METHODS), len(_STATUSES)))
    ok_by_method = {
        "GET": {200: 0.88, 304: 0.09, 301: 0.03},
        "POST": {201: 0.70, 200: 0.30},
        "PUT": {200: 0.90, 204: 0.10},
        "DELETE": {204: 0.80, 200: 0.20},
    }
    warn = {404: 0.35, 400: 0.20, 401: 0.15, 429: 0.15, 403: 0.10, 503: 0.05}
    error = {500: 0.50, 502: 0.20, 503: 0.20, 429: 0.05, 400: 0.05}
    for li, level in enumerate(_LEVELS):
        for mi, method in enumerate(_METHODS):
            dist = ok_by_method[method] if level in ("INFO", "DEBUG") else warn if level == "WARN" else error
            for code, prob in dist.items():
                p[li, mi, idx[code]] = prob
    return p


def _zipf_weights(k: int, s: float) -> np.ndarray:
    w = 1.0 / np.arange(1, k + 1, dtype=np.float64) ** s
    return w / w.sum()


def _build_routes() -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """The fixed route catalogue.

    Returns (routes, service_offset, route_cdf, method_cdf): routes grouped by service,
    the index of each service's first route, a (services, max_routes) table of
    within-service cumulative route probabilities (padded with 1.0), and a
    (routes, methods) table of cumulative method probabilities.
    """
    vrng = np.random.Generator(np.random.PCG64(_VOCAB_SEED))
    n_svc = len(_SERVICES)
    base, extra = divmod(_ROUTES_TOTAL, n_svc)
    counts = [base + (1 if i < extra else 0) for i in range(n_svc)]

    routes: list[str] = []
    kinds: list[tuple[float, ...]] = []
    offsets = np.zeros(n_svc, dtype=np.int64)
    cdf = np.ones((n_svc, max(counts)), dtype=np.float64)
    for si, ((_, resources), count) in enumerate(zip(_SERVICES, counts)):
        candidates: list[tuple[str, tuple[float, ...]]] = []
        for version in ("v1", "v2"):
            for res in resources:
                root = f"/api/{version}/{res}"
                candidates.append((root, _METHOD_P_COLLECTION))
                candidates.append((root + "/{id}", _METHOD_P_ITEM))
                candidates += [(f"{root}/{{id}}/{sub}", _METHOD_P_SUB) for sub in _SUBRESOURCES]
                candidates += [(f"{root}/{act}", _METHOD_P_SUB) for act in _COLLECTION_ACTIONS]
        # A fixed shuffle decides which candidates exist and how popular each is, so
        # v1 and v2 routes, items and sub-resources interleave in the popularity order.
        order = vrng.permutation(len(candidates))[:count]
        offsets[si] = len(routes)
        for j in order:
            routes.append(candidates[j][0])
            kinds.append(candidates[j][1])
        cdf[si, :count] = np.cumsum(_zipf_weights(count, _ROUTE_ZIPF_S))
        cdf[si, count - 1] = 1.0  # guard against rounding leaving a gap at the top
    method_cdf = np.cumsum(np.asarray(kinds, dtype=np.float64), axis=1)
    method_cdf[:, -1] = 1.0
    return routes, offsets, cdf, method_cdf


def _build_hosts() -> tuple[list[str], np.ndarray, np.ndarray]:
    """The fixed fleet: (host names, region index of each host, host traffic weights)."""
    vrng = np.random.Generator(np.random.PCG64(_VOCAB_SEED + 1))
    names: list[str] = []
    region_of: list[int] = []
    for ri, (region, count) in enumerate(zip(_REGIONS, _HOSTS_PER_REGION)):
        numbers = np.sort(vrng.choice(np.arange(1, 200), size=count, replace=False))
        roles = vrng.integers(0, len(_HOST_ROLES), size=count)
        for num, role in zip(numbers, roles):
            names.append(f"{_HOST_ROLES[role]}-{num:03d}.{region}")
            region_of.append(ri)
    # Load balancers are not perfectly even: per-host weights vary by about +-25 %.
    weights = vrng.uniform(0.75, 1.25, size=len(names))
    return names, np.asarray(region_of, dtype=np.int64), weights / weights.sum()


_ROUTES, _ROUTE_OFFSETS, _ROUTE_CDF, _METHOD_CDF = _build_routes()
_HOSTS, _HOST_REGION, _HOST_P = _build_hosts()
_STATUS_CDF = np.cumsum(_status_table(), axis=2)
_STATUS_CDF[..., -1] = 1.0

_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


def _draw(rng: np.random.Generator, p: np.ndarray | tuple[float, ...], n: int) -> np.ndarray:
    """Categorical draw of ``n`` indices with probabilities ``p`` (inverse CDF)."""
    cdf = np.cumsum(np.asarray(p, dtype=np.float64))
    cdf[-1] = 1.0
    return np.searchsorted(cdf, rng.random(n), side="right").astype(np.int64)


def _draw_conditional(rng: np.random.Generator, cdf_rows: np.ndarray) -> np.ndarray:
    """One categorical draw per row, row ``i`` using the cumulative probabilities ``cdf_rows[i]``."""
    u = rng.random(cdf_rows.shape[0])
    return (u[:, None] >= cdf_rows).sum(axis=1).astype(np.int64)


def _strings(vocab: list[str] | tuple[str, ...], codes: np.ndarray) -> pa.Array:
    """A plain (non-dictionary) Arrow string column holding ``vocab[codes]``."""
    return pc.take(pa.array(vocab, type=pa.string()), pa.array(codes))


def _trace_ids(rng: np.random.Generator, n: int) -> pa.Array:
    """``n`` random 128-bit ids as 32 lowercase hex characters, built straight into Arrow buffers."""
    raw = rng.integers(0, 256, size=(n, 16), dtype=np.uint8)
    chars = np.empty((n, 32), dtype=np.uint8)
    chars[:, 0::2] = _HEX[raw >> 4]
    chars[:, 1::2] = _HEX[raw & 0x0F]
    offsets = np.arange(0, 32 * (n + 1), 32, dtype=np.int32)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(chars.tobytes()))


def make_log_table(n_rows: int = 200_000, *, seed: int = 0) -> pa.Table:
    """A deterministic batch of ``n_rows`` web-service access-log records.

    Columns (all non-null except ``user_id``):

    - ``ts`` (``timestamp[us, tz=UTC]``): starts at 2026-01-01T00:00:00Z and strictly
      increases; gaps are 1 ms plus an exponential jitter with mean 2 ms (~3 ms average,
      so 1M rows span about 50 minutes).
    - ``level`` (string): INFO 80 %, WARN 12 %, ERROR 5 %, DEBUG 3 %, independent per row.
    - ``service`` (string): 12 services (catalog, search, cart, ...) with Zipf(s=1.0)
      popularity, so the top service takes ~32 % of rows and the last ~2.7 %.
    - ``host`` (string): 64 hosts such as ``"web-017.eu-west-1"`` spread over 6 regions
      (16/14/12/10/8/4 hosts), each with a random +-25 % load weight.
    - ``method`` (string): depends on the route kind: collections are GET/POST, items
      GET/PUT/DELETE, sub-resources GET/POST; overall ~78 % GET, ~17 % POST, ~2.5 % PUT,
      ~1.7 % DELETE.
    - ``path`` (string): 200 route templates such as ``"/api/v2/orders/{id}/items"``;
      each service owns ~17 routes and picks among them with Zipf(s=1.2).
    - ``status`` (int64, values in int16 range): drawn given (level, method): INFO/DEBUG
      rows succeed (GET 200/304/301, POST 201/200, PUT 200/204, DELETE 204/200), WARN
      rows are 4xx (404, 400, 401, 429, 403) with 5 % 503, ERROR rows are 90 % 5xx
      (500, 502, 503) and 10 % 429/400.
    - ``latency_ms`` (float64, rounded to 0.001 ms): log-normal, sigma 0.8, around a
      per-service median (6 ms auth ... 120 ms payments); 304s are ~3x faster, 5xx ~4x
      slower with a long tail.
    - ``bytes_sent`` (int64, clipped to 200..2,000,000): log-normal; successful GETs have
      a ~6 kB median with a heavy tail, writes ~1 kB, header-only answers
      (204/301/304) and errors a few hundred bytes.
    - ``trace_id`` (string): 32 lowercase hex characters of a random 128-bit id, unique
      per row (a collision has probability ~1e-27 at 1M rows).
    - ``user_id`` (int64, nullable): ~30 % null (anonymous requests); otherwise one of
      200,000 accounts drawn uniformly from 1..5,000,000, picked with a power-law skew
      so heavy users recur.
    - ``region`` (string): the region of the row's host (6 values), so it is fully
      determined by ``host``.
    """
    if n_rows < 0:
        raise ValueError(f"n_rows must be >= 0, got {n_rows}")
    n = int(n_rows)
    rng = np.random.Generator(np.random.PCG64(seed))

    # Time: a Poisson-ish arrival process with a 1 ms floor keeps ts strictly increasing.
    gaps = 1_000 + rng.exponential(2_000.0, size=n).astype(np.int64)
    if n:
        gaps[0] = 0
    ts = _START_US + np.cumsum(gaps)

    level = _draw(rng, _LEVEL_P, n)
    service = _draw(rng, _zipf_weights(len(_SERVICES), _SERVICE_ZIPF_S), n)
    route = _ROUTE_OFFSETS[service] + _draw_conditional(rng, _ROUTE_CDF[service])
    method = _draw_conditional(rng, _METHOD_CDF[route])
    status_idx = _draw_conditional(rng, _STATUS_CDF[level, method])
    status = np.asarray(_STATUSES, dtype=np.int64)[status_idx]

    host = _draw(rng, _HOST_P, n)
    region = _HOST_REGION[host]

    # Latency: per-service log-normal; cached answers are fast, server errors slow
    # (timeouts and retries give them a fatter tail).
    median = np.asarray(_SERVICE_MEDIAN_MS)[service]
    factor = np.ones(n)
    factor[status == 304] = 0.3
    is_5xx = status >= 500
    factor[is_5xx] = 4.0 * rng.lognormal(0.0, 0.6, size=int(is_5xx.sum()))
    latency = np.round(median * factor * rng.lognormal(0.0, 0.8, size=n), 3)

    # Response size: the body depends on what was answered; headers alone are ~200 B.
    size_median = np.full(n, 6_000.0)
    size_median[method != 0] = 1_000.0
    size_median[np.isin(status, (204, 301, 304))] = 260.0
    size_median[status >= 400] = 450.0
    size_sigma = np.where(size_median >= 6_000.0, 1.5, 0.6)
    bytes_sent = np.clip(np.round(size_median * np.exp(size_sigma * rng.standard_normal(n))), 200, 2_000_000)

    trace_id = _trace_ids(rng, n)

    accounts = rng.integers(1, 5_000_001, size=200_000, dtype=np.int64)
    # u**3 concentrates picks on low indices: a power-law-like "some users are busy" skew.
    user_id = accounts[(accounts.size * rng.random(n) ** 3).astype(np.int64)]
    anonymous = rng.random(n) < 0.30

    return pa.table(
        {
            "ts": pa.array(ts, type=pa.timestamp("us", tz="UTC")),
            "level": _strings(_LEVELS, level),
            "service": _strings([s for s, _ in _SERVICES], service),
            "host": _strings(_HOSTS, host),
            "method": _strings(_METHODS, method),
            "path": _strings(_ROUTES, route),
            "status": pa.array(status, type=pa.int64()),
            "latency_ms": pa.array(latency, type=pa.float64()),
            "bytes_sent": pa.array(bytes_sent.astype(np.int64), type=pa.int64()),
            "trace_id": trace_id,
            "user_id": pa.array(user_id, mask=anonymous, type=pa.int64()),
            "region": _strings(_REGIONS, region),
        }
    )
